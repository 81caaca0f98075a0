import importlib.metadata

import mha


def test_version_matches_installed_metadata():
    assert mha.__version__ == importlib.metadata.version("mha-course")
