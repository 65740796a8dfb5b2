"""A persistent collection at scale: add throughput, query latency, size on disk, HTTP q/s.

A ``Collection`` with ``DedupConfig(method="minhash", threshold=0.8)`` (default
canonicalization, shingles and measure: containment) is filled with the first ``--docs``
documents of a jsonl.gz corpus (default: the 1M mixed-language corpus that
``bench_dedup.py --million`` builds with ../shared/tools/make_bench.py in
$TMPDIR/neardup-million) in batches of ``--batch``, in SQLite (``--db-dir``) and/or PostgreSQL
(database ``neardup_bench_<docs>``, dropped and made again, on ``--postgres-url``; else on a
throwaway tests/pgserver.py server: fsync, synchronous_commit and full_page_writes off,
shared_buffers raised to PostgreSQL's default 128MB). Reported per store:

- add: documents per second of ``Collection.add`` time (corpus reading and JSON excluded),
  overall and over the last 10% of the load (the collection is large then), per decile in JSON;
- query: ``Collection.query([text])``, one document per call, after the load and a warm-up on
  the first ``--warmup`` query texts: p50 / p95 / p99 / max in ms over ``--queries`` texts,
  half taken verbatim from the loaded documents, half lightly edited (1-2 spans of 1-4
  characters deleted); "found" is the share whose source document is among the answers,
  "recall" that share among the queries whose exact score with their source reaches the
  threshold;
- size on disk per document: SQLite file + WAL; PostgreSQL ``pg_database_size``; the biggest
  tables and indexes too;
- ``--http``: ``neardup serve`` (``--http-workers``) on the store, ``--clients`` (8) threads
  each with its own httpx client posting one text per ``POST /query`` over loopback, for
  ``--http-seconds`` or ``--http-requests``, whichever ends first: q/s, p50 / p99 ms and the
  CPU per request of the server and of the clients (which share the machine).

``--datasketch``: datasketch's ``MinHashLSH(threshold=0.8, num_perm=<neardup's>)`` over the
first ``--datasketch-docs`` documents (MinHash.bulk, xxh32, the peers' word 5-shingles of
bench_minhash); its in-memory size is what tracemalloc sees allocated by the inserts (plus the
id strings), and the RSS growth as a cross-check, per document. ``--store none`` runs it alone.
``--reuse`` queries a store loaded by an earlier run; ``--cprofile DIR`` profiles load and
queries.

    python benchmarks/bench_collection.py --docs 20000 --store sqlite --http --datasketch
    python benchmarks/bench_collection.py --store both --http --datasketch --out figures.json
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import gzip
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
THRESHOLD = 0.8
DEFAULT_DOCS = 1_000_000
P99_FLOOR_MS = 20.0
DEFAULT_DB_DIR = Path(os.environ.get("TMPDIR") or tempfile.gettempdir()) / "neardup-bench-coll"
PG_SETTINGS = {"shared_buffers": "'128MB'"}  # PostgreSQL's default, not the test helper's 16MB


def dedup_config() -> Any:
    from neardup.dedup import DedupConfig

    return DedupConfig(method="minhash", threshold=THRESHOLD)


# --- the corpus --------------------------------------------------------------------------------
def corpus_path(args: argparse.Namespace) -> Path:
    """``--corpus``, else the 1M corpus of bench_dedup (built once with make_bench.py)."""
    if args.corpus:
        return args.corpus
    from bench_dedup import build_million

    return build_million(max(args.docs, DEFAULT_DOCS))


def read_docs(path: Path, limit: int) -> Iterator[tuple[str, str]]:
    """``(id, text)`` of the first ``limit`` lines of a jsonl.gz."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if n >= limit:
                return
            record = json.loads(line)
            yield record["id"], record["text"]


def light_edit(text: str, rng: random.Random) -> str:
    """Delete 1-2 spans of 1-4 characters (about one word changed per span)."""
    for _ in range(rng.randint(1, 2)):
        span = rng.randint(1, 4)
        if len(text) <= span:
            break
        start = rng.randrange(len(text) - span)
        text = text[:start] + text[start + span :]
    return text


@dataclass
class QuerySample:
    """Query texts and the id of the stored document each comes from."""

    texts: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    edited: list[bool] = field(default_factory=list)
    originals: list[str] = field(default_factory=list)


def pick_queries(n_docs: int, n_queries: int, seed: int = 11) -> dict[int, bool]:
    """Corpus positions to query → whether the text gets edited (half of them)."""
    rng = random.Random(seed)
    picked = rng.sample(range(n_docs), min(n_queries, n_docs))
    return {pos: i % 2 == 1 for i, pos in enumerate(picked)}


def collect_query(sample: QuerySample, doc_id: str, text: str, edit: bool, seed: int) -> None:
    rng = random.Random(seed)
    sample.texts.append(light_edit(text, rng) if edit else text)
    sample.sources.append(doc_id)
    sample.edited.append(edit)
    sample.originals.append(text)


def exact_scores(sample: QuerySample, config: Any) -> np.ndarray:
    """The collection's exact measure between each query text and its source document."""
    from neardup.fingerprints.measures import overlap
    from neardup.fingerprints.shingles import fingerprint_batch

    prints = fingerprint_batch(sample.texts + sample.originals, config.text)
    n = len(sample.texts)
    scores = []
    for i in range(n):
        o = overlap(np.asarray(prints[i]), np.asarray(prints[n + i]))
        both = max(o.containment_a_in_b, o.containment_b_in_a) if o.a and o.b else 0.0
        scores.append(o.resemblance if config.measure == "resemblance" else both)
    return np.asarray(scores)


# --- stores ------------------------------------------------------------------------------------
@dataclass
class Target:
    """An opened store, the URL ``neardup serve --db`` takes, and how to measure its size."""

    name: str
    store: Any
    url: str
    size: Any  # () -> bytes on disk
    parts: Any  # () -> {table or index: bytes}


def remove_sqlite(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def sqlite_bytes(path: Path) -> int:
    """The database file + its WAL."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def sqlite_parts(path: Path) -> dict[str, int]:
    """Bytes per table and index (SQLite's dbstat; empty if it is not compiled in)."""
    import sqlite3

    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
    except sqlite3.OperationalError:
        rows = []
    finally:
        db.close()
    return {name: int(size) for name, size in rows if size}


@contextlib.contextmanager
def sqlite_target(db_dir: Path, docs: int, reuse: bool) -> Iterator[Target]:
    from neardup.collection.sqlite_store import SQLiteStore

    db_dir.mkdir(parents=True, exist_ok=True)
    path = db_dir / f"collection-{docs}.db"
    if not reuse:
        remove_sqlite(path)
    store = SQLiteStore(path)
    try:
        yield Target(
            "sqlite", store, str(path), lambda: sqlite_bytes(path), lambda: sqlite_parts(path)
        )
    finally:
        store.close()


def with_database(url: str, name: str) -> str:
    """``url`` naming database ``name`` instead."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(path="/" + name))


def postgres_bytes(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        (size,) = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(size)


def postgres_parts(url: str) -> dict[str, int]:
    """Bytes per table (with its TOAST) and per index of the collection."""
    import psycopg

    query = (
        "SELECT relname, CASE relkind WHEN 'i' THEN pg_relation_size(oid) "
        "ELSE pg_table_size(oid) END FROM pg_class "
        "WHERE relname LIKE 'neardup%' AND relkind IN ('r', 'i')"
    )
    with psycopg.connect(url) as conn:
        return {name: int(size) for name, size in conn.execute(query).fetchall() if size}


@contextlib.contextmanager
def throwaway_server() -> Iterator[str]:
    """A tests/pgserver.py server with PostgreSQL's default shared_buffers; its admin URL."""
    sys.path.insert(0, str(REPO / "tests"))
    from pgserver import PostgresServer, find_binaries

    root = Path(tempfile.mkdtemp(prefix="neardup-bench-pg-"))
    server = PostgresServer(find_binaries(), root)
    try:
        server.init()
        with (server.data / "postgresql.conf").open("a") as conf:
            conf.writelines(f"{k} = {v}\n" for k, v in PG_SETTINGS.items())
        server.start()
        try:
            yield server.url
        finally:
            server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def postgres_target(admin_url: str | None, docs: int, reuse: bool) -> Iterator[Target]:
    """A database ``neardup_bench_<docs>`` on the given server (or a throwaway one)."""
    import psycopg

    from neardup.collection.postgres_store import PostgresStore

    with contextlib.ExitStack() as stack:
        admin = admin_url or stack.enter_context(throwaway_server())
        name = f"neardup_bench_{docs}"
        with psycopg.connect(admin, autocommit=True) as conn:
            query = "SELECT 1 FROM pg_database WHERE datname = %s"
            exists = conn.execute(query, (name,)).fetchone() is not None
            if exists and not reuse:
                conn.execute(f'DROP DATABASE "{name}"')
                exists = False
            if not exists:
                conn.execute(f'CREATE DATABASE "{name}"')
        url = with_database(admin, name)
        store = PostgresStore(url)
        stack.callback(store.close)
        yield Target(
            "postgres", store, url, lambda: postgres_bytes(url), lambda: postgres_parts(url)
        )


# --- load, query ------------------------------------------------------------------------------
def percentiles(values_s: list[float]) -> dict[str, float]:
    """p50/p95/p99/max (ms) and the mean of latencies given in seconds."""
    ms = np.asarray(values_s) * 1e3
    if ms.size == 0:
        return {}
    pct = np.percentile(ms, [50, 95, 99])
    return {
        "p50": float(pct[0]),
        "p95": float(pct[1]),
        "p99": float(pct[2]),
        "max": float(ms.max()),
        "mean": float(ms.mean()),
    }


def batched(docs: Iterator[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str]]]:
    batch: list[tuple[str, str]] = []
    for doc in docs:
        batch.append(doc)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def load(collection: Any, args: argparse.Namespace, path: Path, sample: QuerySample) -> dict:
    """Add the first ``args.docs`` documents in batches, collecting the query sample."""
    wanted = pick_queries(args.docs, args.queries)
    done, add_seconds, dup_docs = 0, [], 0
    sizes: list[int] = []
    t_wall, c0 = time.perf_counter(), time.process_time()
    for batch in batched(read_docs(path, args.docs), args.batch):
        for k, (doc_id, text) in enumerate(batch):
            if (edit := wanted.get(done + k)) is not None:
                collect_query(sample, doc_id, text, edit, done + k)
        t0 = time.perf_counter()
        results = collection.add([(doc_id, text, None) for doc_id, text in batch])
        add_seconds.append(time.perf_counter() - t0)
        sizes.append(len(batch))
        dup_docs += sum(1 for r in results if r.duplicates)
        done += len(batch)
        progress(done, args.docs, sizes, add_seconds, t_wall)
    return load_figures(sizes, add_seconds, dup_docs, time.perf_counter() - t_wall, c0)


def progress(done: int, total: int, sizes: list[int], seconds: list[float], t0: float) -> None:
    step = max(1, total // 20)
    if done % step < sizes[-1] or done == total:
        recent = sum(sizes[-20:]) / sum(seconds[-20:])
        print(
            f"  {done} docs, {time.perf_counter() - t0:.0f} s, recent {recent:.0f} docs/s, "
            f"load {os.getloadavg()[0]:.2f}",
            file=sys.stderr,
            flush=True,
        )


def load_figures(
    sizes: list[int], seconds: list[float], dup_docs: int, wall: float, c0: float
) -> dict:
    """Overall, last-10% and per-decile add throughput."""
    ends = np.cumsum(sizes)
    total = int(ends[-1]) if sizes else 0
    decile = np.minimum((ends - np.asarray(sizes)) * 10 // max(total, 1), 9)
    secs, counts = np.asarray(seconds), np.asarray(sizes)
    per_decile = [
        float(counts[decile == d].sum() / secs[decile == d].sum())
        for d in range(10)
        if (decile == d).any()
    ]
    return {
        "docs": total,
        "add_seconds": float(secs.sum()),
        "wall_seconds": wall,
        "cpu_seconds": time.process_time() - c0,
        "docs_per_s": total / float(secs.sum()),
        "docs_per_s_last10": per_decile[-1] if per_decile else 0.0,
        "docs_per_s_deciles": per_decile,
        "batch_ms": percentiles(seconds),
        "docs_with_duplicates": dup_docs,
    }


def time_queries(collection: Any, sample: QuerySample, warmup: int) -> dict:
    """One text per ``query`` call; latencies and whether the source document was found."""
    for text in sample.texts[:warmup]:
        collection.query([text])
    latencies, found = [], []
    for text, source in zip(sample.texts, sample.sources, strict=True):
        t0 = time.perf_counter()
        (result,) = collection.query([text])
        latencies.append(time.perf_counter() - t0)
        found.append(any(d.id == source for d in result.duplicates))
    edited = np.asarray(sample.edited, bool)
    hit = np.asarray(found, bool)
    due = exact_scores(sample, collection.config) >= collection.config.threshold
    return {
        "queries": len(latencies),
        "ms": percentiles(latencies),
        "found_verbatim": share(hit[~edited]),
        "found_edited": share(hit[edited]),
        "due": int(due.sum()),
        "recall": share(hit[due]),
        "found_not_due": int((hit & ~due).sum()),
    }


def share(flags: np.ndarray) -> float | None:
    return float(flags.mean()) if flags.size else None


def sample_only(path: Path, args: argparse.Namespace) -> QuerySample:
    """The query sample without loading (``--reuse``)."""
    wanted = pick_queries(args.docs, args.queries)
    sample = QuerySample()
    for n, (doc_id, text) in enumerate(read_docs(path, args.docs)):
        if (edit := wanted.get(n)) is not None:
            collect_query(sample, doc_id, text, edit, n)
    return sample


# --- HTTP ------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def served(db: str, workers: int, log: Path) -> Iterator[tuple[str, int]]:
    """``neardup serve --db DB`` on a free loopback port until /health answers; its base URL
    and process id."""
    import httpx

    port = free_port()
    neardup = shutil.which("neardup", path=str(Path(sys.executable).parent)) or "neardup"
    cmd = [neardup, "serve", "--db", db, "--port", str(port), "--workers", str(workers)]
    cmd += ["--log-level", "warning"]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"neardup serve exited ({proc.returncode}):\n{log.read_text()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit(f"neardup serve did not answer in 120 s:\n{log.read_text()}")
            time.sleep(0.2)
        yield base, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def http_client(base: str, texts: list[str], state: dict, lock: threading.Lock) -> None:
    """One client thread: next text, ``POST /query``, until time or requests run out."""
    import httpx

    latencies: list[float] = []
    errors = 0
    with httpx.Client(base_url=base, timeout=60) as client:
        while time.perf_counter() < state["deadline"]:
            with lock:
                i = state["next"]
                if i >= state["limit"]:
                    break
                state["next"] = i + 1
            body = {"documents": [{"text": texts[i % len(texts)]}]}
            t0 = time.perf_counter()
            response = client.post("/query", json=body)
            latencies.append(time.perf_counter() - t0)
            errors += response.status_code != 200
    with lock:
        state["latencies"].extend(latencies)
        state["errors"] += errors


def run_clients(base: str, texts: list[str], clients: int, seconds: float, limit: int) -> dict:
    state: dict[str, Any] = {"next": 0, "limit": limit, "latencies": [], "errors": 0}
    state["deadline"] = time.perf_counter() + seconds
    lock = threading.Lock()
    threads = [
        threading.Thread(target=http_client, args=(base, texts, state, lock))
        for _ in range(clients)
    ]
    t0 = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - t0
    return {
        "requests": len(state["latencies"]),
        "errors": state["errors"],
        "seconds": wall,
        "qps": len(state["latencies"]) / wall,
        "ms": percentiles(state["latencies"]),
    }


def http_bench(target: Target, texts: list[str], args: argparse.Namespace) -> dict:
    log = args.db_dir / f"serve-{target.name}.log"
    with served(target.url, args.http_workers, log) as (base, pid):
        run_clients(base, texts, args.clients, 30, args.clients * 5)  # warm-up
        server0, clients0 = server_cpu(pid), time.process_time()
        figures = run_clients(base, texts, args.clients, args.http_seconds, args.http_requests)
        server, clients = server_cpu(pid) - server0, time.process_time() - clients0
    n = max(figures["requests"], 1)
    figures.update(
        clients=args.clients,
        workers=args.http_workers,
        server_cpu_ms_per_request=server * 1e3 / n,
        client_cpu_ms_per_request=clients * 1e3 / n,
    )
    return figures


def server_cpu(pid: int) -> float:
    """CPU seconds of the server process and its worker processes so far."""
    import psutil

    root = psutil.Process(pid)
    total = 0.0
    for proc in [root, *root.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = proc.cpu_times()
            total += times.user + times.system
    return total


# --- datasketch --------------------------------------------------------------------------------
def datasketch_memory(path: Path, n_docs: int, num_perm: int) -> dict:
    """Bytes per document of datasketch's MinHashLSH (tracemalloc of the inserts + ids)."""
    import psutil
    import xxhash
    from bench_minhash import SEED, python_shingles
    from datasketch import MinHash, MinHashLSH

    ids, sketches = [], []
    t0 = time.perf_counter()
    for batch in batched(read_docs(path, n_docs), 4096):
        sets = [[s.encode() for s in python_shingles(text)] for _, text in batch]
        bulk = MinHash.bulk(sets, num_perm=num_perm, seed=SEED, hashfunc=xxhash.xxh32_intdigest)
        sketches.extend(bulk)
        ids.extend(doc_id for doc_id, _ in batch)
    sketch_seconds = time.perf_counter() - t0
    gc.collect()
    rss0 = psutil.Process().memory_info().rss
    tracemalloc.start()
    t0 = time.perf_counter()
    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=num_perm)
    with lsh.insertion_session() as session:
        for doc_id, sketch in zip(ids, sketches, strict=True):
            session.insert(doc_id, sketch, check_duplication=False)
    insert_seconds = time.perf_counter() - t0
    gc.collect()
    traced, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss1 = psutil.Process().memory_info().rss
    id_bytes = sum(sys.getsizeof(i) for i in ids)
    n = len(ids)
    return {
        "docs": n,
        "bands": lsh.b,
        "rows": lsh.r,
        "bytes_per_doc": (traced + id_bytes) / n,
        "lsh_bytes_per_doc": traced / n,
        "rss_bytes_per_doc": (rss1 - rss0) / n,
        "sketch_docs_per_s": n / sketch_seconds,
        "insert_docs_per_s_traced": n / insert_seconds,
    }


# --- one store ---------------------------------------------------------------------------------
@contextlib.contextmanager
def opened(kind: str, args: argparse.Namespace) -> Iterator[Target]:
    if kind == "sqlite":
        with sqlite_target(args.db_dir, args.docs, args.reuse) as target:
            yield target
    else:
        with postgres_target(args.postgres_url, args.docs, args.reuse) as target:
            yield target


def profiled(args: argparse.Namespace, name: str) -> contextlib.AbstractContextManager:
    """cProfile into ``--cprofile DIR/<name>.prof`` when asked."""
    if not args.cprofile:
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def run() -> Iterator[None]:
        import cProfile

        args.cprofile.mkdir(parents=True, exist_ok=True)
        profile = cProfile.Profile()
        profile.enable()
        try:
            yield
        finally:
            profile.disable()
            profile.dump_stats(args.cprofile / f"{name}.prof")

    return run()


def bench_store(kind: str, path: Path, args: argparse.Namespace) -> dict:
    from neardup.collection.persistent import Collection

    row: dict[str, Any] = {"store": kind, "loadavg_start": os.getloadavg()}
    with opened(kind, args) as target:
        if args.reuse and target.store.meta() is not None:
            collection = Collection.open(target.store, dedup_config())
            sample = sample_only(path, args)
        else:
            collection = Collection.create(target.store, dedup_config())
            sample = QuerySample()
            print(f"{kind}: loading {args.docs} docs", file=sys.stderr, flush=True)
            with profiled(args, f"{kind}-load"):
                row["add"] = load(collection, args, path, sample)
        row["docs"] = collection.stats()["documents"]
        row["disk_bytes"] = target.size()
        row["disk_bytes_per_doc"] = row["disk_bytes"] / max(row["docs"], 1)
        row["disk_parts"] = target.parts()
        print(f"{kind}: {args.queries} queries", file=sys.stderr, flush=True)
        with profiled(args, f"{kind}-query"):
            row["query"] = time_queries(collection, sample, args.warmup)
        if args.http:
            target.store.close()
            print(f"{kind}: HTTP, {args.clients} clients", file=sys.stderr, flush=True)
            row["http"] = http_bench(target, sample.texts, args)
    row["loadavg_end"] = os.getloadavg()
    return row


# --- report ------------------------------------------------------------------------------------
def fmt(value: float | None, spec: str = ".1f") -> str:
    return "–" if value is None else format(value, spec)


def table(rows: list[dict]) -> str:
    head = (
        "| store | docs | add docs/s | add docs/s, last 10% | query p50 ms | p95 | p99 | max "
        "| found verbatim / edited | recall | disk bytes/doc | HTTP q/s | HTTP p50 ms "
        "| HTTP p99 ms |"
    )
    lines = [head, "|" + "---|" * 14]
    for r in rows:
        add, q, http = r.get("add", {}), r["query"], r.get("http", {})
        ms, hms = q["ms"], http.get("ms", {})
        lines.append(
            f"| {r['store']} | {r['docs']:,} | {fmt(add.get('docs_per_s'), ',.0f')} "
            f"| {fmt(add.get('docs_per_s_last10'), ',.0f')} | {ms['p50']:.2f} | {ms['p95']:.2f} "
            f"| {ms['p99']:.2f} | {ms['max']:.1f} "
            f"| {fmt(q['found_verbatim'], '.3f')} / {fmt(q['found_edited'], '.3f')} "
            f"| {fmt(q['recall'], '.3f')} "
            f"| {r['disk_bytes_per_doc']:,.0f} | {fmt(http.get('qps'), ',.0f')} "
            f"| {fmt(hms.get('p50'), '.1f')} | {fmt(hms.get('p99'), '.1f')} |"
        )
    return "\n".join(lines)


def report(figures: dict) -> None:
    rows = figures["stores"]
    print(
        f"\n{figures['corpus']}: first {figures['docs']:,} docs; DedupConfig(method='minhash', "
        f"threshold={THRESHOLD}) (measure {figures['measure']}), {figures['num_perm']} "
        "permutations; batches of "
        f"{figures['batch']}; {os.cpu_count()} CPUs, load average at start "
        f"{figures['loadavg_start'][0]:.2f}\n"
    )
    if rows:
        print(table(rows))
    ds = figures.get("datasketch")
    if ds:
        print(
            f"\ndatasketch MinHashLSH (t = {THRESHOLD}, {ds['bands']}×{ds['rows']} bands, "
            f"{ds['docs']:,} docs) in memory: {ds['bytes_per_doc']:,.0f} bytes/doc "
            f"(LSH {ds['lsh_bytes_per_doc']:,.0f} + id strings; RSS growth "
            f"{ds['rss_bytes_per_doc']:,.0f})"
        )
    for r in rows:
        parts = sorted(r.get("disk_parts", {}).items(), key=lambda kv: -kv[1])
        if parts:
            shown = ", ".join(f"{name} {size / 1e6:,.0f}" for name, size in parts[:6])
            print(f"{r['store']} on disk (MB): {shown}")
        if r["store"] == "sqlite":
            p99 = r["query"]["ms"]["p99"]
            verdict = "met" if p99 <= P99_FLOOR_MS else "MISSED"
            at = "" if r["docs"] >= DEFAULT_DOCS else f" (at {r['docs']:,} docs, not 1M)"
            print(f"floor: SQLite query p99 ≤ {P99_FLOOR_MS:.0f} ms: {p99:.2f} ms — {verdict}{at}")
        if "http" in r:
            h = r["http"]
            print(
                f"{r['store']} HTTP: {h['requests']} requests in {h['seconds']:.1f} s, "
                f"{h['errors']} errors, {h['clients']} clients, {h['workers']} worker(s); CPU ms "
                f"per request: server {h['server_cpu_ms_per_request']:.2f}, clients "
                f"{h['client_cpu_ms_per_request']:.2f}"
            )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="jsonl.gz with id and text (default: 1M)")
    parser.add_argument("--docs", type=int, default=DEFAULT_DOCS, help="first N documents")
    parser.add_argument("--store", choices=("sqlite", "postgres", "both", "none"), default="sqlite")
    parser.add_argument("--db-dir", type=Path, default=DEFAULT_DB_DIR, help="the SQLite file")
    parser.add_argument("--postgres-url", help="server to create the database on (default: a "
                        "throwaway server from tests/pgserver.py)")  # fmt: skip
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=100, help="untimed queries first")
    parser.add_argument("--reuse", action="store_true", help="query an already loaded store")
    parser.add_argument("--http", action="store_true", help="measure neardup serve too")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--http-seconds", type=float, default=20.0)
    parser.add_argument("--http-requests", type=int, default=2000)
    parser.add_argument("--http-workers", type=int, default=1, help="neardup serve --workers")
    parser.add_argument("--datasketch", action="store_true")
    parser.add_argument("--datasketch-docs", type=int, default=100_000)
    parser.add_argument("--cprofile", type=Path, help="dump cProfile stats of load and queries")
    parser.add_argument("--out", type=Path, help="JSON of the figures")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    path = corpus_path(args)
    config = dedup_config()
    figures: dict[str, Any] = {
        "corpus": str(path),
        "docs": args.docs,
        "batch": args.batch,
        "num_perm": config.build_method().config.num_perm,
        "measure": config.measure,
        "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
        "stores": [],
    }
    kinds = {"both": ("sqlite", "postgres"), "none": ()}.get(args.store, (args.store,))
    for kind in kinds:
        figures["stores"].append(bench_store(kind, path, args))
    if args.datasketch:
        n = min(args.datasketch_docs, args.docs)
        print(f"datasketch: {n} docs", file=sys.stderr, flush=True)
        figures["datasketch"] = datasketch_memory(path, n, figures["num_perm"])
    figures["loadavg_end"] = os.getloadavg()
    report(figures)
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
