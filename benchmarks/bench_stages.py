"""Where the whole command's time goes: ``neardup dedup`` runs, stage by stage.

Each run is a fresh process started as a user starts the command (``python -m neardup dedup
FILE --out DIR [OPTIONS]``), timed from outside: wall seconds, CPU seconds (user + system of
the process and its threads) and peak RSS (``wait4``). The stages are the run's own
``summary.json`` timings (``fingerprints``: reading and parsing the input, canonical text,
shingles, sketches; ``candidates``; ``verify``; ``clusters``: keepers and clusters; ``review``:
``review.jsonl``; ``outputs``: every output file, ``review`` included); ``start + exit`` is
the wall time outside the run's ``total`` (interpreter start, imports, option parsing, the
report, leaving). Medians over ``--runs`` rounds; with several ``--src`` trees (A/B) the
rounds interleave them, so load from other processes falls on each alike.

    python benchmarks/bench_stages.py FILE [--runs 3] [--src A/src --src B/src] [-- OPTIONS]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STAGES = ("fingerprints", "candidates", "verify", "clusters", "review", "outputs", "total")


def one_run(src: str, data: str, options: list[str], out: Path) -> dict[str, float]:
    """Run the command once in a fresh process; its wall, CPU, peak RSS and stage timings."""
    env = dict(os.environ, PYTHONPATH=src)
    cmd = [sys.executable, "-m", "neardup", "dedup", data, "--out", str(out), *options]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err}")
    summary = json.loads((out / "summary.json").read_text())
    row = {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}
    timings = summary["timings_seconds"]
    row |= {name: float(timings.get(name, 0.0)) for name in STAGES}
    row["start + exit"] = wall - row["total"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("data", help="the input file")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--src", action="append", help="a tree's src directory (repeatable)")
    parser.add_argument("--keep-out", help="keep each tree's last output under this directory")
    parser.add_argument("options", nargs="*", help="options passed to dedup (after --)")
    args = parser.parse_args()
    trees = args.src or [str(Path(__file__).resolve().parents[1] / "src")]
    work = Path(tempfile.mkdtemp(prefix="neardup-stages-"))
    rows: dict[str, list[dict[str, float]]] = {t: [] for t in trees}
    try:
        for _ in range(args.runs):
            for n, tree in enumerate(trees):
                rows[tree].append(one_run(tree, args.data, args.options, work / f"out{n}"))
        if args.keep_out:
            for n in range(len(trees)):
                dest = Path(args.keep_out) / f"tree{n}"
                shutil.rmtree(dest, ignore_errors=True)
                shutil.copytree(work / f"out{n}", dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    names = ["wall", "cpu", "rss_mb", "start + exit", *STAGES]
    print(f"{args.data} {' '.join(args.options)} · medians of {args.runs}")
    print(f"{'':<14}" + "".join(f"{f'tree {n}':>12}" for n in range(len(trees))))
    for name in names:
        cells = "".join(f"{statistics.median(r[name] for r in rows[t]):>12.3f}" for t in trees)
        print(f"{name:<14}{cells}")
    for n, tree in enumerate(trees):
        print(f"tree {n}: {tree}")


if __name__ == "__main__":
    main()
