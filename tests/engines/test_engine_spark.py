"""The Spark engine gives the local engine's answer: pairs, clusters, kept and removed sets.

Real Spark (``local[2]``), one session for the test run; the tests share one xdist group so
that only one worker starts it. Arrow batches of 16 rows make every grouped stage see its
groups (a document's keys, a key's documents, a component) cut across batches.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pytest

import neardup
from neardup.dedup import DedupConfig, deduplicate
from neardup.dedup.cluster import KeepPolicy, cluster_table
from neardup.engines.spark.spark_dedup import spark_dedup
from neardup.engines.spark.task_cores import on_task_cores
from neardup.errors import ConfigError, InputError
from sparkout import assert_same_outputs, spark_lines

pytestmark = pytest.mark.xdist_group("spark")  # one worker, one Spark session


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("neardup-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "16")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# ── corpora ──────────────────────────────────────────────────────────────────────────────────


def random_corpus(seed: int, n: int = 160) -> list[tuple[str, str]]:
    """Originals, light edits, truncations, quotations, mass copies, a shared footer, an
    empty text: every branch of the rules (containers, templates, capped buckets)."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(500)]
    footer = " ".join(rng.choice(words) for _ in range(25))
    originals = [" ".join(rng.choice(words) for _ in range(rng.randint(30, 90))) for _ in range(40)]
    docs = []
    for i in range(n):
        base = rng.choice(originals).split()
        kind = rng.random()
        if kind < 0.25:  # light edit
            for _ in range(rng.randint(0, 5)):
                base[rng.randrange(len(base))] = rng.choice(words)
        elif kind < 0.4:  # a part of it
            start = rng.randrange(len(base) // 2)
            base = base[start : start + rng.randint(10, len(base))]
        elif kind < 0.5:  # quoting another text
            base = base + rng.choice(originals).split()[: rng.randint(10, 40)]
        elif kind < 0.6:  # a mass copy
            base = originals[0].split()
        text = " ".join(base)
        if rng.random() < 0.3:
            text += " " + footer
        docs.append((f"d{i:04d}", text))
    docs.insert(rng.randrange(n), ("empty", "  "))
    return docs


def sample_corpus() -> list[tuple[str, str]]:
    """The bundled benchmark-like sample (English, Russian, Chinese; copies, rewrites, HTML,
    quotations)."""
    from neardup.io.sample_corpus import sample_documents

    return [(d["id"], d["text"]) for d in sample_documents()]


# ── comparison ───────────────────────────────────────────────────────────────────────────────


def local_answer(docs, config, values=None):
    result = deduplicate(
        docs, config, field_values=(lambda: values) if values is not None else None
    )
    ids = result.ids
    table = cluster_table(result.labels, result.keepers)
    return {
        "removed": {ids[i]: ids[result.keep_of[i]] for i in np.flatnonzero(result.removed)},
        "clusters": [([ids[m] for m in c.members.tolist()], ids[c.keep]) for c in table],
        "pairs": {
            (ids[a], ids[b]): (s, lr, rl)
            for a, b, s, lr, rl in zip(
                result.pairs.left.tolist(),
                result.pairs.right.tolist(),
                result.pairs.score.tolist(),
                result.pairs.score_lr.tolist(),
                result.pairs.score_rl.tolist(),
                strict=True,
            )
        },
        "counts": {
            "candidate_pairs": result.candidates,
            "capped_buckets": result.capped_buckets,
            "template_shingles": result.template_shingles,
            "declined_pairs": result.declined,
            "empty_documents": int(result.empty.size),
        },
        "kept": {ids[i] for i in np.flatnonzero(~result.removed)},
    }


def spark_answer(spark, docs, config, extra=None, **options):
    rows = [(i, t, *(extra[k] if extra else ())) for k, (i, t) in enumerate(docs)]
    schema = "id string, text string" + (", rank double" if extra else "")
    frame = spark.createDataFrame(rows, schema).repartition(3)  # the order is given apart
    frame = frame.join(
        spark.createDataFrame([(i, k) for k, (i, _) in enumerate(docs)], "id string, pos long"),
        "id",
    )
    # a few pairs per task: many groups, several in a partition, documents in several
    result = spark_dedup(frame, config, order="pos", pairs_per_task=40, **options)
    clusters = result.clusters.orderBy("cluster").collect()
    summary = result.summary()
    return {
        "removed": {r["id"]: r["_duplicate_of"] for r in result.removed.collect()},
        "clusters": [(list(r["ids"]), r["keep"]) for r in clusters],
        "numbers": [r["cluster"] for r in clusters],
        "pairs": {
            (r["a"], r["b"]): (r["score"], r["score_a_in_b"], r["score_b_in_a"])
            for r in result.pairs.collect()
        },
        "counts": {
            k: summary[k]
            for k in (
                "candidate_pairs",
                "capped_buckets",
                "template_shingles",
                "declined_pairs",
                "empty_documents",
            )
        },
        "kept": {r["id"] for r in result.kept.collect()},
    }


def assert_same(spark, docs, config, values=None):
    local = local_answer(docs, config, values)
    extra = [(v,) for v in values] if values is not None else None
    remote = spark_answer(spark, docs, config, extra)
    assert remote["removed"] == local["removed"]
    assert remote["kept"] == local["kept"]
    assert remote["clusters"] == local["clusters"]
    assert remote["numbers"] == list(range(len(local["clusters"])))
    assert remote["pairs"] == local["pairs"]  # the scores to the last bit
    assert remote["counts"] == local["counts"]
    return local


# ── tests ────────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("corpus_task_keys", [0, 1 << 26])
def test_defaults_on_a_random_corpus_equal_the_local_engine(spark, monkeypatch, corpus_task_keys):
    """Candidates found in one task as locally, or (0 keys there) by count tables, entries
    and buckets spread over tasks: the local engine's answer either way."""
    from neardup.engines.spark import spark_dedup as engine

    monkeypatch.setattr(engine, "CORPUS_TASK_KEYS", corpus_task_keys)
    local = assert_same(spark, random_corpus(1), DedupConfig(max_bucket=12))
    # the corpus exercises what it is meant to
    assert local["removed"]
    assert local["counts"]["capped_buckets"] > 0
    assert local["counts"]["template_shingles"] > 0
    assert local["counts"]["declined_pairs"] > 0


@pytest.mark.parametrize("driver_words", [0, 1 << 23])
def test_identity_on_files_sharing_licences_equals_the_local_engine(
    spark, monkeypatch, driver_words
):
    """Rare words counted by a row per word entry (none brought to the driver) or a few
    rows a word and partition: the local engine's refusals."""
    from neardup.engines.spark import spark_dedup as engine
    from tests.dedup.test_identity import corpus

    monkeypatch.setattr(engine, "DRIVER_WORDS", driver_words)

    docs = [doc for seed in range(3) for doc in corpus(seed)]  # ids repeat: renamed
    docs = [(f"f{i}", text) for i, (_, text) in enumerate(docs)]
    config = DedupConfig(template_df=0)
    local = assert_same(spark, docs, config)
    loose = local_answer(docs, DedupConfig(template_df=0, identity=False))
    assert len(loose["removed"]) > len(local["removed"])  # the check refused removals


def test_exact_counts_give_the_local_engine_answer(spark):
    """The prefix order from exact key counts (forced: the count tables serve this corpus)
    finds other candidates than the local estimate, but the same pairs, clusters, kept and
    removed documents: the filter is exact for any order shared by every document."""
    docs, config = random_corpus(1), DedupConfig(max_bucket=12)
    local = local_answer(docs, config)
    remote = spark_answer(spark, docs, config, exact_counts=True)
    for part in ("pairs", "clusters", "kept", "removed"):
        assert remote[part] == local[part], part
    assert remote["counts"]["declined_pairs"] == local["counts"]["declined_pairs"]
    assert remote["counts"]["capped_buckets"] > 0


@pytest.mark.parametrize("merge_bytes", [0, 1 << 26])
def test_count_tables_of_several_tasks_merged_either_way_give_the_local_answer(
    spark, monkeypatch, merge_bytes
):
    """Several tasks fill count and mark tables (a few keys each): merged by Spark chunk by
    chunk (0 bytes merged on the driver) or on the driver, the same order as locally."""
    from neardup.engines.spark import spark_dedup as engine

    monkeypatch.setattr(engine, "KEYS_PER_TABLE", 500)
    monkeypatch.setattr(engine, "CORPUS_TASK_KEYS", 0)
    monkeypatch.setattr(engine, "DRIVER_MERGE_BYTES", merge_bytes)
    assert assert_same(spark, random_corpus(1), DedupConfig(max_bucket=12))["removed"]


@pytest.mark.parametrize(("driver", "broadcast"), [(0, 0), (0, 1 << 21), (1 << 23, 0)])
def test_template_shingles_joined_either_way_give_the_local_answer(
    spark, monkeypatch, driver, broadcast
):
    """The rescored documents' shingles brought to the driver and sent to the tasks that
    count their holders, or (none brought: 0) sent to every task as a table (the holders
    filtered where they are) or joined with the holders by a shuffle (0 sent): the same
    template shingles."""
    from neardup.engines.spark import spark_dedup as engine

    monkeypatch.setattr(engine, "DRIVER_WORDS", driver)
    monkeypatch.setattr(engine, "BROADCAST_SHINGLES", broadcast)
    local = assert_same(spark, random_corpus(1), DedupConfig(max_bucket=12))
    assert local["counts"]["template_shingles"] > 0


def copies_corpus(seed: int, n: int = 90) -> list[tuple[str, str]]:
    """A random corpus whose texts are copied 4 to 9 times each (light edits, parts):
    with ``max_bucket=3`` most buckets are capped."""
    rng = random.Random(seed)
    words = [f"v{i}" for i in range(300)]
    originals = [" ".join(rng.choice(words) for _ in range(rng.randint(20, 60))) for _ in range(8)]
    docs = []
    for i in range(n):
        base = originals[i % len(originals) if i < 40 else rng.randrange(3)].split()
        if rng.random() < 0.4:
            for _ in range(rng.randint(1, 3)):
                base[rng.randrange(len(base))] = rng.choice(words)
        elif rng.random() < 0.3:
            base = base[: rng.randint(len(base) // 2, len(base))]
        docs.append((f"c{i:03d}", " ".join(base)))
    rng.shuffle(docs)
    return docs


@pytest.mark.parametrize("template_df", [0, 4])
@pytest.mark.parametrize("corpus_task_keys", [0, 1 << 26])
def test_capped_buckets_on_a_random_corpus_equal_the_local_engine(
    spark, monkeypatch, template_df, corpus_task_keys
):
    from neardup.engines.spark import spark_dedup as engine

    monkeypatch.setattr(engine, "CORPUS_TASK_KEYS", corpus_task_keys)
    docs = copies_corpus(5)
    local = assert_same(spark, docs, DedupConfig(max_bucket=3, template_df=template_df))
    assert local["counts"]["capped_buckets"] > 10
    assert local["removed"]


def test_minhash_on_a_random_corpus_equals_the_local_engine(spark):
    local = assert_same(spark, random_corpus(2), DedupConfig(method="minhash", max_bucket=8))
    assert local["removed"]


def test_chain_longest_and_resemblance_equal_the_local_engine(spark):
    config = DedupConfig(
        measure="resemblance", threshold=0.5, chain=True, keep=KeepPolicy.parse("longest")
    )
    assert assert_same(spark, random_corpus(3), config)["removed"]


def test_keep_by_field_equals_the_local_engine(spark):
    docs = random_corpus(4, n=100)
    values = np.array([float((7 * k) % 11) for k in range(len(docs))], dtype=object)
    config = DedupConfig(keep=KeepPolicy.parse("field:rank:min"), template_df=3)
    assert assert_same(spark, docs, config, values)["removed"]


@pytest.mark.parametrize("method", ["full", "minhash"])
def test_sample_bench_corpus_equals_the_local_engine(spark, method):
    assert assert_same(spark, sample_corpus(), DedupConfig(method=method))["clusters"]


def test_row_order_is_the_input_order_without_an_order_column(spark):
    docs = random_corpus(5, n=60)
    local = local_answer(docs, DedupConfig())
    frame = spark.createDataFrame(docs, "id string, text string").coalesce(2)
    result = spark_dedup(frame, DedupConfig())
    assert {r["id"]: r["_duplicate_of"] for r in result.removed.collect()} == local["removed"]


def test_ids_keep_their_type_in_pairs_and_clusters(spark):
    """Integer ids come out as integers from the outcome on the driver, with the local
    engine's pairs and clusters."""
    docs = random_corpus(7, n=60)
    number = {doc_id: k for k, (doc_id, _) in enumerate(docs)}
    local = local_answer(docs, DedupConfig())
    frame = spark.createDataFrame([(number[i], t) for i, t in docs], "id long, text string")
    result = spark_dedup(frame, DedupConfig())
    pairs = result.pairs.collect()
    assert pairs
    assert all(isinstance(p["a"], int) and isinstance(p["b"], int) for p in pairs)
    assert {(p["a"], p["b"]) for p in pairs} == {(number[a], number[b]) for a, b in local["pairs"]}
    clusters = sorted(result.clusters.collect(), key=lambda c: c["cluster"])
    assert [(c["ids"], c["keep"]) for c in clusters] == [
        ([number[i] for i in members], number[keep]) for members, keep in local["clusters"]
    ]


@pytest.mark.parametrize("on_driver", [0, 1 << 22])
def test_a_duplicate_id_is_named_with_its_count(spark, monkeypatch, on_driver):
    """Counted on the driver, or by Spark's aggregation beyond the driver's bound."""
    from neardup.engines.spark import spark_dedup as engine

    monkeypatch.setattr(engine, "IDS_ON_DRIVER", on_driver)
    rows = [("a", "x"), ("b", "y"), ("b", "z"), ("c", "w"), ("b", "v")]
    frame = spark.createDataFrame(rows, "id string, text string")
    with pytest.raises(InputError, match=r"^duplicate id 'b' \(3 documents\)$"):
        engine.check_distinct_ids(frame, "id")
    engine.check_distinct_ids(frame.where("id != 'b'"), "id")  # distinct: no error


def _on_disk_only(spark) -> set[int]:  # type: ignore[no-untyped-def]
    """The RDDs whose blocks the session holds on disk only (the fingerprint sets)."""
    infos = spark.sparkContext._jsc.sc().getRDDStorageInfo()
    levels = {i.id(): i.storageLevel() for i in infos}
    return {rdd for rdd, level in levels.items() if level.useDisk() and not level.useMemory()}


@pytest.mark.parametrize("method", ["defaults", "minhash"])
def test_the_fingerprint_sets_are_released_once_read(spark, method):
    """The sets kept on disk for the stages that read them (a local checkpoint with a local
    master) are freed once read, on the one task's path and on the distributed one."""
    before = _on_disk_only(spark)
    frame = spark.createDataFrame(random_corpus(6, n=60), "id string, text string")
    config = DedupConfig() if method == "defaults" else DedupConfig(method="minhash")
    result = spark_dedup(frame, config)
    assert result.removed.count() > 0
    assert _on_disk_only(spark) <= before


def test_a_cached_frame_is_released_as_a_checkpointed_one(spark):
    from pyspark import StorageLevel

    from neardup.engines.spark.spark_dedup import released

    cached = spark.range(1000).persist(StorageLevel.DISK_ONLY)
    assert cached.count() == 1000
    assert cached.is_cached
    released(cached)
    assert not cached.is_cached


def test_bad_input_is_named(spark):
    frame = spark.createDataFrame([("a", "x y z"), ("a", "x y z w")], "id string, text string")
    with pytest.raises(InputError, match="duplicate id 'a'"):
        spark_dedup(frame)
    frame = spark.createDataFrame([("a", None)], "id string, text string")
    with pytest.raises(InputError, match="no id or no text"):
        spark_dedup(frame)
    with pytest.raises(InputError, match="no column 'body'"):
        spark_dedup(frame, text_col="body")
    with pytest.raises(ConfigError, match="--no-verify"):
        spark_dedup(frame, DedupConfig(verify=False))


def test_kept_and_removed_keep_every_column(spark):
    docs = [("a", "one two three four five six"), ("b", "one two three four five six")]
    frame = spark.createDataFrame(
        [(i, t, json.dumps({"n": k})) for k, (i, t) in enumerate(docs)],
        "id string, text string, meta string",
    )
    result = spark_dedup(frame)
    (removed,) = result.removed.collect()
    assert (removed["id"], removed["meta"], removed["_duplicate_of"]) == ("b", '{"n": 1}', "a")
    assert [r["id"] for r in result.kept.collect()] == ["a"]


# ── the command line ─────────────────────────────────────────────────────────────────────────


def _dedup_with_both_engines(path, tmp_path, *spark_args, format_="jsonl"):
    """``neardup dedup`` of ``path`` into tmp_path/local and, on Spark, tmp_path/spark."""
    from clirun import run

    common = ["dedup", str(path), "--format", format_]
    local = run(*common, "--out", str(tmp_path / "local"))
    assert local.exit_code == 0, local.output
    remote = run(*common, "--out", str(tmp_path / "spark"), "--engine", "spark", *spark_args)
    assert remote.exit_code == 0, remote.output


@pytest.mark.parametrize("broadcast", [0, 1 << 22])
def test_cli_spark_engine_writes_what_the_local_engine_writes(
    spark, tmp_path, monkeypatch, broadcast
):
    """The outputs and the review joined to the input rows by a shuffle (0 documents in
    pairs broadcast) or with the decisions broadcast: the local engine's files."""
    from neardup.engines.spark import spark_dedup as engine
    from neardup.io.sample_corpus import sample_path

    monkeypatch.setattr(engine, "BROADCAST_DECISIONS", broadcast)
    with sample_path() as path:
        _dedup_with_both_engines(path, tmp_path, "--master", "local[2]")
    assert assert_same_outputs(tmp_path / "local", tmp_path / "spark")["removed"]
    if broadcast:  # the outcome on the driver: its outputs written there, as the local engine
        for name in ("pairs", "clusters", "review"):
            local_lines = (tmp_path / "local" / f"{name}.jsonl").read_text().splitlines()
            assert spark_lines(tmp_path / "spark" / name) == local_lines, name
    pairs = {(p["a"], p["b"]) for p in map(json.loads, spark_lines(tmp_path / "spark" / "pairs"))}
    from neardup.engines.local.explain import explain
    from neardup.engines.local.runread import open_run

    review = [json.loads(x) for x in spark_lines(tmp_path / "spark" / "review")]
    local_review = (tmp_path / "local" / "review.jsonl").read_text().splitlines()
    assert review == [json.loads(x) for x in local_review]  # the same records, weakest first
    assert any(r["missing"] for r in review)
    spark_run, local_run = open_run(tmp_path / "spark"), open_run(tmp_path / "local")
    assert spark_run.template is None  # the Spark engine writes no templates.npy
    for a, b in sorted(pairs):  # explain reads the part files: the local run's decisions
        there, here = explain(spark_run, a, b), explain(local_run, a, b)
        assert there.decision == here.decision
        assert there.written == here.written
        assert there.scored == here.scored


def test_cli_spark_engine_reads_the_one_task_rows_in_spark_past_the_driver_bound(
    spark, tmp_path, monkeypatch
):
    """One task pairs the sample; with more of its rows than the driver collects, the
    counts, the decisions and the pairs are read from them by Spark's jobs: the local
    engine's files all the same."""
    from neardup.engines.spark import outcome
    from neardup.engines.spark import spark_dedup as engine
    from neardup.io.sample_corpus import sample_path

    monkeypatch.setattr(outcome, "OUTCOME_ROWS", 1)
    read_by_spark = []
    first = engine.WholeCorpus.frames
    monkeypatch.setattr(
        engine.WholeCorpus,
        "frames",
        lambda self: read_by_spark.append(self.rows is None) or first(self),
    )
    with sample_path() as path:
        _dedup_with_both_engines(path, tmp_path, "--master", "local[2]")
    assert read_by_spark == [True]
    assert assert_same_outputs(tmp_path / "local", tmp_path / "spark")["removed"]


@pytest.mark.parametrize("texts_in_one_task", [0, 1 << 28])
def test_cli_spark_engine_bounds_the_review_as_the_local_engine(
    spark, tmp_path, monkeypatch, texts_in_one_task
):
    """The review bounded as the local engine bounds it, from the outcome on the driver (the
    reviewed texts read in one task) or by Spark's jobs (the texts over what one task
    reads)."""
    import neardup.engines.local.pipeline as pipeline
    import neardup.engines.spark.spark_review as spark_review
    from neardup.io.sample_corpus import sample_path

    monkeypatch.setattr(pipeline, "MAX_REVIEWED", 1)
    monkeypatch.setattr(spark_review, "MAX_REVIEWED", 1)
    monkeypatch.setattr(spark_review, "TEXTS_IN_ONE_TASK", texts_in_one_task)
    with sample_path() as path:
        _dedup_with_both_engines(path, tmp_path, "--master", "local[2]")
    review = [json.loads(x) for x in spark_lines(tmp_path / "spark" / "review")]
    local = [json.loads(x) for x in (tmp_path / "local" / "review.jsonl").read_text().splitlines()]
    assert review == local
    lossy = [r for r in review if r["containment"] != 1.0]
    assert lossy[0]["missing"]
    assert all(r["missing"] is None for r in lossy[1:])
    assert len(lossy) > 1


def test_cli_spark_engine_bad_input_is_one_line(spark, tmp_path):
    from clirun import neardup

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "one two three"}\n{"id": "b", "text": 5}\n')
    done = neardup(
        "dedup", str(bad), "--out", str(tmp_path / "o"), "--engine", "spark", "--master", "local[1]"
    )
    assert done.returncode == 1
    assert f"{bad}:2: field 'text' is" in done.stderr
    assert "Traceback" not in done.stderr
    done = neardup("dedup", str(bad), "--out", str(tmp_path / "o"), "--master", "local[1]")
    assert done.returncode == 2
    assert "--master goes with --engine spark" in done.stderr


@pytest.mark.parametrize("driver_edges", [0, 1 << 22])
def test_large_star_small_star_components_equal_union_find(spark, monkeypatch, driver_edges):
    """By rounds of DataFrame operations (no edges labelled on the driver) or on the driver:
    the local union-find's labels."""
    from neardup.dedup.cluster import connected_components
    from neardup.engines.spark import graph
    from neardup.engines.spark.graph import component_labels

    monkeypatch.setattr(graph, "DRIVER_EDGES", driver_edges)

    rng = np.random.default_rng(7)
    n = 300
    left = rng.integers(0, n, 240)
    right = rng.integers(0, n, 240)
    path = np.arange(40, 80)  # a long path: the worst case for label propagation
    left = np.concatenate((left, path[:-1]))
    right = np.concatenate((right, path[1:]))
    edges = spark.createDataFrame(
        [(int(a), int(b)) for a, b in zip(left, right, strict=True)], "src long, dst long"
    )
    found = {r["node"]: r["label"] for r in component_labels(edges).collect()}
    labels = connected_components(n, left, right)
    in_edges = set(left[left != right].tolist()) | set(right[left != right].tolist())
    assert found == {d: int(labels[d]) for d in sorted(in_edges)}


def test_cli_spark_engine_reads_parquet_as_the_local_engine(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    docs = random_corpus(6, n=50)
    table = pa.table(
        {"id": [i for i, _ in docs], "text": [t for _, t in docs], "n": list(range(len(docs)))}
    )
    path = tmp_path / "docs.parquet"
    pq.write_table(table, path, row_group_size=7)
    _dedup_with_both_engines(path, tmp_path, format_="parquet")
    for name in ("kept", "removed"):
        wanted = pq.read_table(tmp_path / "local" / f"{name}.parquet").to_pylist()
        got = pq.read_table(tmp_path / "spark" / name).to_pylist()
        assert sorted(got, key=lambda r: r["n"]) == sorted(wanted, key=lambda r: r["n"])
    assert pq.read_table(tmp_path / "local" / "removed.parquet").num_rows > 0


def test_cli_spark_engine_refuses_or_skips_parquet_rows_without_text(spark, tmp_path):
    """A Parquet row without its text is a bad record: the first named and the run refused,
    or with ``--skip-bad`` every one counted, as the local engine counts them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from clirun import neardup, run

    docs = random_corpus(8, n=40)
    texts = [None if k % 7 == 3 else t for k, (_, t) in enumerate(docs)]
    path = tmp_path / "docs.parquet"
    pq.write_table(pa.table({"id": [i for i, _ in docs], "text": texts}), path)
    common = ["dedup", str(path), "--format", "parquet", "--engine", "spark"]
    refused = neardup(*common, "--master", "local[1]", "--out", str(tmp_path / "refused"))
    assert refused.returncode == 1
    assert "row 4: no text in field 'text'" in refused.stderr
    assert "Traceback" not in refused.stderr
    counts = {}
    for engine in ("local", "spark"):
        out = tmp_path / engine
        done = run(*common[:-1], engine, "--skip-bad", "--out", str(out))
        assert done.exit_code == 0, done.output
        counts[engine] = json.loads((out / "summary.json").read_text())["bad_records"]
    assert counts == {"local": 6, "spark": 6}


# ── the session's Python workers and the output directory ────────────────────────────────────


def _fake_python(tmp_path, version):
    """A ``python`` script running this interpreter with a package ``neardup`` of
    ``version`` (nothing else in it) first on its path. Its path names the version: Spark
    keeps a Python worker per interpreter path, and a later test's directory may have the
    name of an earlier one's, removed when it passed."""
    root = tmp_path / f"neardup-{version}"
    package = root / "fake" / "neardup"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f"__version__ = {version!r}\n")
    script = root / "python"
    script.write_text(
        f'#!/bin/sh\nPYTHONPATH={root / "fake"}:$PYTHONPATH exec {sys.executable} "$@"\n'
    )
    script.chmod(0o755)
    return script


@pytest.mark.skipif(os.cpu_count() < 2, reason="one core: a task's threads are the machine's")
def test_a_stage_of_many_tasks_runs_its_kernels_on_its_task_s_core_then_gives_the_worker_back(
    spark,
):
    def probe(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import numba

        inside: list[int] = []

        def stage(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in batches:
                inside.append(numba.get_num_threads())
                yield batch

        for _ in on_task_cores(stage)(batches):
            pass
        after, machine = numba.get_num_threads(), numba.config.NUMBA_NUM_THREADS
        n = len(inside)
        yield pa.RecordBatch.from_pydict(
            {"inside": inside, "after": [after] * n, "machine": [machine] * n}
        )

    schema = "inside long, after long, machine long"
    rows = spark.range(3, numPartitions=1).mapInArrow(probe, schema).collect()
    assert {row.inside for row in rows} == {1}  # spark.task.cpus: 1
    assert all(row.after == row.machine >= 2 for row in rows)


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("0.0.0", r"the Python workers on \S+ run neardup 0\.0\.0 \(.*/python, Python 3\.\d+\), "
                  r"this command neardup " + re.escape(neardup.__version__)),
        (neardup.__version__, r"the Python workers cannot import neardup on \S+ \(.*\): "
                              r"ModuleNotFoundError: No module named 'neardup\.engines'"),
    ],
)  # fmt: skip
def test_workers_running_another_neardup_are_refused(
    spark, tmp_path, monkeypatch, version, message
):
    from neardup.engines.spark.spark_session import prepare_workers, spark_session

    monkeypatch.setenv("PYSPARK_PYTHON", str(_fake_python(tmp_path, version)))
    try:
        with pytest.raises(ConfigError, match=message):
            spark_session()
    finally:
        monkeypatch.undo()
        prepare_workers(spark)  # the driver's interpreter again, for the other tests
    assert spark.sparkContext.pythonExec == sys.executable


@pytest.mark.parametrize("existing", ["file", "foreign"])
def test_an_output_path_holding_other_things_is_refused_before_any_work(spark, tmp_path, existing):
    from neardup.engines.local.pipeline import Inputs
    from neardup.engines.spark.spark_files import run_spark_dedup
    from neardup.io.sample_corpus import sample_path

    out = tmp_path / "out"
    if existing == "file":
        out.write_text("mine")
        message = "exists and is not a directory"
    else:
        out.mkdir()
        (out / "notes.txt").write_text("mine")
        (out / "kept").mkdir()  # an earlier run's output: may go
        message = r"exists and holds what is not an output of neardup dedup \(notes\.txt\)"
    with sample_path() as path, pytest.raises(InputError, match=f"--out {out} {message}"):
        run_spark_dedup(Inputs((str(path),)), str(out), DedupConfig())
    assert (out if existing == "file" else out / "notes.txt").read_text() == "mine"


def test_an_earlier_run_in_the_output_path_is_replaced(spark, tmp_path):
    from neardup.io.sample_corpus import sample_path

    with sample_path() as path:
        _dedup_with_both_engines(path, tmp_path, "--master", "local[2]")
        _dedup_with_both_engines(path, tmp_path, "--master", "local[2]")
    assert assert_same_outputs(tmp_path / "local", tmp_path / "spark")["removed"]


def _gzipped_sample(path) -> bytes:
    import gzip

    from neardup.io.sample_corpus import sample_path

    with sample_path() as sample:
        data = gzip.compress(sample.read_bytes())
    path.write_bytes(data)
    return data


def test_cli_spark_engine_reads_a_whole_gz_as_the_local_engine(spark, tmp_path):
    path = tmp_path / "sample.jsonl.gz"
    _gzipped_sample(path)
    _dedup_with_both_engines(path, tmp_path, "--master", "local[2]")
    assert assert_same_outputs(tmp_path / "local", tmp_path / "spark")["removed"]


@pytest.mark.parametrize(
    ("how", "word"), [("cut10", "truncated"), ("half", "truncated"), ("noise", "corrupt")]
)
@pytest.mark.parametrize("layout", ["file", "directory", "glob"])
def test_cli_spark_engine_refuses_a_damaged_gz_even_with_skip_bad(
    spark, tmp_path, how, word, layout
):
    from clirun import neardup

    folder = tmp_path / "parts.jsonl"  # a directory Spark reads as JSONL
    folder.mkdir()
    whole = _gzipped_sample(folder / "a.jsonl.gz")
    if how == "cut10":
        damaged = whole[:-10]
    elif how == "half":
        damaged = whole[: len(whole) // 2]
    else:
        middle = len(whole) // 2
        damaged = whole[:middle] + bytes(random.Random(7).randrange(256) for _ in range(40))
        damaged += whole[middle + 40 :]
    bad = folder / "b.jsonl.gz"
    bad.write_bytes(damaged)
    given = {"file": bad, "directory": folder, "glob": folder / "*.jsonl.gz"}[layout]
    out = tmp_path / "out"
    done = neardup(
        "dedup", str(given), "--out", str(out), "--engine", "spark", "--master", "local[2]",
        "--skip-bad",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("neardup: error:")]
    assert len(errors) == 1, done.stderr
    assert str(bad) in errors[0]
    assert word in errors[0]
    assert not out.exists()


def test_cli_spark_engine_copies_lines_as_the_local_engine(spark, tmp_path):
    """Two inputs, the first with a BOM, blank lines, trailing spaces and tabs and a bad
    record skipped: the same documents, and the kept and removed lines byte for byte."""
    from clirun import run

    texts = [" ".join(f"w{(i * 7 + k) % 50}" for k in range(60)) for i in range(6)]
    one = tmp_path / "one.jsonl"
    one.write_bytes(
        b"\xef\xbb\xbf"
        + "\n".join(
            [
                json.dumps({"id": "a", "text": texts[0]}) + "  ",
                "",
                json.dumps({"id": "b", "text": texts[0] + " w1"}) + "\t",
                '{"id": "bad", "text": 5}',
                "   ",
                json.dumps({"id": "c", "text": texts[1]}),
            ]
        ).encode()
        + b"\n"
    )
    two = tmp_path / "two.jsonl"
    lines = [json.dumps({"id": f"t{i}", "text": texts[i % 3] + f" x{i}"}) for i in range(6)]
    two.write_text("\n".join(lines) + " \n")
    common = ["dedup", str(one), str(two), "--skip-bad"]
    local = run(*common, "--out", str(tmp_path / "local"))
    assert local.exit_code == 0, local.output
    remote = run(*common, "--out", str(tmp_path / "spark"), "--engine", "spark")
    assert remote.exit_code == 0, remote.output
    summary = assert_same_outputs(tmp_path / "local", tmp_path / "spark")
    assert summary["removed"] >= 3
    spark_summary = json.loads((tmp_path / "spark" / "summary.json").read_text())
    assert spark_summary["bad_records"] == 1
    kept = spark_lines(tmp_path / "spark" / "kept")
    assert any(line.startswith('{"id": "a"') for line in kept)  # no BOM, no trailing spaces


def test_cli_spark_engine_counts_every_bad_record_as_the_local_engine(spark, tmp_path):
    """More bad records than the summary names: both engines count them all and name the
    same first ones."""
    from clirun import run

    lines = []
    for k in range(30):
        lines.append(json.dumps({"id": f"d{k}", "text": f"story {k % 4} " * 40}))
        lines.append(f'{{"id": "bad{k}", "text": {k}}}')
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")
    common = ["dedup", str(path), "--skip-bad"]
    for engine, out in (("local", "local"), ("spark", "spark")):
        done = run(*common, "--out", str(tmp_path / out), "--engine", engine)
        assert done.exit_code == 0, done.output
    summary = assert_same_outputs(tmp_path / "local", tmp_path / "spark")
    assert summary["bad_records"] == 30
    assert len(summary["bad_examples"]) == 20


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--keep", "field:rank"], "--keep field:rank needs the local engine with JSONL inputs"),
        (["--format", "parquet"], "writes the records of JSONL inputs as JSONL only"),
    ],
)
def test_what_the_spark_engine_does_not_do_with_jsonl_is_refused_before_spark_starts(
    tmp_path, option, message
):
    from clirun import neardup

    path = tmp_path / "in.jsonl"
    path.write_text('{"id": "a", "text": "one two three"}\n')
    done = neardup("dedup", str(path), "--out", str(tmp_path / "o"), "--engine", "spark", *option)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "o").exists()


def test_the_driver_replaces_an_earlier_output_in_spark_s_layout(spark, tmp_path, monkeypatch):
    """An earlier run's part files go; one part file and the ``_SUCCESS`` marker stay, the
    rows handed over in several pieces arriving whole."""
    import pyarrow as pa

    from neardup.engines.spark import driver_files
    from neardup.engines.spark.driver_files import PART, write_json_lines

    monkeypatch.setattr(driver_files, "ROWS_AT_ONCE", 7)
    target = tmp_path / "pairs"
    target.mkdir()
    (target / "part-00003-old.json").write_text('{"stale": true}\n')
    rows = [{"a": f"doc-{i}", "score": i / 3} for i in range(40)]
    write_json_lines(spark, f"file://{target}", pa.Table.from_pylist(rows))
    assert sorted(p.name for p in target.iterdir() if not p.name.startswith(".")) == [
        "_SUCCESS",
        PART,
    ]
    assert [json.loads(line) for line in (target / PART).read_text().splitlines()] == rows
