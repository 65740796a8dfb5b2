import sys

import pytest

from neardup.errors import MissingDependencyError
from neardup.util import extras


def test_present_modules_load():
    assert extras.pyarrow("x").__name__ == "pyarrow"
    assert extras.zstandard("x").__name__ == "zstandard"


def test_missing_module_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)  # makes the import fail
    with pytest.raises(MissingDependencyError, match=r"pip install 'neardup\[zstd\]'"):
        extras.zstandard("reading .zst files")
