"""Derived Unicode tables kept between runs (neardup.util.tablecache)."""

import numpy as np

from neardup.text import chars
from neardup.util.tablecache import cache_dir, cached_arrays


def test_built_once_then_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path / "cache"))
    calls = []

    def build():
        calls.append(1)
        return np.arange(5, dtype=np.uint32), np.ones((2, 3), dtype=np.uint8)

    first = cached_arrays("t", build)
    second = cached_arrays("t", build)
    assert len(calls) == 1
    assert all(
        np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(first, second, strict=True)
    )
    assert len(list((tmp_path / "cache").glob("t-py*.npz"))) == 1


def test_a_damaged_or_unwritable_cache_only_means_building_again(tmp_path, monkeypatch):
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path / "cache"))
    cached_arrays("t", lambda: (np.arange(3),))
    for path in cache_dir().glob("t-*.npz"):
        path.write_bytes(b"not a zip")
    assert np.array_equal(cached_arrays("t", lambda: (np.arange(4),))[0], np.arange(4))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(blocker / "sub"))  # cannot be created
    assert np.array_equal(cached_arrays("t", lambda: (np.arange(2),))[0], np.arange(2))


def test_cached_tables_equal_freshly_built_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path))
    chars.word_table.cache_clear()
    chars.fold_table.cache_clear()
    try:
        stored = chars.word_table(), *chars.fold_table()
        chars.word_table.cache_clear()
        chars.fold_table.cache_clear()
        loaded = chars.word_table(), *chars.fold_table()  # from the files now
        built = chars._build_word_table(), *chars._build_fold_table()
        for a, b, c in zip(stored, loaded, built, strict=True):
            assert np.array_equal(a, c)
            assert np.array_equal(b, c)
        assert not loaded[0].flags.writeable
    finally:
        chars.word_table.cache_clear()
        chars.fold_table.cache_clear()
