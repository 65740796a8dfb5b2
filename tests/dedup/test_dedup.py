"""Dedup end to end on texts written for the test: copies, rewrites, quotations, negatives."""

from functools import partial
from pathlib import Path

import numpy as np
import pytest

from neardup.dedup import DedupConfig, deduplicate
from neardup.dedup.cluster import KeepPolicy
from neardup.dedup.core import _KeyParts, _read_and_fingerprint, _sketch_all, _Spill
from neardup.errors import ConfigError
from neardup.fingerprints.shingles import fingerprint_batch
from neardup.io.blocks import pairs_batch
from neardup.io.sample_corpus import sample_documents
from neardup.methods import METHOD_NAMES
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

STORY = (
    "The night ferry left the harbour an hour late because a storm had closed the northern "
    "channel. Passengers waited in the terminal drinking tea while the crew checked the "
    "engines, and the captain walked along the benches explaining the delay to every family. "
    "When the ship finally sailed, the sea was calm and the lights of the town slowly faded "
    "behind the breakwater."
)
REWRITE = STORY.replace("an hour late", "sixty minutes late").replace("slowly", "gradually")
QUOTE = "the captain walked along the benches explaining the delay to every family"
ESSAY = (
    "Good service is mostly about attention. I remember one trip when "
    f"{QUOTE}, which nobody had asked him to do, and it changed the mood of the whole room."
)
OTHER = (
    "Bees collect nectar from clover and lime trees in early summer; the beekeeper lifts the "
    "frames slowly, checks the brood and adds another box when the colony grows crowded."
)
DOCS = [
    ("story", STORY),
    ("other", OTHER),
    ("rewrite", REWRITE),
    ("essay", ESSAY),
    ("copy", STORY),
    ("empty", "   "),
    ("quote", QUOTE),
]


def clusters(result):
    groups = {}
    for i, label in enumerate(result.labels):
        groups.setdefault(int(label), []).append(result.ids[i])
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def test_defaults_find_copy_rewrite_and_quoted_text_but_not_the_others():
    result = deduplicate(DOCS)
    assert clusters(result) == [["copy", "quote", "rewrite", "story"]]
    kept = [result.ids[i] for i in np.flatnonzero(~result.removed)]
    assert kept == ["story", "other", "essay", "empty"]  # the essay only cites one sentence
    assert result.empty.tolist() == [5]
    quote = result.ids.index("quote")
    row = np.flatnonzero((result.pairs.left == 0) & (result.pairs.right == quote))
    assert result.pairs.containment_rl[row[0]] == 1.0  # all of the quote is in the story
    assert result.pairs.resemblance[row[0]] < 0.5


def test_resemblance_misses_the_quoted_text():
    result = deduplicate(DOCS, DedupConfig(measure="resemblance", threshold=0.5))
    assert clusters(result) == [["copy", "rewrite", "story"]]


def test_guard_stops_chaining_and_chain_allows_it():
    a = " ".join(f"alpha{i}" for i in range(30))
    b = " ".join(f"beta{i}" for i in range(30))
    docs = [("ab", a + " " + b), ("a", a), ("b", b)]  # a ⊂ ab ⊃ b, a and b unrelated
    words = TextConfig(CanonConfig(stopwords=False), ShingleConfig(size=3))
    guarded = deduplicate(docs, DedupConfig(text=words, keep=KeepPolicy.parse("shortest")))
    # "ab" holds both halves: it is kept whatever the policy says, and takes both
    assert clusters(guarded) == [["a", "ab", "b"]]
    assert [guarded.ids[k] for k in guarded.keep_of] == ["ab", "ab", "ab"]
    chained = deduplicate(docs, DedupConfig(text=words, chain=True))
    assert clusters(chained) == [["a", "ab", "b"]]


@pytest.mark.parametrize("method", METHOD_NAMES)
def test_every_method_finds_the_exact_copy(method):
    config = DedupConfig(method=method, measure="resemblance", threshold=0.9)
    result = deduplicate(DOCS, config)
    assert ["copy", "story"] in clusters(result)


def test_no_verify_uses_the_methods_estimate():
    config = DedupConfig(method="minhash", measure="resemblance", threshold=0.8, verify=False)
    result = deduplicate(DOCS, config)
    assert any({"copy", "story"} <= set(c) for c in clusters(result))
    with pytest.raises(ConfigError, match="containment"):
        deduplicate(DOCS, DedupConfig(method="minhash", verify=False))


@pytest.mark.parametrize("weighting", ["count", "binary"])
def test_weighted_simhash_estimates_see_the_shingle_counts(weighting):
    # the run keeps shingle multiplicities only for a method that weighs by them: its
    # estimates are those of sketching the texts directly
    repeated = ("echo", " ".join([STORY] * 3 + [OTHER]))
    docs = [*DOCS, repeated]
    params = (("weighting", weighting),)
    config = DedupConfig(
        method="simhash", measure="resemblance", threshold=0.05, verify=False, params=params
    )
    result = deduplicate(docs, config)
    method = config.build_method()
    sigs = method.sketch(fingerprint_batch([text for _, text in docs], config.text))
    distance = method.score_pairs(sigs, result.pairs.left, result.pairs.right)
    assert len(result.pairs) > 0
    np.testing.assert_allclose(result.pairs.score, 1.0 - distance / 64.0)  # Hamming → score


def test_sample_corpus_clusters_by_language():
    docs = [(d["id"], d["text"]) for d in sample_documents()]
    found = [set(c) for c in clusters(deduplicate(docs))]
    assert any({"en-harbour", "en-harbour-page", "en-harbour-rewrite"} <= c for c in found)
    assert {"zh-tea", "zh-tea-rewrite"} in found
    assert any({"ru-bridge", "ru-bridge-rewrite"} <= c for c in found)
    assert not any("en-garden" in c or "zh-market" in c for c in found)


def test_bad_settings():
    for kwargs in ({"threshold": 0}, {"measure": "cosine"}, {"guard": 2.0}, {"batch_size": 0}):
        with pytest.raises(ConfigError):
            DedupConfig(**kwargs)


def test_batches_do_not_change_the_answer():
    one = deduplicate(DOCS, DedupConfig(batch_size=1))
    all_ = deduplicate(DOCS)
    assert clusters(one) == clusters(all_)


def test_minhash_bands_follow_the_run_threshold_unless_given():
    low = DedupConfig(method="minhash", threshold=0.5).build_method()
    high = DedupConfig(method="minhash", threshold=0.9).build_method()
    assert low.candidate_probability(0.5) > high.candidate_probability(0.5)
    fixed = DedupConfig(method="minhash", threshold=0.5, params=(("threshold", 0.9),))
    assert fixed.build_method().bands == high.bands


@pytest.mark.parametrize("method", ["full", "minhash"])
def test_a_text_copied_past_the_bucket_cap_is_kept_once(method):
    """Capped buckets pair their members with one document only; the copies still all meet
    the document their group is kept in (pairs to the final keeper are verified)."""
    from tests.textgen import text

    article = text(7, 300)
    docs = [(f"site{i}", f"{text(1000 + i, 25)} {article} {text(2000 + i, 15)}") for i in range(60)]
    # the document every capped bucket pairs with goes into a later one that holds it
    docs.append(("anthology", f"{docs[0][1]} {text(3000, 400)}"))
    result = deduplicate(docs, DedupConfig(method=method, max_bucket=3))
    assert result.removed.sum() == 60
    assert set(result.keep_of.tolist()) == {60}


# --- every LSH method: recall at the run's threshold ------------------------------------------
@pytest.mark.parametrize(
    ("method", "given", "attribute", "paper"),
    [
        ("simhash", (("max_distance", 3),), "blocks", 4),
        ("megashingle", (("groups", 6), ("group_size", 14)), "num_perm", 84),
    ],
)
def test_lsh_keys_follow_the_run_threshold_unless_given(method, given, attribute, paper):
    low = DedupConfig(method=method, threshold=0.6, measure="resemblance").build_method()
    high = DedupConfig(method=method, threshold=0.9, measure="resemblance").build_method()
    assert low.config_id != high.config_id
    assert low.config.threshold == 0.6
    fixed = DedupConfig(method=method, threshold=0.6, params=given).build_method()
    assert getattr(fixed.config, attribute) == paper


@pytest.mark.parametrize("measure", ["containment", "resemblance"])
@pytest.mark.parametrize("method", ["simhash", "megashingle"])
def test_dedup_command_finds_lightly_edited_copies_at_threshold_0_8(tmp_path, method, measure):
    """``neardup dedup --method M --threshold 0.8``: 200 texts and copies with 3 % of their
    words changed (resemblance ≈ 0.82): ≥ 95 % of the pairs found (expected ~97 % for
    simhash's 34 × 15 bit bands, ~96 % for megashingle's 10 × 4; the paper's keys found
    58 and 4 of 200)."""
    import json

    from clirun import run
    from textgen import near_copies

    originals, copies = near_copies(200, seed=4000)
    rows = [{"id": f"o{i}", "text": t} for i, t in enumerate(originals)]
    rows += [{"id": f"c{i}", "text": t} for i, t in enumerate(copies)]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    args = ["--method", method, "--threshold", "0.8", "--measure", measure]
    assert run("dedup", str(corpus), "--out", str(out), *args).exit_code == 0
    lines = (out / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    pairs = {frozenset((p["a"], p["b"])) for p in map(json.loads, lines)}
    wanted = {frozenset((f"o{i}", f"c{i}")) for i in range(200)}
    assert pairs <= wanted  # verified exactly: nothing else
    assert len(pairs) >= 190


@pytest.mark.parametrize("method", ["minhash", "simhash", "bottomn", "megashingle"])
def test_keys_made_beside_the_fingerprints_equal_the_sketch_stage_keys(method, tmp_path):
    """A verified run of a method without an IDF fit makes its keys on the worker threads,
    beside each batch's fingerprints: the same keys, and the same weak-signature notes, as
    sketching the spilled fingerprints afterwards."""
    texts = [f"story {i % 7} about the river and the town number {i}" * 3 for i in range(40)]
    docs = [(f"d{i}", text if i % 9 else "!!") for i, text in enumerate(texts)]
    config = DedupConfig(method=method, threshold=0.8, measure="resemblance", batch_size=8)
    built = config.build_method()
    parts, spill = _KeyParts(), _Spill(tmp_path, keep_counts=built.weighs_counts)
    for base in range(0, len(docs), 8):
        job = partial(pairs_batch, docs[base : base + 8])
        _, _, prints, keys, notes, _ = _read_and_fingerprint(job, config, built)
        parts.add(keys, base, notes)
        spill.add(prints)
    _, (docs_after, keys_after), notes_after = _sketch_all(built, spill, config)
    docs_early, keys_early = parts.arrays()
    whole = built.batch_keys(fingerprint_batch([text for _, text in docs], config.text))
    want = sorted(zip(whole.docs.tolist(), whole.keys.tolist(), strict=True))
    assert want
    assert sorted(zip(docs_early.tolist(), keys_early.tolist(), strict=True)) == want
    assert sorted(zip(docs_after.tolist(), keys_after.tolist(), strict=True)) == want
    assert parts.weak() == notes_after
    assert (method == "minhash") <= bool(notes_after)  # its note on the empty documents


def _resident_kib(path: str) -> int:
    """KiB of the file at ``path`` resident in this process's mappings (/proc/self/smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()
            if "-" in head[0] and not head[0].endswith(":"):  # a mapping's first line
                inside = len(head) > 5 and head[5] == path
            elif inside and head[0] == "Rss:":
                total += int(head[1])
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads Linux's smaps")
def test_the_spills_pages_leave_the_resident_set_between_stages(tmp_path):
    """What a stage read of the memory-mapped fingerprints is dropped from the process's
    resident memory when released (the data stays readable, mapped again)."""
    from neardup.dedup import score_candidates

    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(5000)]
    docs = [(str(d), " ".join(rng.choice(words, 300))) for d in range(300)]
    with score_candidates(docs, DedupConfig(), workdir=tmp_path) as scored:
        prints = scored.mapped[0]
        path = str(next(tmp_path.glob("neardup-*/fingerprints.u64")))
        first = int(prints.sum())  # every page read
        assert _resident_kib(path) > 64
        scored.release_pages()
        assert _resident_kib(path) == 0
        assert int(prints.sum()) == first


def test_pages_cleaned_on_processes_give_the_same_run(monkeypatch):
    """A run whose pages are cleaned on worker processes (from its first batch) finds the
    same pairs and keeps the same documents as one cleaning them on its threads."""
    import numba

    from neardup.text import canon, cleaning

    words = [f"word{k}" for k in range(400)]
    pages = []
    for i in range(120):
        body = " ".join(words[(i // 2) * 3 : (i // 2) * 3 + 150])
        pages.append(
            (
                f"p{i}",
                f"<html><body><nav>Menu {i}</nav><article><p>{body}</p>"
                f"<p>{'edited' if i % 2 else ''}</p></article></body></html>",
            )
        )
    config = DedupConfig(batch_size=40)
    monkeypatch.setattr(canon, "_MARKUP_CLEANED", canon._Cleaned(1 << 24))
    on_threads = deduplicate(pages, config)
    monkeypatch.setattr(canon, "_MARKUP_CLEANED", canon._Cleaned(1 << 24))
    monkeypatch.setattr(cleaning, "START_CHARS", 0)
    monkeypatch.setattr(cleaning, "MIN_CHARS", 0)
    started = []
    pool = cleaning._Processes.pool
    monkeypatch.setattr(cleaning._Processes, "pool", lambda self: started.append(1) or pool(self))
    if numba.get_num_threads() < 2:
        pytest.skip("one thread: no processes to clean on")
    on_processes = deduplicate(pages, config)
    assert started
    assert len(on_threads.pairs) > 0
    assert np.array_equal(on_processes.pairs.left, on_threads.pairs.left)
    assert np.array_equal(on_processes.pairs.right, on_threads.pairs.right)
    assert np.array_equal(on_processes.keep_of, on_threads.keep_of)
