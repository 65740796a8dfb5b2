"""A full disk under --out, TMPDIR or a collection's SQLite file: one line naming the path,
exit 1, no traceback, and nothing written or stored before is lost. The full disk is a real
1 MiB tmpfs, which only root can mount: these tests skip otherwise (CI runs them as root)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clirun import neardup

_WORDS = [f"w{i}" for i in range(2000)]


@contextlib.contextmanager
def _tmpfs(where: Path, size: str = "1m") -> Iterator[Path]:
    """A small file system of its own (a tmpfs of ``size``, 1 MiB by default) mounted at
    ``where``, unmounted at the end."""
    if os.geteuid() != 0:
        pytest.skip("mounting a 1 MiB tmpfs needs root (CI runs as root, so it runs there)")
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB file system of its own (a tmpfs), unmounted at the end."""
    with _tmpfs(tmp_path / "small") as where:
        yield where


def _corpus(path: Path, n: int, seed: int = 1, prefix: str = "d") -> Path:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            text = " ".join(rng.choice(_WORDS) for _ in range(60))
            out.write(json.dumps({"id": f"{prefix}{i}", "text": text}) + "\n")
    return path


def _one_error_line(err: str, *names: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("neardup: error:")]
    assert len(lines) == 1, err
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


def _fill(disk: Path, leave: int = 64 * 1024) -> None:
    """Take all but ``leave`` bytes of ``disk`` (a few bytes free: a temporary directory can
    still be made there, and the first writes work)."""
    free = os.statvfs(disk)
    (disk / "filler").write_bytes(b"\0" * (free.f_bavail * free.f_frsize - leave))


def test_a_full_out_disk_is_one_line_and_keeps_the_earlier_run(tmp_path, small_disk):
    out = small_disk / "out"
    first = neardup("dedup", str(_corpus(tmp_path / "few.jsonl", 20)), "--out", str(out))
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    big = _corpus(tmp_path / "many.jsonl", 4000)  # ~1.5 MB of kept records: cannot fit
    done = neardup("dedup", str(big), "--out", str(out))
    assert done.returncode == 1, done.stderr
    _one_error_line(done.stderr, f"--out {out}", "No space left on device")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in small_disk.iterdir()) == ["out"]  # no staging left


def test_a_full_tmpdir_does_not_stop_a_run(tmp_path, small_disk):
    _fill(small_disk)
    out = tmp_path / "out"
    env = {**os.environ, "TMPDIR": str(small_disk)}
    done = neardup("dedup", str(_corpus(tmp_path / "c.jsonl", 3000)), "--out", str(out), env=env)
    assert done.returncode == 0, done.stderr  # the spill is kept beside --out, not in TMPDIR
    assert json.loads((out / "summary.json").read_text())["documents"] == 3000


def test_a_full_collection_disk_is_one_line_and_keeps_the_stored_batches(tmp_path, small_disk):
    db = small_disk / "c.db"
    made = neardup("index", "create", "--db", str(db), "--method", "minhash")
    assert made.returncode == 0, made.stderr
    first = neardup("index", "add", "--db", str(db), str(_corpus(tmp_path / "few.jsonl", 50)))
    assert first.returncode == 0, first.stderr
    big = _corpus(tmp_path / "many.jsonl", 20000, seed=2, prefix="m")
    done = neardup("index", "add", "--db", str(db), str(big), "--batch-size", "500")
    assert done.returncode == 1, done.stderr
    _one_error_line(done.stderr, str(db), "disk is full")
    with sqlite3.connect(db) as conn:
        ids = {row[0] for row in conn.execute("SELECT id FROM docs")}
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert {f"d{i}" for i in range(50)} <= ids
    assert len(ids) % 500 == 50  # whole batches only


def test_a_full_collection_disk_is_507_over_http_and_keeps_what_was_stored(small_disk):
    from fastapi.testclient import TestClient

    from neardup.collection import SQLiteStore
    from neardup.collection.persistent import Collection
    from neardup.dedup import DedupConfig
    from neardup.service.http_api import ServiceSettings, create_app

    db = small_disk / "c.db"
    Collection.create(SQLiteStore(db), DedupConfig(method="minhash")).store.close()
    app = create_app(ServiceSettings(db=str(db)))
    with TestClient(app) as http:
        answers = _add_until_refused(http)
        assert answers[-1].status_code == 507, answers[-1].text
        assert str(db) in answers[-1].json()["detail"]
        assert http.get("/documents/kept").status_code == 200


@pytest.fixture
def postgres_on_small_disk(postgres_server) -> Iterator[str]:
    """The URL of a new database of the session's PostgreSQL server whose tables are made in
    a tablespace on a 4 MiB file system (the server's own files and WAL stay off it). The
    file system is mounted in the server's directory, which the server's user can reach."""
    import psycopg

    url = postgres_server.create_database()
    name = url.rsplit("/", 1)[1]
    space = f"small_{name}"
    with _tmpfs(postgres_server.root / space, "4m") as disk:
        shutil.chown(disk, "postgres", "postgres")
        with psycopg.connect(postgres_server.url, autocommit=True) as conn:
            conn.execute(f"CREATE TABLESPACE {space} LOCATION '{disk}'")
            conn.execute(f'ALTER DATABASE "{name}" SET default_tablespace = {space}')
        try:
            yield url
        finally:
            with psycopg.connect(postgres_server.url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
                conn.execute(f"DROP TABLESPACE {space}")


def _stored_ids(url: str) -> set[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        return {row[0] for row in conn.execute("SELECT id FROM neardup_docs")}


def test_a_full_postgres_disk_is_one_line_and_keeps_the_stored_batches(
    tmp_path, postgres_on_small_disk
):
    url = postgres_on_small_disk
    made = neardup("index", "create", "--db", url, "--method", "minhash")
    assert made.returncode == 0, made.stderr
    first = neardup("index", "add", "--db", url, str(_corpus(tmp_path / "few.jsonl", 50)))
    assert first.returncode == 0, first.stderr
    big = _corpus(tmp_path / "many.jsonl", 20000, seed=2, prefix="m")
    done = neardup("index", "add", "--db", url, str(big), "--batch-size", "50")
    assert done.returncode == 1, done.stderr
    _one_error_line(done.stderr, url, "disk is full")
    assert "psycopg" not in done.stderr
    ids = _stored_ids(url)
    assert {f"d{i}" for i in range(50)} <= ids
    assert len(ids) % 50 == 0  # whole batches only
    assert len(ids) > 50, done.stderr  # the disk filled after some batches were stored


def test_a_full_postgres_disk_is_507_over_http_and_keeps_what_was_stored(
    postgres_on_small_disk,
):
    from fastapi.testclient import TestClient

    from neardup.collection.persistent import Collection
    from neardup.collection.postgres_store import PostgresStore
    from neardup.dedup import DedupConfig
    from neardup.service.http_api import ServiceSettings, create_app

    url = postgres_on_small_disk
    store = PostgresStore(url)
    Collection.create(store, DedupConfig(method="minhash")).store.close()
    app = create_app(ServiceSettings(db=url))
    with TestClient(app) as http:
        answers = _add_until_refused(http)
        assert answers[-1].status_code == 507, answers[-1].text
        assert url in answers[-1].json()["detail"]
        assert "disk is full" in answers[-1].json()["detail"]
        assert http.get("/documents/kept").status_code == 200
    stored = _stored_ids(url)
    assert len(stored) == 1 + 200 * (len(answers) - 1)  # every acknowledged batch, whole


def _add_until_refused(http: Any) -> list[Any]:
    """Post one small document, then batches of 200 until the service refuses one (at most
    40): the answers to the batches."""
    rng = random.Random(3)
    first = http.post("/documents", json={"documents": [{"id": "kept", "text": "a b c d"}]})
    assert first.status_code == 200
    answers = []
    for batch in range(40):  # until the disk is full
        docs = [
            {"id": f"b{batch}-{i}", "text": " ".join(rng.choices(_WORDS, k=200))}
            for i in range(200)
        ]
        answers.append(http.post("/documents", json={"documents": docs}))
        if answers[-1].status_code != 200:
            break
    return answers
