import importlib.metadata

import mha


def test_version_matches_installed_metadata():
    assert mha.__version__ == importlib.metadata.version("mha-course")


def test_no_merge_conflict_markers_are_committed():
    import re
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True)
    marker = re.compile(r"^(<{7} |>{7} |={7}$)", re.MULTILINE)
    text_suffixes = {".py", ".md", ".yml", ".toml", ".txt", ".cfg", ".js", ".css", ".json"}
    offenders = []
    for name in tracked.stdout.splitlines():
        path = root / name
        if path.suffix in text_suffixes and path.is_file():
            if marker.search(path.read_text(encoding="utf8", errors="replace")):
                offenders.append(name)
    assert offenders == []
