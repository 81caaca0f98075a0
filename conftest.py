"""pytest's view of the checkout, and of the unpacked source distribution: a bare ``pytest`` runs there.

``pyproject.toml`` collects ``tests``, ``mha`` (doctests) and ``classroom``. The course layers' doctests
need their extras (``mha-course[plot]``, ``[widgets]``, ``[pretrained]``): where an extra is missing, as
in a fresh ``pip install .`` of the sdist, those folders are left out instead of failing to import.
"""

from __future__ import annotations

import importlib.util

#: Folder -> the modules its code imports on load.
EXTRAS = {
    "mha/plotting": ("matplotlib",),
    "mha/explorers": ("matplotlib", "ipywidgets"),
    "mha/pretrained": ("safetensors", "tokenizers"),
}

collect_ignore = [folder for folder, needs in EXTRAS.items()
                  if not all(importlib.util.find_spec(name) for name in needs)]
