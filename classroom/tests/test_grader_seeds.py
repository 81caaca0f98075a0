"""The teacher's seed: a weak one is found from a student's own copy, so it is refused; the grader
makes a strong one; nothing a student receives says anything of it but the numbers drawn."""

from __future__ import annotations

import json
import secrets
import stat

import pytest

from mha_classroom.__main__ import main
from mha_classroom.seeds import MIN_BITS, check_seed, estimate_bits, new_seed_file, read_seed
from mha_classroom.variants import values_for

#: A short word list, as a student would search first (the weak seeds below are in it).
WORDS = ["attention", "softmax", "tensor", "dragon", "monkey", "letmein", "password", "sunshine",
         "qwerty", "football", "iloveyou", "welcome", "teacher", "classroom", "secret", "course"]


def test_a_dictionary_word_seed_is_found_from_a_students_own_copy(small):
    """The attack a weak seed allows: from the numbers in their own copy and their own id, a student
    tries words until one gives their copy, then computes a classmate's."""
    seed = "monkey2024"
    mine = values_for(small, seed, "eve")  # what eve's variant cell shows her
    found = [f"{word}{year}" for word in WORDS for year in range(2000, 2031)
             if values_for(small, f"{word}{year}", "eve") == mine]
    assert found == [seed]  # 496 tries: the seed, and with it every classmate's copy
    assert values_for(small, found[0], "bob") == values_for(small, seed, "bob")
    with pytest.raises(ValueError, match=r"too weak .* about \d+ bits .* under the 128 needed"):
        check_seed(seed, "seed.txt")
    assert check_seed(seed, "seed.txt", force=True) == seed  # for copies already handed out


@pytest.mark.parametrize("seed", ["password", "correct horse battery staple", "Tr0ub4dor&3",
                                  "1234567890" * 6, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                                  "The quick brown fox jumps over the lazy dog 1066 and the cat",
                                  "a teacher's secret 7f3a", "deadbeef" * 8, "19900101"])
def test_weak_seeds_are_estimated_under_128_bits(seed):
    assert estimate_bits(seed) < MIN_BITS


def test_strong_seeds_pass_and_a_new_one_is_256_bits_readable_by_its_owner_only(tmp_path):
    for _ in range(200):
        assert estimate_bits(secrets.token_hex(32)) >= MIN_BITS
        assert estimate_bits(secrets.token_urlsafe(32)) >= MIN_BITS
    seed = new_seed_file(tmp_path / "keys" / "a1.seed")
    path = tmp_path / "keys" / "a1.seed"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text() == seed + "\n" and len(seed) == 64 and int(seed, 16) >= 0
    assert read_seed(path) == seed
    with pytest.raises(FileExistsError):
        new_seed_file(path)  # never overwrites a seed copies were made with


def test_a_seed_file_inside_the_folder_students_receive_is_refused(tmp_path):
    with pytest.raises(ValueError, match="inside .*release.* students receive"):
        new_seed_file(tmp_path / "release" / "class.seed", outside=(tmp_path / "release",))
    (tmp_path / "release").mkdir()
    (tmp_path / "release" / "old.seed").write_text(secrets.token_hex(32))
    with pytest.raises(ValueError, match="inside"):
        read_seed(tmp_path / "release" / "old.seed", outside=(tmp_path / "release",))
    with pytest.raises(ValueError, match="no such seed file"):
        read_seed(tmp_path / "missing.seed")


def test_release_writes_a_strong_seed_and_nothing_in_a_copy_narrows_the_search(small, tmp_path, capsys):
    (tmp_path / "class.txt").write_text("ann\nbob\n")
    seed_file = tmp_path / "private" / "class.seed"
    assert main(["release", str(small.path), "--students", str(tmp_path / "class.txt"),
                 "--seed-file", str(seed_file), "--out", str(tmp_path / "release")]) == 0
    assert "wrote a new secret seed" in capsys.readouterr().out
    seed = seed_file.read_text().strip()
    assert estimate_bits(seed) >= 256
    import hashlib

    traces = [seed, seed[:16], hashlib.sha256(seed.encode()).hexdigest()[:16], str(seed_file),
              seed_file.name, str(len(seed))]
    for student in ("ann", "bob"):
        text = (tmp_path / "release" / student / "small.ipynb").read_text()
        notebook = json.loads(text)
        assert not any(trace in text for trace in traces[:5])
        variant = next(c["source"] for c in notebook["cells"] if c["source"].startswith("# variant"))
        assert "draw:" not in variant  # the numbers only, not even their ranges
    weak = tmp_path / "weak.seed"
    weak.write_text("password1")
    assert main(["release", str(small.path), "--students", str(tmp_path / "class.txt"),
                 "--seed-file", str(weak), "--out", str(tmp_path / "r2")]) == 2
    assert "too weak" in capsys.readouterr().err and not (tmp_path / "r2").exists()
