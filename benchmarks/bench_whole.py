"""Whole-process dedup timings: neardup's command beside the peers' whole pipelines.

What a user times: a fresh process from start to exit — interpreter start, imports, reading
the JSONL file, sketching, the LSH index or candidates, verification, writing the results.
On the first ``--docs`` records of ../shared/data/corpus/en-gutenberg-100k.jsonl.gz, written
once (id + text only) to ``$TMPDIR/neardup-whole/en-<N>.jsonl``:

- ``neardup minhash``: ``neardup dedup FILE --out DIR --method minhash --threshold 0.8
  --measure resemblance --unit word --size 5`` — the peers' task (resemblance of word
  5-shingles) with neardup's canonicalization; it also verifies every candidate exactly and
  writes pairs, clusters, kept, removed, summary and an HTML report;
- ``neardup defaults``: ``neardup dedup FILE --out DIR`` (exact containment ≥ 0.65 of
  3-shingles, stop words kept, templates discounted);
- ``datasketch`` / ``rensa`` / ``gaoya``: a Python script (``--child NAME``) that reads the
  same file (orjson), runs the pipeline of ``bench_dedup`` (word 5-shingles by ``re``, 128
  permutations, LSH at t = 0.8; gaoya tokenizes itself, 2 rayon threads) and writes the
  pairs as JSONL — less output than neardup writes.

Each run is a new process, timed from outside (wall); peak RSS from ``wait4``. The figure is
the median of ``--repeat`` runs; rounds interleave the pipelines so load from other
processes on the machine falls on all of them alike. Every pipeline first runs once untimed
on 2,000 documents: compiled kernels cached and bytecode written, as on a user's machine
after the first run (the children may write bytecode even if this shell forbids it).
Kernel-only figures (texts already in memory, warmed up) are ``bench_dedup.py``'s.

``--neardup-python`` runs neardup with another interpreter: that of an environment where
neardup was installed as a user installs it (``python -m venv V && V/bin/pip install .``).
It matters here because this environment holds the peers (datasketch needs scipy), and numba
imports ``scipy.linalg`` when it loads its first kernel if scipy is installed (~0.3 s per
process); the header says whether scipy is importable by the interpreter that ran neardup.

    python benchmarks/bench_whole.py [--docs 20000] [--repeat 3] [--only NAME ...]
        [--neardup-python V/bin/python]
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from _corpus import CORPUS

THRESHOLD = 0.8
WORKDIR = Path(os.environ.get("TMPDIR") or tempfile.gettempdir()) / "neardup-whole"
NEARDUP_MAIN = ["-c", "from neardup.cli import run; run()", "dedup"]
WARMUP_DOCS = 2000
MINHASH = ["--method", "minhash", "--threshold", str(THRESHOLD), "--measure", "resemblance"]
MINHASH += ["--unit", "word", "--size", "5"]
PIPELINES = ("neardup minhash", "neardup defaults", "datasketch", "rensa", "gaoya")


def corpus_file(docs: int) -> Path:
    """The first ``docs`` records (id, text) as plain JSONL (written once)."""
    path = WORKDIR / f"en-{docs}.jsonl"
    if path.exists():
        return path
    WORKDIR.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with gzip.open(CORPUS / "en-gutenberg-100k.jsonl.gz", "rb") as src, open(tmp, "wb") as out:
        for n, line in enumerate(src):
            if n == docs:
                break
            record = orjson.loads(line)
            out.write(orjson.dumps({"id": record["id"], "text": record["text"]}) + b"\n")
    tmp.rename(path)
    return path


def command(name: str, data: Path, out: Path, neardup_python: str) -> list[str]:
    if name == "neardup minhash":
        return [neardup_python, *NEARDUP_MAIN, str(data), "--out", str(out), *MINHASH]
    if name == "neardup defaults":
        return [neardup_python, *NEARDUP_MAIN, str(data), "--out", str(out)]
    return [sys.executable, __file__, "--child", name, "--input", str(data), "--out", str(out)]


def run_once(name: str, data: Path, neardup_python: str) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (all threads) and peak RSS (MB) of one fresh process."""
    out = WORKDIR / f"out-{name.replace(' ', '-')}"
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, NUMBA_NUM_THREADS="2", RAYON_NUM_THREADS="2")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's installation has its bytecode
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        command(name, data, out, neardup_python),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if status:
        raise SystemExit(f"{name} failed:\n{stderr[-2000:]}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def child(name: str, data: Path, out: Path) -> None:
    """A peer's whole pipeline: read the file, find the pairs, write them."""
    from bench_dedup import RUNNERS

    ids, texts = [], []
    with open(data, "rb") as fh:
        for line in fh:
            record = orjson.loads(line)
            ids.append(record["id"])
            texts.append(record["text"])
    left, right = RUNNERS[name](texts, THRESHOLD)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "pairs.jsonl", "wb") as fh:
        for a, b in zip(left.tolist(), right.tolist(), strict=True):
            fh.write(orjson.dumps({"a": ids[a], "b": ids[b]}) + b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (rounds)")
    parser.add_argument("--only", nargs="*", choices=PIPELINES, default=list(PIPELINES))
    parser.add_argument("--child", choices=("datasketch", "rensa", "gaoya"))
    parser.add_argument("--input", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--neardup-python", default=sys.executable)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.input, args.out)
        return
    data = corpus_file(args.docs)
    warmup = corpus_file(min(WARMUP_DOCS, args.docs))
    size = data.stat().st_size / 1e6
    for name in args.only:
        run_once(name, warmup, args.neardup_python)
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in args.only}
    for _ in range(args.repeat):  # rounds interleave the pipelines
        for name in args.only:
            runs[name].append(run_once(name, data, args.neardup_python))
            print(f"  {name}: {runs[name][-1][0]:.2f} s", file=sys.stderr, flush=True)
    scipy = subprocess.run(
        [args.neardup_python, "-c", "import scipy"], capture_output=True, check=False
    )
    print(
        f"{args.docs} docs ({size:.0f} MB JSONL) of en-gutenberg-100k, whole process "
        f"(start to exit), 2 threads; median of {args.repeat} runs, peak RSS the largest; "
        f"neardup run by {args.neardup_python} "
        f"(scipy {'installed' if scipy.returncode == 0 else 'not installed'})"
    )
    base = statistics.median(r[0] for r in runs.get("neardup minhash", [(0.0, 0.0, 0.0)]))
    head = f"{'pipeline':<18}{'seconds':>9}{'runs':>20}{'CPU s':>8}{'peak RSS':>11}"
    print(head + f"{'time / neardup minhash':>24}")
    for name, rows in runs.items():
        median = statistics.median(r[0] for r in rows)
        cpu = statistics.median(r[1] for r in rows)
        spread = " ".join(f"{r[0]:.1f}" for r in rows)
        ratio = f"{median / base:>23.2f}×" if base else ""
        peak = max(r[2] for r in rows)
        print(f"{name:<18}{median:>9.2f}{spread:>20}{cpu:>8.1f}{peak:>8.0f} MB{ratio}")


if __name__ == "__main__":
    main()
