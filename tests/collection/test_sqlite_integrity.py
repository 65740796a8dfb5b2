"""A damaged SQLite collection is reported, never written to; SQLite errors are one InputError."""

from __future__ import annotations

import os

import numpy as np
import pytest

from neardup.collection import SQLiteStore
from neardup.collection.persistent import Collection
from neardup.dedup import DedupConfig
from neardup.errors import InputError

TEXT = "the night ferry left the harbour an hour late because a storm closed the channel"


def _collection(path) -> None:
    store = SQLiteStore(path)
    docs = [(f"d{i}", f"{TEXT} {i} " * 20, {"n": i}) for i in range(300)]
    Collection.create(store, DedupConfig()).add(docs)
    store.close()


def test_a_damaged_file_is_refused_on_opening_and_left_as_it_was(tmp_path):
    path = tmp_path / "c.db"
    _collection(path)
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.seek(size // 2)
        fh.write(os.urandom(8192))
    before = path.read_bytes()
    with pytest.raises(InputError, match="damaged") as caught:
        SQLiteStore(path)
    assert str(path) in str(caught.value)
    assert "\n" not in str(caught.value)
    assert path.read_bytes() == before


def test_check_finds_nothing_in_a_sound_file(tmp_path):
    path = tmp_path / "c.db"
    _collection(path)
    store = SQLiteStore(path)
    try:
        assert store.check() == []
    finally:
        store.close()


def test_sqlite_errors_met_later_are_one_input_error(tmp_path):
    path = tmp_path / "c.db"
    _collection(path)
    store = SQLiteStore(path)
    try:
        store._db().execute("DROP TABLE keys")  # a file broken behind the store's back
        with pytest.raises(InputError, match="no such table"):
            store.candidates(np.array([1, 2], dtype=np.uint64))
    finally:
        store.close()
