"""What ``neardup dedup --engine spark`` costs in CPU beside the local engine, stage by stage.

Both engines run as a user runs them, each in a fresh process: ``python -m neardup dedup
INPUT --out DIR`` (the local engine) and the same command with ``--engine spark --master
local[2]`` (``--master``, ``--spark-conf``), run in-process by a child of this script
(``neardup.cli``) so that its stages can be timed. Their outputs are checked to be equal
(kept and removed records, clusters, pairs with their scores, the summary's counts).

CPU seconds are user + system time of the whole process tree: the command's Python process
and, for Spark, its JVM (driver and executor in one with a local master) and every Python
worker. This script makes itself the reaper of the run's orphans (Linux's child subreaper)
and polls /proc every 0.2 s, keeping each process's last seen time after it exits: Spark's
Python daemon ignores SIGCHLD, so its finished workers' time reaches no parent's account
(``rusage``, what the kernel accounts to waited-for children, is reported beside it and
misses them). Interpreter and JVM start, imports and numba's cache loads are included, as a
user pays them.

Per stage (Spark): a logging handler on the engine's stage log (``neardup.spark``: "name …"
when a stage starts, "name: 1.2 s" when it ends) reads the process tree's CPU at every
boundary; each interval goes to the innermost stage open then ("between stages" otherwise,
"before" for Python's start). The stages materialize their outputs, so the work is theirs;
the lazy outputs are computed by the writing stages.

The input: ``--input`` (JSONL), else the 100,000 English texts of
../shared/data/corpus/en-gutenberg-100k.jsonl.gz written once as plain JSONL to $TMPDIR
(Spark cannot split a ``.gz``). ``--runs`` runs of each (medians reported; the machine may be
shared: CPU seconds are steadier than wall time under load). The table goes to stdout as
Markdown, the figures as JSON to ``--json``. With ``NEARDUP_BENCH_SPARK_STAGES=FILE`` the
Spark run also writes Spark's own stage list (its UI's REST API: tasks, run times, shuffle
bytes) to FILE, for a closer look.

    python benchmarks/bench_spark_cost.py [--input PATH] [--runs 2] [--master local[2]]
        [--spark-conf KEY=VALUE ...] [--option=--method=minhash ...] [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gzip
import json
import logging
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from _corpus import CORPUS

SOURCE = CORPUS / "en-gutenberg-100k.jsonl.gz"
PR_SET_CHILD_SUBREAPER = 36


def plain_corpus() -> Path:
    """The shared 100k English corpus as plain JSONL in $TMPDIR (written once)."""
    path = Path(tempfile.gettempdir()) / "neardup-en-gutenberg-100k.jsonl"
    if not path.exists():
        part = path.with_suffix(".part")
        with gzip.open(SOURCE, "rb") as src, open(part, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
        part.rename(path)
    return path


class TreeCpu:
    """User + system seconds of this process's descendants (and of itself with ``me``),
    polled from /proc every ``every`` seconds by a thread: each process's own time as last
    seen, kept after it exits (Spark's Python daemon ignores SIGCHLD: its finished workers'
    time reaches no parent's account, and only polling sees it)."""

    def __init__(self, *, me: bool, every: float = 0.2) -> None:
        self.me, self.every = me, every
        self.seen: dict[tuple[int, str], tuple[str, float]] = {}
        self.ticks = os.sysconf("SC_CLK_TCK")
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        while not self.done.wait(self.every):
            self.sample()

    def sample(self) -> float:
        """The tree's seconds so far (a fresh look at /proc)."""
        with self.lock:
            return self._sample()

    def _sample(self) -> float:
        stats: dict[int, list[str]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with (
                    contextlib.suppress(OSError),
                    open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh,
                ):
                    stats[int(entry)] = fh.read().rpartition(")")[2].split()
        children: dict[int, list[int]] = {}
        for pid, fields in stats.items():  # after "pid (comm)": state, ppid, … utime at 11
            children.setdefault(int(fields[1]), []).append(pid)
        tree, todo = [], [os.getpid()]
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo.extend(children.get(pid, []))
        for pid in tree if self.me else tree[1:]:
            fields = stats.get(pid)
            if fields is not None:  # keyed with the start time: pids are reused
                kind = "JVM" if _name(pid) == "java" else "Python"
                seconds = (int(fields[11]) + int(fields[12])) / self.ticks
                self.seen[(pid, fields[19])] = (kind, seconds)
        return sum(s for _, s in self.seen.values())

    def kinds(self) -> dict[str, float]:
        """The seconds so far of the JVMs and of the Python processes."""
        out: dict[str, float] = {}
        for kind, seconds in self.seen.values():
            out[kind] = out.get(kind, 0.0) + seconds
        return out

    def stop(self) -> float:
        self.done.set()
        self.thread.join()
        return self.sample()


def _name(pid: int) -> str:
    with contextlib.suppress(OSError), open(f"/proc/{pid}/comm", encoding="utf-8") as fh:
        return fh.read().strip()
    return ""


def tree_cpu(command: list[str]) -> dict[str, float]:
    """Run ``command``; its wall seconds and the CPU seconds of everything it started,
    orphans included (this process is their subreaper, polls them and waits for each):
    polled (``cpu``) and as the kernel accounts what was waited for (``rusage``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit("cannot become a child subreaper (Linux only)")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    poller = TreeCpu(me=False)
    code = subprocess.call(command, stdout=subprocess.DEVNULL)
    with contextlib.suppress(ChildProcessError):
        while True:
            pid, _ = os.waitpid(-1, os.WNOHANG)  # the run's orphans (a JVM, Python workers)
            if pid == 0:
                time.sleep(0.05)
    polled = poller.stop()
    kinds = poller.kinds()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0:
        raise SystemExit(f"{' '.join(command)} failed (exit {code})")
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    return {
        "wall": wall,
        "cpu": polled,
        "jvm": kinds.get("JVM", 0.0),
        "python": kinds.get("Python", 0.0),
        "rusage": user + system,
    }


class StageCpu(logging.Handler):
    """CPU seconds of this process tree per engine stage (innermost open stage), and the
    JVM's share of them."""

    def __init__(self) -> None:
        super().__init__()
        self.tree = TreeCpu(me=True)
        self.open: list[str] = []
        self.cpu: dict[str, float] = {"before": self.tree.sample()}
        self.jvm: dict[str, float] = {"before": 0.0}
        self.last, self.last_jvm = self.cpu["before"], 0.0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.endswith(" …"):
            self._charge(self.tree.sample())
            self.open.append(message[:-2])
        elif message.endswith(" s") and ": " in message:
            name = message.rpartition(": ")[0]
            if name in self.open:
                self._charge(self.tree.sample())
                self.open.remove(name)

    def _charge(self, now: float) -> None:
        name = self.open[-1] if self.open else "between stages"
        jvm = self.tree.kinds().get("JVM", 0.0)
        self.cpu[name] = self.cpu.get(name, 0.0) + now - self.last
        self.jvm[name] = self.jvm.get(name, 0.0) + jvm - self.last_jvm
        self.last, self.last_jvm = now, jvm

    def finish(self) -> dict[str, dict[str, float]]:
        self._charge(self.tree.stop())
        return {"cpu": self.cpu, "jvm": self.jvm}


def stage_child(args: list[str], out: Path) -> None:
    """In this process: the CLI on ``args`` under :class:`StageCpu`; the stages to ``out``."""
    handler = StageCpu()
    logger = logging.getLogger("neardup.spark")
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    from neardup.cli import cli

    try:
        cli(args, prog_name="neardup", standalone_mode=False)
    finally:
        out.write_text(json.dumps(handler.finish()))
    spark_stages = os.environ.get("NEARDUP_BENCH_SPARK_STAGES")
    if spark_stages:  # Spark's own stage list (its UI's REST API), for a closer look
        from pyspark import SparkContext

        context = SparkContext._active_spark_context
        url = f"{context.uiWebUrl}/api/v1/applications/{context.applicationId}/stages"
        with urllib.request.urlopen(url) as response:
            Path(spark_stages).write_bytes(response.read())


def same_outputs(local: Path, spark: Path) -> int:
    """Raise unless the two runs wrote the same kept and removed records, clusters, pairs
    and counts; the number of removed documents."""

    def lines(directory: Path) -> list[str]:
        return [
            line
            for part in sorted(directory.glob("part-*"))
            for line in part.read_text(encoding="utf-8").splitlines()
        ]

    def local_lines(name: str) -> list[str]:
        return (local / name).read_text(encoding="utf-8").splitlines()

    for name in ("kept", "removed"):
        if sorted(lines(spark / name)) != sorted(local_lines(f"{name}.jsonl")):
            raise SystemExit(f"the engines' {name} records differ")
    clusters = sorted(map(json.loads, lines(spark / "clusters")), key=lambda c: c["cluster"])
    if clusters != [json.loads(x) for x in local_lines("clusters.jsonl")]:
        raise SystemExit("the engines' clusters differ")
    pairs = {(p["a"], p["b"]): p for p in map(json.loads, lines(spark / "pairs"))}
    wanted = {(p["a"], p["b"]): p for p in map(json.loads, local_lines("pairs.jsonl"))}
    if pairs != wanted:
        raise SystemExit("the engines' pairs differ")
    ours, theirs = (json.loads((d / "summary.json").read_text()) for d in (spark, local))
    for key in ("documents", "kept", "removed", "clusters", "verified_pairs", "candidate_pairs"):
        if ours[key] != theirs[key]:
            raise SystemExit(f"the engines' {key} differ: {ours[key]} != {theirs[key]}")
    return int(theirs["removed"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--input", type=Path, help="a JSONL file [default: the 100k English]")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument(
        "--option", action="append", default=[], help="a dedup option for both engines"
    )
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--stage-child", nargs=2, metavar=("OUT", "ARGS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage_child:
        stage_child(json.loads(args.stage_child[1]), Path(args.stage_child[0]))
        return

    path = args.input or plain_corpus()
    spark_options = ["--engine", "spark", "--master", args.master]
    for setting in args.spark_conf:
        spark_options += ["--spark-conf", setting]
    work = Path(tempfile.mkdtemp(prefix="neardup-spark-cost-"))
    neardup = [sys.executable, "-m", "neardup", "dedup", str(path)]
    runs: dict[str, list[dict[str, float]]] = {"local": [], "spark": []}
    stages: list[dict[str, dict[str, float]]] = []
    removed = 0
    for run in range(args.runs):
        local = work / f"local-{run}"
        runs["local"].append(tree_cpu([*neardup, "--out", str(local), *args.option]))
        print(f"run {run + 1} local: {json.dumps(runs['local'][-1])}", file=sys.stderr)
        out, table = work / f"spark-{run}", work / f"stages-{run}.json"
        cli_args = ["dedup", str(path), "--out", str(out), *args.option, *spark_options]
        child = [sys.executable, __file__, "--stage-child", str(table), json.dumps(cli_args)]
        runs["spark"].append(tree_cpu(child))
        stages.append(json.loads(table.read_text()))
        print(f"run {run + 1} spark: {json.dumps(runs['spark'][-1])}", file=sys.stderr)
        removed = same_outputs(local, out)
    shutil.rmtree(work)

    with open(path, "rb") as lines:
        docs = sum(1 for _ in lines)
    med = {e: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for e, rs in runs.items()}
    names = list(dict.fromkeys(n for s in stages for n in s["cpu"]))
    per_stage = {
        n: [statistics.median(s[k].get(n, 0.0) for s in stages) for k in ("cpu", "jvm")]
        for n in names
    }
    ratio = med["spark"]["cpu"] / med["local"]["cpu"]
    print(f"{path} ({docs} documents, {removed} removed by both), options {args.option}, ")
    print(f"Spark {args.master} {args.spark_conf}; medians of {args.runs} runs\n")
    print("| stage (Spark) | CPU s | of which JVM |\n|---|---|---|")
    for name, (seconds, jvm) in per_stage.items():
        print(f"| {name} | {seconds:.1f} | {jvm:.1f} |")
    print("\n| engine | wall s | CPU s | of which JVM | CPU ms per document |")
    print("|---|---|---|---|---|")
    for engine, m in med.items():
        per_doc = 1000 * m["cpu"] / docs
        print(f"| {engine} | {m['wall']:.1f} | {m['cpu']:.1f} | {m['jvm']:.1f} | {per_doc:.3f} |")
    print(f"\nSpark / local CPU: {ratio:.2f}")
    if args.json:
        figures = {"runs": runs, "stages": stages, "median": med, "ratio": ratio, "docs": docs}
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
