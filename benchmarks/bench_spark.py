"""The Spark engine beside the local engine on one machine: same corpus, same config, one run.

On the first ``--docs`` documents (default: all 100k) of
../shared/data/corpus/en-gutenberg-100k.jsonl.gz, written once as plain JSONL to $TMPDIR:

- local: ``read_documents`` + ``deduplicate`` (default ``DedupConfig``, all numba threads);
- spark: ``local[2]`` (``--master``), the same file read by ``spark_files.read_inputs`` (the
  local reader's line parser), repartitioned into ``--partitions``, ``spark_dedup`` with the
  same config, then every result forced (summary counts and the removed rows). The session
  is started and warmed up on 200 documents first (JVM start, Python workers, numba cache
  loads are not counted).

``--input PATH`` runs on a given file instead (JSONL, plain or ``.gz``; all its documents);
``--local-output DIR`` skips the in-process local run and checks the Spark result against a
``neardup dedup PATH --out DIR`` made beforehand (its ``removed.jsonl`` and ``summary.json``;
the local figures are then that run's, not measured here) — for corpora where one process
holding both engines would crowd the machine.

Reported: seconds and documents per second of each, the ratio spark/local, the CPU seconds of
each (the local process's; the Spark JVM's and its Python workers': steadier than wall time on
a loaded machine) and the machine's load around the runs, the shuffle bytes
written per document (sum of ``shuffleWriteBytes`` over the timed run's stages, from the
Spark UI's REST API) and the peak JVM heap of the driver/executor (``peakMemoryMetrics``;
local mode runs both in one JVM). The results of the two engines are checked to be equal
(removed ids and their keepers; the candidate counts equal up to the local engine's counted
hits, which count keys by their high bits: a collision there adds a candidate, at most one in
100,000 — 41 of 36 M on the 1 M mixed corpus). One run each: the machine is shared, so
figures are noisy.

    python benchmarks/bench_spark.py [--docs N | --input PATH [--local-output DIR]]
        [--partitions 16] [--master local[2]] [--driver-memory 4g] [--[no-]exact-counts]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import logging
import os
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from _corpus import CORPUS

from neardup.dedup import DedupConfig, deduplicate
from neardup.engines.local.pipeline import Inputs
from neardup.io.readers import read_documents

SOURCE = CORPUS / "en-gutenberg-100k.jsonl.gz"


def corpus_slice(docs: int) -> Path:
    """The first ``docs`` records of the shared corpus as plain JSONL in $TMPDIR (once)."""
    path = Path(os.environ.get("TMPDIR") or tempfile.gettempdir()) / f"neardup-spark-{docs}.jsonl"
    if not path.exists():
        with gzip.open(SOURCE, "rt", encoding="utf-8") as src, open(path, "w") as out:
            for k, line in enumerate(src):
                if k >= docs:
                    break
                out.write(line)
    return path


def run_local(
    path: Path, config: DedupConfig, jvm: int | None = None
) -> tuple[float, float, dict[str, str], int]:
    """Seconds, CPU seconds (this process and its workers, not the ``jvm``), removed ids →
    their keepers' ids, candidate pairs."""
    started, cpu = time.perf_counter(), _cpu_seconds(os.getpid(), jvm)
    result = deduplicate(((d.id, d.text) for d in read_documents([path])), config)
    seconds, cpu = time.perf_counter() - started, _cpu_seconds(os.getpid(), jvm) - cpu
    ids = result.ids
    removed = {ids[i]: ids[result.keep_of[i]] for i in np.flatnonzero(result.removed)}
    return seconds, cpu, removed, result.candidates


def local_output(out: Path) -> tuple[dict[str, str], int]:
    """Removed ids → their keepers' ids and the candidate pairs of a ``neardup dedup`` output
    directory (``removed.jsonl`` records carry ``_duplicate_of``)."""
    with open(out / "removed.jsonl", encoding="utf-8") as lines:
        removed = {str(r["id"]): str(r["_duplicate_of"]) for r in map(json.loads, lines)}
    summary = json.loads((out / "summary.json").read_text())
    return removed, int(summary["candidate_pairs"])


def _rest(spark, endpoint: str) -> list[dict]:
    url = spark.sparkContext.uiWebUrl
    app = spark.sparkContext.applicationId
    with urllib.request.urlopen(f"{url}/api/v1/applications/{app}/{endpoint}") as response:
        return json.load(response)


def _cpu_seconds(root: int, skip: int | None = None) -> float:
    """CPU seconds used so far by process ``root`` and its descendants (all but ``skip``'s
    subtree): the local engine's worker processes, or the Spark JVM and its Python workers
    (local mode: all the engine's work). On a loaded machine steadier than wall time."""
    import psutil

    top = psutil.Process(root)
    gone = (
        {skip} | {p.pid for p in psutil.Process(skip).children(recursive=True)} if skip else set()
    )
    total = 0.0
    for proc in [top, *top.children(recursive=True)]:
        if proc.pid in gone:
            continue
        with contextlib.suppress(psutil.NoSuchProcess):
            t = proc.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
    return total


def run_spark(
    path: Path,
    config: DedupConfig,
    partitions: int,
    spark,
    pairs_per_task: int | None = None,
    exact_counts: bool | None = None,
) -> dict:
    from neardup.engines.spark.spark_dedup import spark_dedup
    from neardup.engines.spark.spark_files import read_inputs

    before = {s["stageId"] for s in _rest(spark, "stages")}
    jvm = spark.sparkContext._gateway.proc.pid
    started, cpu = time.perf_counter(), _cpu_seconds(jvm)
    docs, _ = read_inputs(spark, Inputs((str(path),)), "jsonl")
    result = spark_dedup(
        docs.repartition(partitions),
        config,
        id_col="_id",
        text_col="_text",
        order="_row",
        pairs_per_task=pairs_per_task,
        exact_counts=exact_counts,
    )
    summary = result.summary()
    removed = {
        r["_id"]: r["_duplicate_of"]
        for r in result.removed.select("_id", "_duplicate_of").collect()
    }
    seconds, cpu = time.perf_counter() - started, _cpu_seconds(jvm) - cpu
    stages = [s for s in _rest(spark, "stages?status=complete") if s["stageId"] not in before]
    shuffle = sum(s.get("shuffleWriteBytes", 0) for s in stages)
    peak = max(
        (e.get("peakMemoryMetrics", {}).get("JVMHeapMemory", 0) for e in _rest(spark, "executors")),
        default=0,
    )
    return {
        "seconds": seconds,
        "cpu": cpu,
        "removed": removed,
        "summary": summary,
        "shuffle": shuffle,
        "peak_heap": peak,
        "stages": stages,
    }


class StageTimes(logging.Handler):
    """The engine's stage timings (``neardup.spark`` log lines ``name: 1.2 s``) and their
    wall-clock windows (to attribute Spark's stages to them)."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds: dict[str, float] = {}
        self.windows: list[tuple[str, float, float]] = []

    def emit(self, record: logging.LogRecord) -> None:
        name, _, rest = record.getMessage().rpartition(": ")
        if name and rest.endswith(" s") and not name.startswith("components: round"):
            seconds = float(rest[:-2])
            self.seconds[name] = self.seconds.get(name, 0.0) + seconds
            self.windows.append((name, record.created - seconds, record.created))

    def attribute(self, stages: list[dict]) -> dict[str, dict[str, float]]:
        """Per engine stage (``outputs`` after the last): Spark tasks' run seconds and MB of
        shuffle written by the Spark stages that completed in its window."""
        out: dict[str, dict[str, float]] = {}
        for stage in stages:
            done = _epoch(stage.get("completionTime"))
            name = next((n for n, a, b in self.windows if a <= done <= b), "outputs")
            row = out.setdefault(name, {"task_s": 0.0, "shuffle_mb": 0.0})
            row["task_s"] += stage.get("executorRunTime", 0) / 1000
            row["shuffle_mb"] += stage.get("shuffleWriteBytes", 0) / 2**20
        return {k: {m: round(v, 1) for m, v in row.items()} for k, row in out.items()}


def _epoch(stamp: str | None) -> float:
    """Seconds since the epoch of a Spark REST time (``2026-01-02T03:04:05.678GMT``)."""
    if not stamp:
        return 0.0
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f%Z").replace(tzinfo=UTC).timestamp()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--input", type=Path, help="a JSONL file (all its documents)")
    parser.add_argument("--local-output", type=Path, help="a `neardup dedup` output of --input")
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--pairs-per-task", type=int, help="spark_dedup's (default its own)")
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument(
        "--exact-counts",
        action=argparse.BooleanOptionalAction,
        help="force the prefix order from exact key counts (or from the count tables); "
        "default: spark_dedup's rule",
    )
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    config = DedupConfig()
    path = args.input or corpus_slice(args.docs)
    spark = (
        SparkSession.builder.master(args.master)
        .appName("neardup bench_spark")
        .config("spark.driver.memory", args.driver_memory)
        .config("spark.sql.shuffle.partitions", str(args.partitions))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    run_spark(corpus_slice(200), config, 2, spark)  # warm-up: JVM, workers, numba caches

    load = os.getloadavg()[0]  # the machine's load (1 min) before and after the runs
    local_seconds = local_cpu = float("nan")
    if args.local_output:
        local_removed, local_candidates = local_output(args.local_output)
    else:
        run_local(corpus_slice(200), config)  # warm-up: numba caches
        local_seconds, local_cpu, local_removed, local_candidates = run_local(
            path, config, spark.sparkContext._gateway.proc.pid
        )
    times = StageTimes()
    logger = logging.getLogger("neardup.spark")
    logger.setLevel(logging.INFO)
    logger.addHandler(times)
    progress = logging.StreamHandler()  # the stages as they end: a long run's progress
    progress.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logger.addHandler(progress)
    remote = run_spark(path, config, args.partitions, spark, args.pairs_per_task, args.exact_counts)
    same = remote["removed"] == local_removed
    # the local counted hits count keys by their high bits (neardup.dedup.candidates.
    # entry_words): a collision adds a candidate there, never one here — at most a few more
    spark_candidates = remote["summary"]["candidate_pairs"]
    same_candidates = 0 <= local_candidates - spark_candidates <= local_candidates // 10**5
    same_candidates |= bool(args.exact_counts)  # another order: other candidates
    n = remote["summary"]["documents"]
    row = {
        "input": str(path),
        "docs": n,
        "master": args.master,
        "partitions": args.partitions,
        "pairs_per_task": args.pairs_per_task,
        "exact_counts": args.exact_counts,
        "local_s": round(local_seconds, 1),
        "local_docs_per_s": round(n / local_seconds, 1),
        "spark_s": round(remote["seconds"], 1),
        "spark_docs_per_s": round(n / remote["seconds"]),
        "spark_over_local": round(remote["seconds"] / local_seconds, 1),
        "local_cpu_s": round(local_cpu, 1),
        "spark_cpu_s": round(remote["cpu"], 1),
        "spark_cpu_over_local": round(remote["cpu"] / local_cpu, 1),
        "load_1min_before_after": [round(load, 1), round(os.getloadavg()[0], 1)],
        "shuffle_bytes_per_doc": round(remote["shuffle"] / n),
        "peak_jvm_heap_mb": round(remote["peak_heap"] / 2**20),
        "removed": len(local_removed),
        "same_result": same,
        "candidates_local_spark": [local_candidates, spark_candidates],
        "spark_stage_seconds": {k: round(v, 1) for k, v in times.seconds.items()},
        "spark_stage_tasks": times.attribute(remote["stages"]),
        "top_spark_stages": [
            {
                "name": s["name"][:60],
                "task_s": round(s.get("executorRunTime", 0) / 1000, 1),
                "shuffle_mb": round(s.get("shuffleWriteBytes", 0) / 2**20, 1),
                "read_mb": round(s.get("shuffleReadBytes", 0) / 2**20, 1),
            }
            for s in sorted(remote["stages"], key=lambda s: -s.get("executorRunTime", 0))[:12]
        ],
        "summary": remote["summary"],
    }
    print(json.dumps(row, indent=2))
    stages = path.with_suffix(".stages.json")  # every Spark stage of the run, for a closer look
    stages.write_text(json.dumps(remote["stages"]))
    spark.stop()
    assert same, "the engines disagree"
    assert same_candidates, "not the same candidates (up to the local engine's collisions)"


if __name__ == "__main__":
    main()
