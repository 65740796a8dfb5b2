"""The Spark engine's batch stages without Spark: grouping across batches, the count tables,
the buckets (the per-component decisions they rest on: ``test_keepers``)."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup.candidates import DEFAULT_HITS, bucket_pairs
from neardup.dedup.config import DedupConfig
from neardup.dedup.flow import (
    PrefixRule,
    corpus_candidates,
    decide_documents,
    prefix_rule,
    verify_corpus,
)
from neardup.dedup.prefix import (
    entry_counts,
    entry_prefix_flags,
    hit_flags,
    key_counts,
    pairing_entries,
    slots,
)
from neardup.engines.spark.batches import (
    bucket_stage,
    corpus_stage,
    count_table_stage,
    counted_bucket_stage,
    counted_pairs_stage,
    exact_pairing_stage,
    flat_lists,
    grouped,
    held_counts_stage,
    key_count_stage,
    list_array,
    mark_stage,
    merge_stage,
    scatter_stage,
    summed_counts,
    word_groups_stage,
)
from neardup.fingerprints.word_kernels import REPEATED, WORD


@settings(deadline=None)
@given(st.lists(st.integers(0, 6), max_size=60), st.integers(1, 7))
def test_grouped_never_splits_a_group(keys, size):
    keys = sorted(keys)
    batch = pa.RecordBatch.from_pydict({"g": pa.array(keys, pa.int64())})
    pieces = [batch.slice(i, size) for i in range(0, len(keys), size)]
    seen = [t.column("g").to_pylist() for t in grouped(iter(pieces), "g")]
    assert [k for t in seen for k in t] == keys
    assert all(seen)  # no empty table
    for a, b in itertools.pairwise(seen):
        assert a[-1] != b[0]  # a group lies in one table only


def test_lists_round_trip_through_arrow_as_int64():
    values = np.array([1, 2**63 + 5, 2**64 - 1, 7], dtype=np.uint64)
    offsets = np.array([0, 3, 3, 4])
    column = list_array(values, offsets)
    assert column.type == pa.list_(pa.int64())
    back, back_offsets = flat_lists(column.slice(1))
    assert back.tolist() == [7]
    assert back_offsets.tolist() == [0, 0, 1]


@settings(deadline=None, max_examples=40)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 7), st.booleans()), max_size=60),
    st.integers(1, 40),
    st.integers(2, 9),
    st.sampled_from([1, 2**29, 2**40, -(2**40)]),
)
def test_bucket_stage_gives_each_pair_once_a_chunk_with_its_bucket_count(entries, size, cap, scale):
    """Document numbers packed into a word a pair (below 2**32) or not (any int64s)."""
    entries = sorted({(k, d): (k, d, f) for k, d, f in entries}.values())  # a key once a doc
    keys = np.array([k for k, _, _ in entries], np.int64)
    docs = np.array([d for _, d, _ in entries], np.int64) * scale
    flags = np.array([f for _, _, f in entries], bool)
    order = np.lexsort((docs, keys))
    keys, docs, flags = keys[order], docs[order], flags[order]
    left, right, _ = bucket_pairs(keys, docs, cap, flags)
    expected: dict[tuple[int, int], int] = {}
    for pair in zip(left.tolist(), right.tolist(), strict=True):
        expected[pair] = expected.get(pair, 0) + 1
    shuffled = np.random.default_rng(size).permutation(len(entries))  # any order in
    table = pa.RecordBatch.from_pydict(
        {"key": keys[shuffled], "doc": docs[shuffled], "in_prefix": flags[shuffled]}
    )
    pieces = [table.slice(i, size) for i in range(0, len(entries), size)]
    summed: dict[tuple[int, int], int] = {}
    for batch in bucket_stage(cap, rows=size)(iter(pieces)):
        pairs = list(zip(batch["left"].to_pylist(), batch["right"].to_pylist(), strict=True))
        assert len(set(pairs)) == len(pairs)  # each pair once a chunk
        for pair, n in zip(pairs, batch["n"].to_pylist(), strict=True):
            summed[pair] = summed.get(pair, 0) + n
    assert summed == expected


@settings(deadline=None, max_examples=40)
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(1, 9), st.integers(2, 6))
def test_counted_pairs_packed_by_pair_keep_those_that_reach_their_need(seed, parts, size, cap):
    """Entries scattered with their documents' needs, paired per partition of keys, the
    pairs scattered again and summed per partition of pairs: exactly the pairs whose
    buckets in all partitions together reach the smaller of the two needs."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    sets = [np.unique(rng.integers(0, 25, int(rng.integers(0, 10)))) for _ in range(n)]
    offsets = np.r_[0, np.cumsum([x.size for x in sets])].astype(np.int64)
    keys = np.concatenate(sets).astype(np.uint64)
    flags = rng.random(keys.size) < 0.6
    need = rng.integers(1, 4, n)
    count = np.ones(keys.size, np.int64)  # every entry counted low enough to travel
    rows = [
        pa.RecordBatch.from_pydict(
            {
                "doc": np.arange(i, min(i + size, n)),
                "need": need[i : i + size],
                "key": list_array(
                    keys[offsets[i] : offsets[min(i + size, n)]],
                    offsets[i : min(i + size, n) + 1] - offsets[i],
                ),
                "count": list_array(
                    count[offsets[i] : offsets[min(i + size, n)]],
                    offsets[i : min(i + size, n) + 1] - offsets[i],
                ),
                "in_prefix": pa.ListArray.from_arrays(
                    pa.array((offsets[i : min(i + size, n) + 1] - offsets[i]).astype(np.int32)),
                    pa.array(flags[offsets[i] : offsets[min(i + size, n)]]),
                ),
            }
        )
        for i in range(0, n, size)
    ]
    labels = np.arange(parts) * 5 + 1

    def routed(batches):  # rows of a packed stage to the partition their part names
        out: dict[int, list[pa.RecordBatch]] = {int(label): [] for label in labels}
        for batch in batches:
            for r in range(batch.num_rows):
                out[batch.column("part")[r].as_py()].append(batch.slice(r, 1))
        return out.values()

    scatter = scatter_stage(labels, ("key", "in_prefix"), most=1, repeated=("need",))
    by_key = routed(scatter(iter(rows)))
    paired = [
        b for part in by_key for b in counted_bucket_stage(cap, labels, rows=size)(iter(part))
    ]
    found = {
        (a, b)
        for part in routed(paired)
        for batch in counted_pairs_stage()(iter(part))
        for a, b in zip(batch["left"].to_pylist(), batch["right"].to_pylist(), strict=True)
    }
    docs = np.repeat(np.arange(n), np.diff(offsets))
    order = np.lexsort((docs, keys))
    left, right, _ = bucket_pairs(keys[order].astype(np.int64), docs[order], cap, flags[order])
    shared: dict[tuple[int, int], int] = {}
    for pair in zip(left.tolist(), right.tolist(), strict=True):
        shared[pair] = shared.get(pair, 0) + 1
    expected = {p for p, k in shared.items() if k >= min(need[p[0]], need[p[1]])}
    assert found == expected


def _merged(stage, partitions, bitset):
    """A stage's chunks over each partition (lists of batches), merged as Spark would."""
    rows = [r for part in partitions for b in stage(iter(part)) for r in b.to_pylist()]
    rows.sort(key=lambda r: r["chunk"])
    batch = pa.RecordBatch.from_pylist(
        rows, schema=pa.schema([("chunk", pa.int64()), ("data", pa.binary())])
    )
    return {
        r["chunk"]: r["data"] for b in merge_stage(bitset)(iter([batch])) for r in b.to_pylist()
    }


@settings(deadline=None, max_examples=10)
@given(st.integers(0, 2**32), st.integers(1, 4), st.integers(1, 5), st.sampled_from([0.0, 0.5]))
def test_count_and_mark_tables_merged_from_partitions_are_the_local_ones(seed, parts, size, least):
    """The tables Spark merges from any split of the documents into partitions and batches
    equal the local engine's (saturating counts: some keys held by > 255 documents; with
    ``least`` > 0, keys counted ≤ 50 flagged by the hit prefix)."""
    rng = np.random.default_rng(seed)
    docs = [
        np.unique(rng.integers(0, 400 if d % 3 else 2**63, rng.integers(0, 40)).astype(np.uint64))
        for d in range(300)
    ]
    docs += [np.arange(5, dtype=np.uint64)] * 260  # saturates the counters
    offsets = np.r_[0, np.cumsum([d.size for d in docs])].astype(np.int64)
    keys = np.concatenate(docs)
    bits, chunk = 16, 1 << 12
    batches = [
        pa.RecordBatch.from_pydict(
            {"keys": list_array(keys[offsets[i] : offsets[j]], offsets[i : j + 1] - offsets[i])}
        )
        for i, j in itertools.pairwise([*range(0, len(docs), size * 7), len(docs)])
    ]
    partitions = [batches[p::parts] for p in range(parts)]
    local = key_counts(keys, bits)
    merged = _merged(count_table_stage(bits, chunk), partitions, bitset=False)
    table = np.zeros(2 << bits, np.uint8)
    for c, data in merged.items():
        table[c * chunk : (c + 1) * chunk] = np.frombuffer(data, np.uint8)
    assert np.array_equal(table.reshape(2, -1), local)
    count = entry_counts(keys, local, bits)
    flags = entry_prefix_flags(offsets, keys, count, 0.6, 10, 0.5)
    if least > 0.0:
        hit, _ = hit_flags(offsets, keys, count, least, DEFAULT_HITS, 50, 0.6, 10)
        flags = np.where(count <= 50, hit, flags)
    stage = mark_stage(local, bits, PrefixRule(0.6, 10, 0.5, least, 50), chunk // 8)
    marks = np.zeros((1 << bits) // 8, np.uint8)
    for c, data in _merged(stage, partitions, bitset=True).items():
        marks[c * chunk // 8 : (c + 1) * chunk // 8] = np.frombuffer(data, np.uint8)
    # the entries kept by the local filter are those whose mark bit Spark set (and count > 1)
    local_keep = pairing_entries(keys, flags, count, bits)
    s0, s1, mark = slots(keys, bits)
    count = np.minimum(local[0, s0], local[1, s1])
    spark_keep = ((marks[mark >> 3] >> (mark & 7).astype(np.uint8)) & 1).astype(bool) & (count > 1)
    assert np.array_equal(spark_keep, local_keep)


@settings(deadline=None, max_examples=15)
@given(st.integers(0, 2**32), st.integers(1, 4), st.integers(1, 9))
def test_exact_counts_from_partitions_of_keys_are_the_true_counts(seed, parts, size):
    """Entries scattered packed to partitions by key from batches of documents, counted per
    partition and sent back as a struct per document and partition: each document's entries get the
    number of documents holding their key; the keys held twice or more can pair, and the
    prefix is the one of those counts (frequent keys: counted above ``MAX_COUNT``)."""
    rng = np.random.default_rng(seed)
    docs = [
        np.unique(rng.integers(0, 300, rng.integers(0, 30))).astype(np.uint64) for _ in range(40)
    ]
    docs += [np.arange(3, dtype=np.uint64)] * 260  # held by more than MAX_COUNT documents
    offsets = np.r_[0, np.cumsum([d.size for d in docs])].astype(np.int64)
    keys = np.concatenate(docs)
    # documents in batches of ``size``, scattered packed to ``parts`` partitions of keys
    batches = [
        pa.RecordBatch.from_pydict(
            {
                "doc": np.arange(i, min(i + size, len(docs))),
                "key": list_array(
                    keys[offsets[i] : offsets[min(i + size, len(docs))]],
                    offsets[i : min(i + size, len(docs)) + 1] - offsets[i],
                ),
            }
        )
        for i in range(0, len(docs), size)
    ]
    labels = np.arange(parts) * 7 + 3
    packed: dict[int, list[pa.RecordBatch]] = {label: [] for label in labels.tolist()}
    for out in scatter_stage(labels, ("key",))(iter(batches)):
        for r in range(out.num_rows):
            packed[out.column("part")[r].as_py()].append(out.slice(r, 1))
    assert (
        sum(
            len(pa.Table.from_batches(b).column("key").combine_chunks().values)
            for b in packed.values()
            if b
        )
        == keys.size
    )
    rows: dict[int, list[dict]] = {d: [] for d in range(len(docs))}
    for part in packed.values():
        for out in key_count_stage()(iter(part)):
            for r in out.to_pylist():
                rows[r["doc"]].append({"keys": r["keys"], "counts": r["counts"]})
    shared = pa.array(
        [rows[d] for d in range(len(docs))],
        pa.list_(pa.struct([("keys", pa.list_(pa.int64())), ("counts", pa.list_(pa.int64()))])),
    )
    batch = pa.RecordBatch.from_pydict(
        {"doc": np.arange(len(docs)), "keys": list_array(keys, offsets), "shared": shared}
    )
    rule = PrefixRule(0.6, 10, 0.5, 0.5, 50)
    (out,) = exact_pairing_stage(rule, 10)(iter([batch]))
    distinct, held = np.unique(keys, return_counts=True)
    true = held[np.searchsorted(distinct, keys)]
    got_keys, got_offsets = flat_lists(out.column("key"))
    got_counts, _ = flat_lists(out.column("count"))
    assert np.array_equal(got_keys, keys[true > 1])
    assert np.array_equal(got_counts.view(np.int64), true[true > 1])
    assert np.array_equal(got_offsets, np.r_[0, np.cumsum(true > 1)][offsets])
    exact = np.minimum(true, 255).astype(np.uint8)
    flags = entry_prefix_flags(offsets, keys, exact, 0.6, 10, 0.5)
    hit, _ = hit_flags(offsets, keys, exact, 0.5, DEFAULT_HITS, 50, 0.6, 10)
    flags = np.where(true <= 50, hit, flags)
    got_flags = np.asarray(out.column("in_prefix").values.to_numpy(zero_copy_only=False))
    assert np.array_equal(got_flags, flags[true > 1])


@settings(deadline=None, max_examples=60)
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(1, 3))
def test_word_groups_from_partitions_give_each_word_s_documents_and_groups(seed, parts, most):
    """Summed over partitions, ``n`` counts a word's documents; its distinct groups, capped
    at ``most``, are as many as it has (up to ``most``) — what the rare words need."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    words = [
        np.unique(rng.integers(0, 12, int(rng.integers(0, 6)))).astype(np.uint64) for _ in range(n)
    ]
    words = [(w * np.uint64(0x9E3779B97F4A7C15)) & WORD for w in words]  # high bits set too
    words = [np.sort(w) for w in words]
    # as word sets hold them: some marked as repeated in their document (the mark is no word)
    marked = [w | (rng.random(w.size) < 0.5).astype(np.uint64) * REPEATED for w in words]
    nodes = np.unique(rng.integers(0, n, int(rng.integers(0, n + 1))))
    labels = np.array([min(nodes[nodes % 3 == d % 3]) for d in nodes], dtype=np.int64)
    all_words = np.unique(np.concatenate(words)) if n else np.empty(0, np.uint64)
    wanted = np.sort(rng.choice(all_words, min(all_words.size, 8), replace=False))
    stage = word_groups_stage(wanted, nodes, labels, most)
    cut = np.sort(rng.integers(0, n + 1, parts - 1))
    documents: dict[int, int] = {}
    groups: dict[int, set[int]] = {}
    for start, end in itertools.pairwise([0, *cut.tolist(), n]):
        batch = pa.RecordBatch.from_pydict(
            {
                "doc": pa.array(np.arange(start, end), pa.int64()),
                "words": list_array(
                    np.concatenate(marked[start:end] or [np.empty(0, np.uint64)]),
                    np.r_[0, np.cumsum([w.size for w in words[start:end]])],
                ),
            }
        )
        for out in stage(iter([batch])):
            w = out.column("w").to_numpy().view(np.uint64)
            g = out.column("g").to_numpy()
            for word, group, count in zip(
                w.tolist(), g.tolist(), out.column("n").to_pylist(), strict=True
            ):
                documents[word] = documents.get(word, 0) + count
                groups.setdefault(word, set()).add(group)
            assert max(np.unique(w, return_counts=True)[1], default=0) <= most
    group_of = dict(zip(nodes.tolist(), labels.tolist(), strict=True))
    for word in wanted.tolist():
        holders = [d for d in range(n) if word in words[d]]
        assert documents.get(word, 0) == len(holders)
        true_groups = {group_of.get(d, d) for d in holders}
        assert min(len(groups.get(word, set())), most) == min(len(true_groups), most)
        assert groups.get(word, set()) <= true_groups


@settings(deadline=None, max_examples=60)
@given(st.integers(0, 10_000), st.integers(1, 4), st.sampled_from([4, 8, 1 << 20]))
def test_held_counts_from_partitions_count_each_wanted_shingle_s_holders(seed, parts, chunk):
    """Summed over partitions: how many documents, the skipped ones left out, hold each
    wanted fingerprint (0 for one only skipped documents hold), in the wanted order; tables
    of one count a chunk, of two, or of all."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    sets = [
        np.unique(rng.integers(0, 15, int(rng.integers(0, 7))).astype(np.uint64)) for _ in range(n)
    ]
    sets = [np.sort(f * np.uint64(0x9E3779B97F4A7C15)) for f in sets]  # high bits set too
    every = np.unique(np.concatenate(sets))
    wanted = np.sort(rng.choice(every, min(every.size, 9), replace=False))
    skip = np.unique(rng.integers(0, n, int(rng.integers(0, n + 1))))
    stage = held_counts_stage(wanted, skip, chunk)
    cut = np.sort(rng.integers(0, n + 1, parts - 1))
    tables = []
    for start, end in itertools.pairwise([0, *cut.tolist(), n]):
        batch = pa.RecordBatch.from_pydict(
            {
                "doc": pa.array(np.arange(start, end), pa.int64()),
                "fps": list_array(
                    np.concatenate(sets[start:end] or [np.empty(0, np.uint64)]),
                    np.r_[0, np.cumsum([f.size for f in sets[start:end]])],
                ),
            }
        )
        tables += [pa.Table.from_batches([out]) for out in stage(iter([batch]))]
    counts = summed_counts(pa.concat_tables(tables), wanted.size, chunk)
    skipped = set(skip.tolist())
    expected = [
        sum(1 for d in range(n) if d not in skipped and value in sets[d])
        for value in wanted.tolist()
    ]
    assert counts.tolist() == expected


def test_the_corpus_stage_is_the_local_engine_whatever_the_rows_order():
    """Documents reaching the one task in any order and batches (as a coalesced hash
    partitioning gives them): the local engine's candidate and verified pairs of the sets in
    document order, on the documents' own numbers."""
    rng = np.random.default_rng(3)
    base = [np.unique(rng.integers(0, 400, rng.integers(20, 60))) for _ in range(6)]
    sets = []
    for d in range(60):
        own = base[d % 6].copy()
        own[rng.integers(0, own.size, 3)] = rng.integers(400, 10**6, 3)  # light edits
        sets.append(np.unique(own).astype(np.uint64))
    numbers = np.arange(60, dtype=np.int64) * 3 + 7  # the documents' numbers, with gaps
    config = DedupConfig(max_bucket=12, identity=False)
    values = np.concatenate(sets)
    offsets = np.r_[0, np.cumsum([s.size for s in sets])]
    found = corpus_candidates(None, (values, offsets), config, prefix_rule(config))
    pairs, template = verify_corpus(found, (values, offsets), None, None, config)
    assert len(pairs) > 20

    def rows(order: np.ndarray) -> pa.RecordBatch:
        return pa.RecordBatch.from_pydict(
            {
                "doc": pa.array(numbers[order]),
                "length": pa.array(order.astype(np.int64) * 5),
                "fps": list_array(
                    np.concatenate([sets[i] for i in order]),
                    np.r_[0, np.cumsum([sets[i].size for i in order])],
                ),
            }
        )

    shuffled = rng.permutation(60)
    batches = [rows(shuffled[:25]), rows(shuffled[25:])]
    out = pa.Table.from_batches(list(corpus_stage(config, prefix_rule(config))(iter(batches))))
    scored = out.filter(pa.compute.equal(out.column("kind"), 0))
    assert scored.column("left").to_pylist() == numbers[pairs.left].tolist()
    assert scored.column("right").to_pylist() == numbers[pairs.right].tolist()
    assert scored.column("s_lr").to_pylist() == pairs.score_lr.tolist()
    counts = out.filter(pa.compute.equal(out.column("kind"), 1))
    assert counts.column("left").to_pylist() == [len(found)]
    # the keepers as the local engine decides them (lengths rank the documents: longest)
    at = pairs.take(pairs.score >= config.threshold)
    lengths = np.arange(60, dtype=np.int64) * 5
    decided = decide_documents(
        60, at, lengths, config, sets=(values, offsets), template=np.unique(template)
    )
    held = np.unique(np.r_[decided.pairs.left, decided.pairs.right])
    rows = out.filter(pa.compute.equal(out.column("kind"), 4)).to_pydict()
    docs = [d for d in rows["doc"] if d >= 0]
    assert docs == numbers[held].tolist()
    assert [k for d, k in zip(rows["doc"], rows["keep_of"], strict=True) if d >= 0] == (
        numbers[decided.keep_of[held]].tolist()
    )
    assert [k for d, k in zip(rows["doc"], rows["label"], strict=True) if d >= 0] == (
        numbers[decided.labels[held]].tolist()
    )
    assert sum(rows["declined"]) == decided.declined
    assert (decided.keep_of != np.arange(60)).any()  # some are removed
