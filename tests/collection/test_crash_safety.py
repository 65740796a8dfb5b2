"""A killed writer loses only its unfinished batch; concurrent writers lose nothing.

Both claims are checked the way they happen to users: real ``neardup index add`` processes on
a real SQLite file and a real PostgreSQL server, one of them killed with SIGKILL mid-batch —
while its rows are being written, not before: on SQLite the writer announces (from SQLite's
statement trace, nothing in neardup) that it has inserted 1,000 rows of its batch and waits to
be killed; on PostgreSQL the kill comes while the server runs the batch's INSERT of document
rows or COPY of index keys. A store that committed each document on its own fails this test
(checked by hand once against such a store, on both).
"""

import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from neardup.collection.persistent import Collection
from neardup.collection.store_url import open_store
from neardup.dedup import DedupConfig

WORDS = np.array([f"w{i}" for i in range(2000)])
SHARED_TEXT = " ".join(f"shared{i}" for i in range(80))


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "collection.db")
    return request.getfixturevalue("postgres_url")


def texts(seed: int, n: int, words: int = 60) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(row) for row in rng.choice(WORDS, (n, words))]


def write_jsonl(path, ids, bodies) -> str:
    with open(path, "w", encoding="utf-8") as out:
        for doc_id, text in zip(ids, bodies, strict=True):
            out.write(json.dumps({"id": doc_id, "text": text}) + "\n")
    return str(path)


def create(db_url: str, docs: int = 0) -> None:
    store = open_store(db_url)
    try:
        coll = Collection.create(store, DedupConfig(method="minhash", threshold=0.8))
        coll.add([(f"base{i}", t, None) for i, t in enumerate(texts(1, docs))])
    finally:
        store.close()


def stored(db_url: str, ids: list[str]) -> tuple[int, list[str]]:
    """The document count and which of ``ids`` are stored."""
    store = open_store(db_url)
    try:
        return store.count(), [d.id for d in store.get(ids)]
    finally:
        store.close()


ROWS_BEFORE_KILL = 1000
WRITING = "test: rows are being written"
# neardup index add, announcing on stderr (then waiting to be killed) when the batch has
# inserted ROWS_BEFORE_KILL document rows: sqlite3's trace callback sees every row executed
_PAUSING_MAIN = f"""
import sqlite3, sys, time
connect = sqlite3.connect
def traced(*args, **kwargs):
    db = connect(*args, **kwargs)
    rows = 0
    def trace(statement):
        nonlocal rows
        if statement.lstrip().upper().startswith("INSERT INTO DOCS"):
            rows += 1
            if rows == {ROWS_BEFORE_KILL}:
                print({WRITING!r}, file=sys.stderr, flush=True)
                time.sleep(600)
    db.set_trace_callback(trace)
    return db
sqlite3.connect = traced
from neardup.cli import main
main()
"""


def add_process(db_url: str, path: str, batch: int, pause: bool = False) -> subprocess.Popen:
    command = ["index", "add", "--db", db_url, path, "--batch-size", str(batch), "--json"]
    main = _PAUSING_MAIN if pause else "from neardup.cli import main; main()"
    return subprocess.Popen(
        [sys.executable, "-c", main, *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_rows_written(db_url: str, proc: subprocess.Popen) -> None:
    """Return once the writer ``proc`` is inside its batch with rows written (uncommitted)."""
    if not db_url.startswith("postgresql://"):
        line = proc.stderr.readline()  # the announcement, or "" if the process ended
        assert line.strip() == WRITING, line + proc.stderr.read()
        return
    import psycopg

    deadline = time.monotonic() + 120
    with psycopg.connect(db_url, autocommit=True) as db:
        while True:
            (writing,) = db.execute(  # the batch's document rows or index keys going in
                "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                "AND pid <> pg_backend_pid() AND (query LIKE '%INSERT INTO neardup_docs%' "
                "OR query LIKE 'COPY neardup_keys%')"
            ).fetchone()
            if writing:
                return
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "the writer never wrote a row"
            time.sleep(0.01)


def test_sigkill_mid_batch_leaves_the_store_as_before(db_url, tmp_path):
    create(db_url, docs=100)
    ids = [f"big{i}" for i in range(30_000)]
    big = write_jsonl(tmp_path / "big.jsonl", ids, texts(2, len(ids)))
    proc = add_process(db_url, big, batch=len(ids), pause=True)
    wait_for_rows_written(db_url, proc)
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert out == ""  # the batch never committed (results print after the commit)

    assert stored(db_url, ids[:1] + ids[-1:] + ["base0"]) == (100, ["base0"])
    if not db_url.startswith("postgresql://"):
        db = sqlite3.connect(db_url)
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        db.close()
    store = open_store(db_url)  # the collection works on
    try:
        [res] = Collection.open(store).add([("after", texts(1, 1)[0], None)])
        assert [d.id for d in res.duplicates] == ["base0"]
        assert store.count() == 101
    finally:
        store.close()


def test_concurrent_clients_lose_nothing_and_see_each_other(db_url, tmp_path):
    """Four processes add 500 documents each at once; each also adds a copy of one shared
    text. Every document is stored, and since each add checks and inserts in one
    transaction, the copies are reported as pairs exactly once: 0 + 1 + 2 + 3 = 6."""
    create(db_url)
    clients = 4
    procs = []
    for c in range(clients):
        ids = [f"c{c}-{i}" for i in range(500)] + [f"shared-{c}"]
        bodies = [*texts(10 + c, 500), SHARED_TEXT]
        path = write_jsonl(tmp_path / f"client{c}.jsonl", ids, bodies)
        procs.append(add_process(db_url, path, batch=len(ids)))
    reported = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        for line in out.splitlines():
            row = json.loads(line)
            reported += [(row["id"], d["id"]) for d in row["duplicates"]]
    assert stored(db_url, [])[0] == clients * 501
    copies = [pair for pair in reported if pair[0].startswith("shared-")]
    assert len(copies) == clients * (clients - 1) // 2
    assert all(b.startswith("shared-") for _, b in copies)
    assert len(reported) == len(copies)  # the random texts match nothing


def test_threads_sharing_one_collection_lose_nothing(db_url):
    create(db_url)
    store = open_store(db_url)
    coll = Collection.open(store)
    errors: list[BaseException] = []
    lock = threading.Lock()

    def client(c: int) -> None:
        try:
            for b in range(5):
                bodies = texts(100 * c + b, 20)
                coll.add([(f"t{c}-{b}-{i}", t, None) for i, t in enumerate(bodies)])
                coll.query(bodies[:2])
        except BaseException as exc:  # reported below, with the thread's count
            with lock:
                errors.append(exc)

    try:
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(client, range(4)))
        assert errors == []
        assert store.count() == 4 * 5 * 20
    finally:
        store.close()
