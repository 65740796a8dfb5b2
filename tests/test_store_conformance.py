"""One conformance suite for every Store (memory, SQLite; PostgreSQL: add one fixture param)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from neardup.errors import ConfigError
from neardup.store import CollectionMeta, DuplicateIdError, MemoryStore, SQLiteStore, Store
from neardup.store.base import StoredDoc

META = CollectionMeta({"method": "full", "threshold": 0.5}, "0123456789abcdef", 1)

# name -> (factory making the store kept under tmp_path, whether a new store object made by
# the same factory sees the data again). PostgreSQL is one more line here.
STORES: dict[str, tuple[Callable[[Path], Store], bool]] = {
    "memory": (lambda tmp: MemoryStore(), False),
    "sqlite": (lambda tmp: SQLiteStore(tmp / "collection.db"), True),
}


@pytest.fixture(params=list(STORES))
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def store(kind: str, tmp_path: Path) -> Iterator[Store]:
    st = STORES[kind][0](tmp_path)
    st.create(META)
    yield st
    st.close()


def doc(doc_id: str, keys: list[int], meta: dict | None = None) -> StoredDoc:
    prints = np.array(sorted({k * 7 % 2**64 for k in keys}), dtype=np.uint64)
    sig = b"ND" + doc_id.encode()
    return StoredDoc(doc_id, meta, sig, prints, np.array(keys, dtype=np.uint64))


def same(a: StoredDoc, b: StoredDoc) -> bool:
    return (
        a.id == b.id
        and a.meta == b.meta
        and a.signature == b.signature
        and np.array_equal(a.prints, b.prints)
        and sorted(a.keys.tolist()) == sorted(b.keys.tolist())
    )


BIG = 2**64 - 1  # uint64 keys above int64's range must survive every store


def test_is_a_store(store: Store) -> None:
    assert isinstance(store, Store)


def test_meta_round_trip(store: Store) -> None:
    assert store.meta() == META
    with pytest.raises(ConfigError):
        store.create(META)


def test_new_store_has_no_meta(kind: str, tmp_path: Path) -> None:
    st = STORES[kind][0](tmp_path)
    assert st.meta() is None
    assert st.count() == 0
    st.close()


def test_add_get_remove_count(store: Store) -> None:
    a, b = doc("a", [1, 2, BIG], {"url": "x", "n": [1, 2]}), doc("b", [2, 3])
    store.add([a, b])
    assert store.count() == 2
    got = store.get(["b", "missing", "a"])
    assert [d.id for d in got] == ["b", "a"]
    assert same(got[0], b)
    assert same(got[1], a)
    assert got[1].prints.dtype == np.uint64
    assert store.remove(["a", "missing"]) == ["a"]
    assert store.count() == 1
    assert store.get(["a"]) == []
    assert store.candidates(np.array([1, 2], dtype=np.uint64)) == [[], ["b"]]


def test_empty_document_and_batch(store: Store) -> None:
    store.add([])
    store.add([doc("e", [])])
    assert store.count() == 1
    assert store.get(["e"])[0].prints.size == 0


def test_candidates(store: Store) -> None:
    store.add([doc("a", [1, 2, BIG]), doc("b", [2, 3]), doc("c", [4])])
    keys = np.array([2, 5, BIG, 1, 2], dtype=np.uint64)
    assert [sorted(ids) for ids in store.candidates(keys)] == [
        ["a", "b"],
        [],
        ["a"],
        ["a"],
        ["a", "b"],
    ]
    assert store.candidates(np.empty(0, np.uint64)) == []


def test_duplicate_id_is_an_error_naming_it(store: Store) -> None:
    store.add([doc("a", [1])])
    with pytest.raises(DuplicateIdError, match="'a'"):
        store.add([doc("new", [9]), doc("a", [2])])
    assert store.count() == 1
    assert store.candidates(np.array([9, 2], dtype=np.uint64)) == [[], []]


def test_upsert_replaces(store: Store) -> None:
    store.add([doc("a", [1], {"v": 1})])
    store.add([doc("a", [2], {"v": 2}), doc("b", [2])], upsert=True)
    assert store.count() == 2
    assert store.get(["a"])[0].meta == {"v": 2}
    found = store.candidates(np.array([1, 2], dtype=np.uint64))
    assert found[0] == []
    assert sorted(found[1]) == ["a", "b"]


@pytest.mark.parametrize("upsert", [False, True])
def test_batch_is_all_or_nothing(store: Store, upsert: bool) -> None:
    store.add([doc("a", [1])])
    with pytest.raises(DuplicateIdError, match="'x'"):
        store.add([doc("x", [5]), doc("y", [6]), doc("x", [7])], upsert=upsert)
    assert store.count() == 1
    assert store.get(["x", "y"]) == []
    assert store.candidates(np.array([5, 6, 7], dtype=np.uint64)) == [[], [], []]


PERSISTENT = [name for name, (_, persistent) in STORES.items() if persistent]


@pytest.mark.parametrize("persistent_kind", PERSISTENT)
def test_reopen_sees_the_data(persistent_kind: str, tmp_path: Path) -> None:
    factory = STORES[persistent_kind][0]
    first = factory(tmp_path)
    first.create(META)
    a = doc("a", [1, BIG], {"k": "v"})
    first.add([a, doc("b", [1])])
    first.remove(["b"])
    second = factory(tmp_path)
    assert second.meta() == META
    assert second.count() == 1
    assert same(second.get(["a"])[0], a)
    assert second.candidates(np.array([BIG], dtype=np.uint64)) == [["a"]]
    first.close()
    second.close()


def test_sqlite_layout(tmp_path: Path) -> None:
    st = SQLiteStore(tmp_path / "c.db")
    st.create(META)
    st.add([doc("a", [BIG])])
    st.close()
    db = sqlite3.connect(tmp_path / "c.db")
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert db.execute("SELECT key FROM keys").fetchall() == [(-1,)]
    db.close()
