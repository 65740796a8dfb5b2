"""PostgreSQL-only store behaviour: connection errors, several pools and processes, layout.

The protocol itself is tested for every store in test_store_conformance.py.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading
import time
from multiprocessing.synchronize import Barrier

import numpy as np
import psycopg
import pytest

from neardup.collection.postgres_store import PostgresStore
from neardup.collection.store import CollectionMeta, StoredDoc
from neardup.collection.store_url import open_store
from neardup.errors import ConfigError, MissingDependencyError
from pgserver import PostgresServer, free_port

META = CollectionMeta({"method": "full"}, "0123456789abcdef", 1)
BIG = 2**64 - 1


def doc(doc_id: str, keys: list[int], meta: dict | None = None) -> StoredDoc:
    prints = np.array(sorted(set(keys)), dtype=np.uint64)
    return StoredDoc(doc_id, meta, doc_id.encode(), prints, np.array(keys, dtype=np.uint64))


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://neardup:s3cret-pw@127.0.0.1:{port}/db",
        "postgresql://neardup@127.0.0.1:{port}/db?password=s3cret-pw",
        "postgresql://neardup:s3cret-pw@127.0.0.1:{port}/db?bogus=1",
        "postgresql://neardup:s3cret-pw@[127.0.0.1:{port}/db",  # unparsable
    ],
)
def test_unusable_url_is_a_config_error_without_password(url: str) -> None:
    url = url.format(port=free_port())
    with pytest.raises(ConfigError, match=r"127\.0\.0\.1") as caught:
        PostgresStore(url)
    assert "s3cret" not in str(caught.value)
    assert "***" in str(caught.value)


def test_missing_database_is_a_config_error(postgres_server: PostgresServer) -> None:
    with pytest.raises(ConfigError, match="no_such_db"):
        PostgresStore(postgres_server.database_url("no_such_db"))


def test_open_store_opens_postgres(postgres_url: str) -> None:
    store = open_store(postgres_url)
    assert isinstance(store, PostgresStore)
    store.close()


def test_missing_psycopg_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # makes the import fail
    with pytest.raises(MissingDependencyError, match=r"neardup\[postgres\]"):
        PostgresStore("postgresql://nobody@127.0.0.1:1/db")


def test_layout(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.create(META)
    store.add([doc("a", [BIG, 2, 2])])
    store.close()
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT key, doc FROM neardup_keys").fetchall() == [(-1, 1), (2, 1)]
        (prints,) = conn.execute("SELECT prints FROM neardup_docs").fetchone()
        assert prints == np.array([2, BIG], "<u8").tobytes()
        names = [r[0] for r in conn.execute("SELECT indexname FROM pg_indexes")]
        assert "neardup_idf_df" in names


def test_tables_follow_the_search_path(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA other")
    elsewhere = f"{postgres_url}?options=-csearch_path%3Dother"
    here, there = PostgresStore(postgres_url), PostgresStore(elsewhere)
    here.add([doc("a", [1])])
    there.add([doc("b", [1]), doc("c", [1])])
    assert (here.count(), there.count()) == (1, 2)
    assert there.candidates(np.array([1], np.uint64)) == [["b", "c"]]
    here.close()
    there.close()


def test_two_pools_see_each_others_writes(postgres_url: str) -> None:
    first, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
    first.create(META)
    assert second.meta() == META
    second.add([doc("a", [1])])
    first.add([doc("b", [1])])
    assert first.candidates(np.array([1], np.uint64)) == [["a", "b"]]
    assert second.remove(["b"]) == ["b"]
    assert first.count() == 1
    first.update_doc_freqs(np.array([7], np.uint64), np.array([2]), 2)
    assert second.doc_freqs(np.array([7], np.uint64)).df.tolist() == [2]
    first.close()
    second.close()


def test_open_transaction_blocks_writers_not_readers(postgres_url: str) -> None:
    first, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
    done = threading.Event()

    def write() -> None:
        second.add([doc("b", [1])])
        done.set()

    with first.transaction():
        first.add([doc("a", [1])])
        writer = threading.Thread(target=write)
        writer.start()
        assert not done.wait(0.5)  # waits for the lock
        assert second.count() == 0  # reads go on, seeing only committed data
    writer.join(10)
    assert done.is_set()
    assert second.candidates(np.array([1], np.uint64)) == [["a", "b"]]
    first.close()
    second.close()


BATCHES, BATCH = 10, 20


def add_counted_batches(url: str, worker: int, start: Barrier) -> None:
    """Add BATCHES batches, each doc recording the count its transaction saw before it."""
    store = PostgresStore(url, max_size=2)
    start.wait(60)  # both processes write at the same time
    try:
        for batch in range(BATCHES):
            with store.transaction():
                seen = store.count()
                time.sleep(0.002)  # widen the window another writer could slip into
                store.add(
                    [doc(f"w{worker}-{batch}-{i}", [i], {"seen": seen}) for i in range(BATCH)]
                )
    finally:
        store.close()


def test_writers_in_two_processes_are_serialised(postgres_url: str) -> None:
    spawn = multiprocessing.get_context("spawn")  # no pool threads forked mid-flight
    start = spawn.Barrier(2)
    workers = [
        spawn.Process(target=add_counted_batches, args=(postgres_url, w, start)) for w in (0, 1)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [w.exitcode for w in workers] == [0, 0]
    store = PostgresStore(postgres_url)
    total = 2 * BATCHES * BATCH
    assert store.count() == total
    ids = [f"w{w}-{b}-{i}" for w in (0, 1) for b in range(BATCHES) for i in range(BATCH)]
    seen = sorted({d.meta["seen"] for d in store.get(ids)})
    assert seen == list(range(0, total, BATCH))  # every batch saw all the batches before it
    assert [len(ids) for ids in store.candidates(np.array([0, 19], np.uint64))] == [20, 20]
    store.close()


def test_database_of_an_older_layout_is_refused_in_one_line(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.create(META)
    store.close()
    with psycopg.connect(postgres_url) as conn:  # as written before layout 2
        conn.execute("DELETE FROM neardup_meta WHERE name = 'schema'")
        conn.execute("DROP TABLE neardup_shingles")
        conn.execute("ALTER TABLE neardup_docs DROP COLUMN counted")
    with pytest.raises(ConfigError, match=r"store layout 1; .* rebuild the collection") as err:
        PostgresStore(postgres_url)
    assert "\n" not in str(err.value)
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT to_regclass('neardup_shingles')").fetchone() == (None,)


def test_older_tables_without_a_collection_are_brought_up_to_date(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    with psycopg.connect(postgres_url) as conn:
        conn.execute("DROP TABLE neardup_shingles")
        conn.execute("ALTER TABLE neardup_docs DROP COLUMN counted")
    store = PostgresStore(postgres_url)
    store.create(META)
    store.add(
        [StoredDoc("a", None, b"a", np.array([1], np.uint64), np.array([1], np.uint64), True)]
    )
    store.update_shingle_counts(np.array([1], np.uint64), np.array([1]))
    assert store.get(["a"])[0].counted
    assert store.shingle_counts(np.array([1], np.uint64)).tolist() == [1]
    store.close()
