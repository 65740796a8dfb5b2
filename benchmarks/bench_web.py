"""The web pages' endpoints through a real ``neardup serve``: compare of two 10 kB texts, and
search of a large SQLite collection (the pages' targets: ≤ 100 ms and p99 ≤ 50 ms).

The collection (Gutenberg chunks of the shared corpus, MinHash, each text kept in its meta as
the page's "add" keeps it, so searches highlight passages) is built once under ``--db-dir`` and
reused with ``--reuse``. Queries are stored texts with their last sentence dropped, so each has
at least one near-duplicate. Server time is the ``Server-Timing`` header; wall time includes
HTTP on localhost.

    python benchmarks/bench_web.py --docs 100000 --queries 300
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
from _corpus import load_texts

COMPARE_BYTES = 10_000


def build(path: Path, texts: list[str], batch: int = 1000) -> float:
    """A new collection of ``texts`` (each kept in its meta); seconds taken."""
    from neardup.collection.persistent import Collection
    from neardup.collection.sqlite_store import SQLiteStore
    from neardup.dedup import DedupConfig

    path.unlink(missing_ok=True)
    store = SQLiteStore(path)
    collection = Collection.create(store, DedupConfig(method="minhash"))
    start = time.perf_counter()
    for at in range(0, len(texts), batch):
        docs = [(f"d{i}", t, {"text": t}) for i, t in enumerate(texts[at : at + batch], at)]
        collection.add(docs)
    store.close()
    return time.perf_counter() - start


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(db: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    command = [sys.executable, "-c", "from neardup.cli import run; run()"]
    command += ["serve", "--db", str(db), "--port", str(port)]
    process = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(1200):
        try:
            if httpx.get(f"{url}/health").status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"neardup serve did not come up; see {log}")


def timed(client: httpx.Client, path: str, body: dict) -> tuple[float, float]:
    """(wall ms, server ms) of one POST."""
    start = time.perf_counter()
    response = client.post(path, json=body)
    wall = 1000 * (time.perf_counter() - start)
    response.raise_for_status()
    return wall, float(response.headers["server-timing"].split("dur=")[1])


def summary(values: list[float]) -> dict[str, float]:
    a = np.array(values)
    return {k: round(float(np.percentile(a, q)), 1) for k, q in (("p50", 50), ("p99", 99))} | {
        "max": round(float(a.max()), 1)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--db-dir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")))
    parser.add_argument("--reuse", action="store_true", help="keep a collection built before")
    args = parser.parse_args()
    texts = load_texts(limit=args.docs)
    db = args.db_dir / f"neardup-web-{args.docs}.db"
    out: dict = {"docs": len(texts)}
    if not (args.reuse and db.exists()):
        out["build_seconds"] = round(build(db, texts), 1)
    rng = np.random.default_rng(0)
    picks = rng.choice(len(texts), args.queries, replace=False)
    queries = [texts[i].rsplit(".", 2)[0] if texts[i].count(".") > 2 else texts[i] for i in picks]
    joined = "\n\n".join(texts[:200])
    a, b = joined[:COMPARE_BYTES], joined[COMPARE_BYTES // 3 : COMPARE_BYTES // 3 + COMPARE_BYTES]
    process, url = serve(db, db.with_suffix(".log"))
    try:
        with httpx.Client(base_url=url, timeout=120) as client:
            for q in queries[:10]:  # warm-up: compiles, page cache
                timed(client, "/web/search", {"text": q})
                timed(client, "/web/compare", {"a": a, "b": b})
            search = [timed(client, "/web/search", {"text": q}) for q in queries]
            compare = [timed(client, "/web/compare", {"a": a, "b": b}) for _ in range(30)]
    finally:
        process.terminate()
        process.wait()
    out["search_ms"] = {
        "wall": summary([w for w, _ in search]),
        "server": summary([s for _, s in search]),
    }
    out["compare_10kB_ms"] = {
        "wall": summary([w for w, _ in compare]),
        "server": summary([s for _, s in compare]),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
