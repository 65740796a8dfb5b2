"""One conformance suite for every Store: memory, SQLite and PostgreSQL."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from neardup.collection import CollectionMeta, DuplicateIdError, MemoryStore, SQLiteStore, Store
from neardup.collection.persistent import Collection
from neardup.collection.postgres_store import PostgresStore
from neardup.collection.store import STORE_SCHEMA, StoredDoc
from neardup.dedup import DedupConfig
from neardup.errors import ConfigError, InputError
from neardup.fingerprints.shingles import fingerprint_batch
from neardup.io.jsonvalues import MAX_ID_BYTES
from textgen import edit, text

META = CollectionMeta({"method": "full", "threshold": 0.5}, "0123456789abcdef", 1)

# name -> (factory making the store kept under tmp_path or in the test's fixtures, whether a
# new store object made by the same factory in the same test sees the data again).
STORES: dict[str, tuple[Callable[[Path, pytest.FixtureRequest], Store], bool]] = {
    "memory": (lambda tmp, request: MemoryStore(), False),
    "sqlite": (lambda tmp, request: SQLiteStore(tmp / "collection.db"), True),
    "postgres": (lambda tmp, request: PostgresStore(request.getfixturevalue("postgres_url")), True),
}


@pytest.fixture(params=list(STORES))
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[], Store]:
    """Makes a new object of the test's store (the same data for a persistent kind)."""
    return lambda: STORES[kind][0](tmp_path, request)


@pytest.fixture
def store(make: Callable[[], Store]) -> Iterator[Store]:
    st = make()
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


def test_new_store_has_no_meta(make: Callable[[], Store]) -> None:
    st = make()
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


def keys(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.uint64)


def test_candidates_oldest_first_and_capped(store: Store) -> None:
    store.add([doc("b", [1])])
    store.add([doc("a", [1, 2]), doc("c", [1, 2, BIG])])
    assert store.candidates(keys(1)) == [["b", "a", "c"]]
    assert store.candidates(keys(1, 2, 7, 1, BIG), limit=2) == [
        ["b", "a"],
        ["a", "c"],
        [],
        ["b", "a"],
        ["c"],
    ]
    assert store.candidates(keys(1), limit=None) == [["b", "a", "c"]]
    assert store.candidates(keys(1), limit=1) == [["b"]]
    store.add([doc("b", [1])], upsert=True)  # a replaced document is the newest
    assert store.candidates(keys(1), limit=2) == [["a", "c"]]


def test_recent_newest_first_limited_and_after_remove_and_upsert(store: Store) -> None:
    assert store.recent(10) == []
    store.add([doc("a", [1]), doc("b", [2])])
    store.add([doc("c", [1]), doc("d", [3])])
    assert store.recent(10) == ["d", "c", "b", "a"]  # within a batch, later is newer
    assert store.recent(2) == ["d", "c"]
    assert store.recent(0) == []
    store.remove(["d", "b"])
    assert store.recent(10) == ["c", "a"]
    store.add([doc("a", [5])], upsert=True)  # a replaced document is the newest
    assert store.recent(10) == ["a", "c"]
    store.add([doc("e", [1])])  # after the newest was removed and replaced
    store.remove(["e"])
    store.add([doc("f", [1]), doc("c", [2])], upsert=True)
    assert store.recent(3) == ["c", "f", "a"]
    with store.transaction():  # a transaction's reads see its writes
        store.add([doc("g", [1])])
        assert store.recent(1) == ["g"]


def test_transaction_commits_and_sees_its_writes(store: Store) -> None:
    with store.transaction():
        store.add([doc("a", [1])])
        assert store.count() == 1
        assert [d.id for d in store.get(["a"])] == ["a"]
        assert store.candidates(keys(1)) == [["a"]]
        store.remove(["a"])
        store.add([doc("b", [2])])
    assert store.count() == 1
    assert store.candidates(keys(1, 2)) == [[], ["b"]]


def test_transaction_rolls_back_on_error(store: Store) -> None:
    store.add([doc("a", [1])])
    store.update_doc_freqs(keys(5), np.array([1]), 1)
    store.update_shingle_counts(keys(5, 7), np.array([2, 1]))

    def fail() -> None:
        with store.transaction():
            store.add([doc("b", [2])])
            store.remove(["a"])
            store.update_doc_freqs(keys(5, 6), np.array([1, 1]), 1)
            store.update_shingle_counts(keys(5, 6, 7), np.array([1, 1, -1]))
            assert store.shingle_counts(keys(5, 6, 7)).tolist() == [3, 1, 0]
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        fail()
    assert store.count() == 1
    assert [d.id for d in store.get(["a", "b"])] == ["a"]
    assert store.candidates(keys(1, 2)) == [["a"], []]
    freqs = store.doc_freqs(keys(5, 6))
    assert (freqs.df.tolist(), freqs.n_docs) == ([1, 0], 1)
    assert store.shingle_counts(keys(5, 6, 7)).tolist() == [2, 0, 1]


def test_nested_transaction_joins_the_outer(store: Store) -> None:
    with store.transaction():
        store.add([doc("a", [1])])
        with store.transaction():
            store.add([doc("b", [1])])
        assert store.count() == 2
    assert store.count() == 2

    def fail_inside() -> None:
        with store.transaction():
            store.add([doc("c", [1])])
            with store.transaction():
                store.add([doc("d", [1])])
                raise RuntimeError("inner")

    with pytest.raises(RuntimeError, match="inner"):
        fail_inside()
    assert store.candidates(keys(1)) == [["a", "b"]]


def test_failed_write_in_a_transaction_keeps_the_rest(store: Store) -> None:
    with store.transaction():
        store.add([doc("a", [1])])
        with pytest.raises(DuplicateIdError):
            store.add([doc("b", [2]), doc("a", [3])])
        store.add([doc("c", [4])])
    assert store.candidates(keys(1, 2, 3, 4)) == [["a"], [], [], ["c"]]
    assert store.count() == 2


def test_doc_freqs(store: Store) -> None:
    empty = store.doc_freqs(keys())
    assert (empty.df.dtype, empty.df.size, empty.n_docs, empty.min_df) == (np.int64, 0, 0, 0)
    store.update_doc_freqs(keys(5, BIG, 7), np.array([2, 1, 3]), 3)
    freqs = store.doc_freqs(keys(BIG, 5, 9, 5))
    assert freqs.df.dtype == np.int64
    assert (freqs.df.tolist(), freqs.n_docs, freqs.min_df) == ([1, 2, 0, 2], 3, 1)
    store.update_doc_freqs(keys(BIG, 5), np.array([-1, -1]), -1)  # BIG reaches 0: gone
    freqs = store.doc_freqs(keys(BIG, 5, 7))
    assert (freqs.df.tolist(), freqs.n_docs, freqs.min_df) == ([0, 1, 3], 2, 1)
    store.update_doc_freqs(keys(5, 7), np.array([-1, -3]), -2)
    freqs = store.doc_freqs(keys(5, 7))
    assert (freqs.df.tolist(), freqs.n_docs, freqs.min_df) == ([0, 0], 0, 0)


def test_shingle_counts(store: Store) -> None:
    empty = store.shingle_counts(keys())
    assert (empty.dtype, empty.size) == (np.int64, 0)
    assert store.shingle_counts(keys(5, BIG)).tolist() == [0, 0]
    store.update_shingle_counts(keys(5, BIG, 7, 5), np.array([1, 2, 3, 1]))  # 5 given twice
    counts = store.shingle_counts(keys(BIG, 5, 9, 5, 7))
    assert counts.dtype == np.int64
    assert counts.tolist() == [2, 2, 0, 2, 3]
    with store.transaction():  # inside the caller's transaction, several calls add up
        store.update_shingle_counts(keys(BIG, 5), np.array([-2, -1]))
        store.update_shingle_counts(keys(5, 9), np.array([-1, 1]))
    assert store.shingle_counts(keys(BIG, 5, 9, 7)).tolist() == [0, 0, 1, 3]
    store.update_shingle_counts(keys(BIG), np.array([1]))  # a count that reached 0 is gone
    assert store.shingle_counts(keys(BIG, 5)).tolist() == [1, 0]
    store.update_shingle_counts(keys(), np.array([], np.int64))


def test_counted_flag_round_trip(store: Store) -> None:
    counted = StoredDoc("c", None, b"sig", keys(3, BIG), keys(1), counted=True)
    store.add([counted, doc("u", [1])])
    assert [(d.id, d.counted) for d in store.get(["u", "c"])] == [("u", False), ("c", True)]
    store.add([doc("c", [2])], upsert=True)
    assert store.get(["c"])[0].counted is False


def test_meta_keeps_the_store_layout(make: Callable[[], Store]) -> None:
    st = make()
    st.create(CollectionMeta({"method": "full"}, "0123456789abcdef", 1))
    meta = st.meta()
    assert meta is not None
    assert meta.schema == STORE_SCHEMA
    st.close()


FOOTER = " ".join(f"footer{i}" for i in range(40))


def recount(coll: Collection, ids: list[str]) -> dict[int, int]:
    """The holder counts the stored counted documents among ``ids`` make, from scratch."""
    counts: dict[int, int] = {}
    for d in coll.store.get(ids):
        for feature in d.prints.tolist() if d.counted else []:
            counts[feature] = counts.get(feature, 0) + 1
    return counts


def stored_counts(coll: Collection, features: list[int]) -> dict[int, int]:
    held = coll.store.shingle_counts(np.array(features, dtype=np.uint64)).tolist()
    return {f: n for f, n in zip(features, held, strict=True) if n}


def test_collection_counts_follow_add_remove_upsert_and_rollback(
    make: Callable[[], Store],
) -> None:
    coll = Collection.create(make(), DedupConfig(template_df=3))
    bodies = {f"m{i}": f"{text(500 + i, 30)} {FOOTER}" for i in range(5)}
    bodies["copy"] = edit(bodies["m0"], 9, 1)  # a near copy of m0: not counted
    coll.add([(i, b, None) for i, b in bodies.items()][:3])
    coll.add([(i, b, None) for i, b in bodies.items()][3:])
    everyone = [*bodies, "new"]
    flags = {d.id: d.counted for d in coll.store.get(everyone)}
    assert flags == {"m0": True, "m1": True, "m2": True, "m3": True, "m4": True, "copy": False}
    features = sorted({f for d in coll.store.get(everyone) for f in d.prints.tolist()})
    assert stored_counts(coll, features) == recount(coll, everyone)
    footer = fingerprint_batch([FOOTER], coll.config.text)[0]
    assert coll.store.shingle_counts(footer).tolist() == [5] * 38  # the copy counted once

    coll.remove(["m1", "copy", "nope"])
    assert stored_counts(coll, features) == recount(coll, everyone)
    coll.add([("m2", text(600, 30), None), ("new", bodies["m1"], None)], upsert=True)
    features += coll.store.get(["m2"])[0].prints.tolist()
    assert stored_counts(coll, features) == recount(coll, everyone)
    before = stored_counts(coll, features)
    with pytest.raises(DuplicateIdError):  # rolled back: counts too
        coll.add([("m9", text(700, 30) + " " + FOOTER, None), ("m3", "anything", None)])
    assert stored_counts(coll, features) == before
    coll.remove(everyone)
    assert stored_counts(coll, features) == {}
    coll.store.close()


# Records no store may be handed: refused by the collection before the store is touched, the
# same on every store (PostgreSQL text cannot hold NUL; an id with a control character or
# too long could not be read or removed by URL).
UNSTORABLE = {
    "nul in id": ("a\x00b", "some words here", None),
    "nul in text": ("ok", "some \x00 words", None),
    "nul in meta key": ("ok", "some words", {"k\x00": 1}),
    "nul in meta value": ("ok", "some words", {"k": ["x", {"deep": "v\x00"}]}),
    "surrogate in meta": ("ok", "some words", {"k": "\ud800"}),
    "nan in meta": ("ok", "some words", {"k": float("nan")}),
    "newline in id": ("a\nb", "some words", None),
    "id too long": ("é" * (MAX_ID_BYTES // 2 + 1), "some words", None),
}


@pytest.mark.parametrize("name", list(UNSTORABLE))
def test_unstorable_records_are_refused_before_the_store_is_touched(
    make: Callable[[], Store], name: str
) -> None:
    coll = Collection.create(make(), DedupConfig())
    coll.add([("first", text(1, 30), {"n": 1})])
    with pytest.raises(InputError, match=r"NUL|control|longer|surrogate|finite"):
        coll.add([("second", text(2, 30), None), UNSTORABLE[name]])
    assert coll.store.count() == 1
    assert coll.store.get(["second"]) == []
    coll.add([("third", text(3, 30), None)])  # the store still works (no broken transaction)
    assert coll.store.count() == 2
    coll.store.close()


def test_the_longest_id_and_every_printable_character_are_stored_and_read_back(
    make: Callable[[], Store],
) -> None:
    longest = "é" * (MAX_ID_BYTES // 2)
    odd = "a/b c?d#e%f\\g'h\"i😀"
    coll = Collection.create(make(), DedupConfig())
    coll.add([(longest, text(1, 30), None), (odd, text(2, 30), {"ключ": "значение"})])
    assert [d.id for d in coll.store.get([longest, odd])] == [longest, odd]
    assert coll.get(odd).meta == {"ключ": "значение"}
    assert coll.remove([longest]) == [longest]
    coll.store.close()


def test_threads_lose_no_document(store: Store) -> None:
    def add_many(thread: int) -> None:
        for i in range(50):
            store.add([doc(f"t{thread}-{i}", [i, 1000 + thread])])

    run_threads(add_many, 4)
    assert store.count() == 200
    assert [len(ids) for ids in store.candidates(keys(0, 49, 1000, 1003))] == [4, 4, 50, 50]


def test_transactions_serialise_threads(store: Store) -> None:
    """Check-then-insert inside transaction() sees every document committed before it."""

    def add_next(thread: int) -> None:
        for _ in range(10):
            with store.transaction():
                n = store.count()
                store.add([doc(f"n{n}", [n])])

    run_threads(add_next, 4)
    assert store.count() == 40
    assert len(store.get([f"n{n}" for n in range(40)])) == 40


def run_threads(work: Callable[[int], None], n: int) -> None:
    """Run ``work(0..n-1)`` in n threads at once; re-raise the first failure."""
    errors: list[BaseException] = []

    def guarded(thread: int) -> None:
        try:
            work(thread)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


PERSISTENT = [name for name, (_, persistent) in STORES.items() if persistent]


@pytest.mark.parametrize("kind", PERSISTENT)
def test_reopen_sees_the_data(make: Callable[[], Store]) -> None:
    first = make()
    first.create(META)
    a = doc("a", [1, BIG], {"k": "v"})
    first.add([a, doc("b", [1])])
    first.remove(["b"])
    first.update_doc_freqs(np.array([BIG], np.uint64), np.array([3]), 4)
    first.update_shingle_counts(np.array([BIG, 5], np.uint64), np.array([2, 1]))
    first.add([StoredDoc("c", None, b"s", keys(5), keys(5), counted=True)])
    second = make()
    assert second.meta() == META
    assert second.count() == 2
    assert same(second.get(["a"])[0], a)
    assert [d.counted for d in second.get(["a", "c"])] == [False, True]
    assert second.shingle_counts(np.array([5, BIG], np.uint64)).tolist() == [1, 2]
    assert second.candidates(np.array([BIG], dtype=np.uint64)) == [["a"]]
    assert second.recent(5) == ["c", "a"]
    freqs = second.doc_freqs(np.array([BIG], np.uint64))
    assert (freqs.df.tolist(), freqs.n_docs, freqs.min_df) == ([3], 4, 3)
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


def test_sqlite_of_an_older_layout_is_refused_in_one_line(tmp_path: Path) -> None:
    st = SQLiteStore(tmp_path / "c.db")
    st.create(META)
    st.close()
    db = sqlite3.connect(tmp_path / "c.db")
    db.execute("DELETE FROM meta WHERE name = 'schema'")  # as written before layout 2
    db.commit()
    db.close()
    with pytest.raises(ConfigError, match=r"store layout 1; .* rebuild the collection") as err:
        SQLiteStore(tmp_path / "c.db")
    assert "\n" not in str(err.value)
