"""Shared templates are not content; removal is lossless (dedup end to end and the pieces)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup import DedupConfig, Pairs, deduplicate, templates
from neardup.dedup.cluster import KeepPolicy, lossless_keepers
from neardup.dedup.keepers import declined_pairs
from neardup.dedup.templates import content_counts, directional_scores, template_shingles
from neardup.fingerprints.measures import overlap
from neardup.fingerprints.shingles import fingerprint_batch, is_han, mark_han
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig
from textgen import edit, text

WORDS3 = TextConfig(CanonConfig(stopwords=False), ShingleConfig(size=3))
FOOTER = (
    "you received this message because you are subscribed to the harbour users mailing list "
    "to unsubscribe from this list send an empty message to the list address and visit the "
    "archives at the project site for older threads and the posting guidelines"
)


def bar(keys, held, min_df):
    """The template rule written out: Han shingles (top bit) need HAN_DF times the holders."""
    return held >= np.where(is_han(keys), templates.HAN_DF * min_df, min_df)


def removed_pairs(result):
    return {result.ids[d]: result.ids[k] for d, k in enumerate(result.keep_of) if d != k}


# ── the pieces ───────────────────────────────────────────────────────────────────────────────


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 40), max_size=30), min_size=1, max_size=40),
    st.integers(2, 8),
)
def test_template_shingles_are_exactly_the_frequent_fingerprints(sets, min_df):
    docs = [np.unique(np.array(s, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) for s in sets]
    values = np.concatenate(docs) if docs else np.empty(0, np.uint64)
    offsets = np.r_[0, np.cumsum([d.size for d in docs])].astype(np.int64)
    found = template_shingles(values, offsets, np.arange(len(docs)), min_df)
    unique, counts = np.unique(values, return_counts=True)
    assert np.array_equal(found, unique[bar(unique, counts, min_df)])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 40), max_size=30), min_size=1, max_size=40),
    st.integers(2, 8),
    st.data(),
    st.sampled_from(["exact", "filtered", "sorted"]),
    st.booleans(),
)
def test_template_shingles_of_wanted_documents_are_counted_exactly(
    sets, min_df, data, path, estimated
):
    """Exactly the frequent fingerprints of the wanted documents, by any path — with the
    candidate stage's per-entry counts (any over-estimate, saturating at 255) too."""
    docs = [np.unique(np.array(s, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) for s in sets]
    values = np.concatenate(docs)
    offsets = np.r_[0, np.cumsum([d.size for d in docs])].astype(np.int64)
    wanted = np.array(sorted(data.draw(st.sets(st.integers(0, len(docs) - 1)))), dtype=np.int64)
    with pytest.MonkeyPatch.context() as patch:
        gathered = sum(docs[w].size for w in wanted)  # "filtered": too many, unless hot only
        limit = {"exact": 1 << 23, "filtered": gathered - 1, "sorted": 0}[path]
        patch.setattr(templates, "_MAX_EXACT_KEYS", limit)
        patch.setattr(templates, "_MIN_BITS", 2 if path == "sorted" else 12)  # tables grow
        entry_count = None
        if estimated:  # never below the true count
            held = np.unique(values, return_inverse=True, return_counts=True)[1:]
            noise = data.draw(st.lists(st.integers(0, 300), min_size=values.size))
            over = held[1][held[0]] + np.array(noise[: values.size], dtype=np.int64)
            entry_count = np.minimum(over, 255).astype(np.uint8)
        found = template_shingles(
            values, offsets, np.arange(len(docs)), min_df, wanted, entry_count
        )
    unique, counts = np.unique(values, return_counts=True)
    frequent = unique[bar(unique, counts, min_df)]
    mine = np.unique(np.concatenate([docs[w] for w in wanted])) if wanted.size else unique[:0]
    assert np.array_equal(found, np.intersect1d(frequent, mine))


def test_content_scores_discount_the_template_and_keep_all_template_documents_whole():
    # doc 0: own {1,2} + template {7,8,9}; doc 1: own {3} + template; doc 2: template only
    docs = [np.array([1, 2, 7, 8, 9]), np.array([3, 7, 8, 9]), np.array([7, 8, 9])]
    values = np.concatenate(docs).astype(np.uint64)
    offsets = np.array([0, 5, 9, 12])
    left, right = np.array([0, 2]), np.array([1, 1])
    shared = np.array([3, 3])
    template = np.array([7, 8, 9], dtype=np.uint64)
    content = content_counts(values, offsets, left, right, shared, template)
    assert content.shared.tolist() == [0, 0]
    assert (content.left.tolist(), content.right.tolist()) == ([2, 0], [1, 1])
    size_l, size_r = offsets[left + 1] - offsets[left], offsets[right + 1] - offsets[right]
    lr, rl = directional_scores(shared, size_l, size_r, content, "containment")
    assert lr.tolist() == [0.0, 1.0]  # the footer alone is wholly in doc 1
    assert rl.tolist() == [0.0, 0.0]  # doc 1's own word is in neither


# ── dedup end to end ─────────────────────────────────────────────────────────────────────────


def test_messages_sharing_a_list_footer_are_not_duplicates():
    lengths = [20 + 2 * i for i in range(20)] + [3 + i % 6 for i in range(20)]  # 20 short ones
    docs = [(f"m{i}", text(100 + i, n) + " " + FOOTER) for i, n in enumerate(lengths)]
    plain = deduplicate(docs, DedupConfig(text=WORDS3, template_df=0))
    assert plain.removed.sum() > 20  # the footer is most of many messages
    discounted = deduplicate(docs, DedupConfig(text=WORDS3))
    assert discounted.removed.sum() == 0
    assert len(discounted.pairs) == 0  # on content, nothing is shared
    assert discounted.template_shingles > 20


def test_mass_copies_of_one_text_are_all_found_despite_the_discount():
    body = text(7, 120)
    campaign = [(f"spam{i}", f"dear customer{i} " + body) for i in range(80)]
    exact = [(f"syn{i}", text(8, 150)) for i in range(30)]
    others = [(f"o{i}", text(300 + i, 60)) for i in range(30)]
    result = deduplicate(campaign + exact + others, DedupConfig(text=WORDS3))
    removed = removed_pairs(result)
    assert sum(k.startswith("spam") for k in removed) == 79
    assert sum(k.startswith("syn") for k in removed) == 29
    assert not any(k.startswith("o") for k in removed)


def test_syndicated_copies_with_site_templates_are_found():
    sites = [text(900 + s, 25) for s in range(3)]
    article = text(5, 150)
    copies = [(f"copy{i}", sites[i % 3] + " " + edit(article, i, 2)) for i in range(30)]
    own = [
        (f"site{s}-{j}", sites[s] + " " + text(1000 + 100 * s + j, 80))
        for s in range(3)
        for j in range(12)
    ]
    result = deduplicate(copies + own, DedupConfig(text=WORDS3))
    removed = removed_pairs(result)
    assert sum(k.startswith("copy") for k in removed) == 29
    assert not any(k.startswith("site") for k in removed)


def test_an_answer_quoting_the_question_is_kept_and_the_question_goes():
    question = text(1, 40)
    answer = "You asked: " + question + " " + text(2, 40)  # quoted inline, not as "> " lines
    for keep in ("first", "shortest", "longest"):
        result = deduplicate(
            [("question", question), ("answer", answer)],
            DedupConfig(text=WORDS3, keep=KeepPolicy.parse(keep)),
        )
        assert removed_pairs(result) == {"question": "answer"}
    two = [("question", question), ("answer", answer), ("answer2", "Re: " + question + text(3, 40))]
    result = deduplicate(two, DedupConfig(text=WORDS3))
    assert removed_pairs(result) == {"question": "answer"}  # the second answer stays
    assert result.declined == 0


def test_a_chain_of_containments_is_not_followed_and_the_declined_pair_is_counted():
    # a in b (0.8), b in c (0.9), a in c below the guard: c keeps b; a would go into b, which
    # is gone, so a stays and its pair with b is declined
    left, right = np.array([0, 1, 0]), np.array([1, 2, 2])
    s_lr, s_rl = np.array([0.8, 0.9, 0.3]), np.array([0.4, 0.5, 0.2])
    keep_of = lossless_keepers(3, left, right, s_lr, s_rl, np.arange(3), 0.55)
    assert keep_of.tolist() == [0, 2, 2]
    pairs = Pairs(left, right, np.maximum(s_lr, s_rl), s_lr, s_rl, s_lr, s_lr, s_rl)
    assert declined_pairs(pairs, keep_of, 0.55) == 1


def test_the_keep_policy_chooses_among_documents_that_hold_each_other():
    left, right = np.array([0]), np.array([1])
    both = np.array([0.9])
    for rank, kept in (([0, 1], 0), ([1, 0], 1)):
        keep_of = lossless_keepers(2, left, right, both, both, np.array(rank), 0.55)
        assert keep_of.tolist() == [kept, kept]
    one_way = lossless_keepers(2, left, right, np.array([0.9]), np.array([0.3]), np.arange(2), 0.55)
    assert one_way.tolist() == [1, 1]  # 0 is held by 1, not the other way: 1 keeps


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["first", "shortest", "longest"]))
def test_every_removed_document_is_held_by_its_keeper(seed, keep):
    """Property: on random corpora of copies, quotes, replies and edits, each removed
    document's exact containment in its keeper reaches the threshold."""
    rng = np.random.default_rng(seed)
    bases = [text(seed * 50 + i, int(rng.integers(5, 60))) for i in range(8)]
    docs = []
    for i in range(30):
        a, b = bases[rng.integers(8)], bases[rng.integers(8)]
        kind = rng.integers(4)
        body = [a, edit(a, seed + i, 2) if len(a.split()) > 4 else a, a + " " + b, b + " " + a][
            kind
        ]
        docs.append((f"d{i}", body))
    config = DedupConfig(text=WORDS3, keep=KeepPolicy.parse(keep), template_df=0)
    result = deduplicate(docs, config)
    prints = fingerprint_batch([t for _, t in docs], WORDS3)
    for d, k in enumerate(result.keep_of):
        assert result.keep_of[k] == k  # keepers are kept
        if d != k:
            assert overlap(prints[d], prints[k]).containment_a_in_b >= config.threshold


def test_replies_quoting_the_same_message_are_compared_on_their_own_words():
    question = text(21, 60)
    quoted = "\n".join("> " + line for line in question.split(" w"))
    replies = [(f"r{i}", text(30 + i, 15) + "\n" + quoted) for i in range(5)]
    result = deduplicate([("q", question), *replies], DedupConfig(text=WORDS3))
    assert result.removed.sum() == 0
    unquoted = TextConfig(CanonConfig(stopwords=False, quotes=False), ShingleConfig(size=3))
    assert deduplicate([("q", question), *replies], DedupConfig(text=unquoted)).removed.any()


def test_many_wanted_fingerprints_count_only_those_the_sketch_finds_hot(monkeypatch):
    mix = np.uint64(0x9E3779B97F4A7C15)
    # fingerprint 1 in exactly 3 documents, 2 in 4, every document has 5 of its own
    sets = [[1, 2], [1, 2], [1, 2], [2]]
    docs = [
        np.unique(
            np.array(
                [*s, 100 + 10 * d, 101 + 10 * d, 102 + 10 * d, 103 + 10 * d, 104 + 10 * d],
                dtype=np.uint64,
            )
            * mix
        )
        for d, s in enumerate(sets)
    ]
    values = np.concatenate(docs)
    offsets = np.r_[0, np.cumsum([d.size for d in docs])].astype(np.int64)
    wanted = np.arange(4)
    monkeypatch.setattr(templates, "_MAX_EXACT_KEYS", 10)  # 27 gathered, 7 of them hot
    found = template_shingles(values, offsets, np.arange(4), 3, wanted)
    assert sorted(found.tolist()) == sorted((np.array([1, 2], dtype=np.uint64) * mix).tolist())


# ── short documents and Han shingles ─────────────────────────────────────────────────────────


def test_a_content_score_is_measured_against_at_least_min_content_shingles():
    # doc 0: 5 own shingles around a 40-shingle template, sharing 4 of them with doc 1
    n = templates.MIN_CONTENT
    shared, size_l, size_r = np.array([44]), np.array([45]), np.array([60])
    content = templates.ContentCounts(np.array([4]), np.array([5]), np.array([20]))
    lr, _ = directional_scores(shared, size_l, size_r, content, "containment")
    assert lr.tolist() == [4 / n]  # not 4 / 5: five shingles say little
    # all of its content held: a copy, however little content it has
    whole = templates.ContentCounts(np.array([5]), np.array([5]), np.array([20]))
    lr, _ = directional_scores(np.array([45]), size_l, size_r, whole, "containment")
    assert lr.tolist() == [1.0]
    # a short text with no template is measured on its own size: its copy still scores 1
    tiny = templates.ContentCounts(np.array([3]), np.array([3]), np.array([3]))
    lr, rl = directional_scores(np.array([3]), np.array([3]), np.array([3]), tiny, "containment")
    assert (lr.tolist(), rl.tolist()) == ([1.0], [1.0])


def test_han_shingles_need_han_df_times_the_holders_to_be_template():
    five = mark_han(np.array([5, 5], dtype=np.uint64), np.array([False, True]))
    keys = np.array([five[0], five[1], 6, five[1]], dtype=np.uint64)
    held = np.array([10, 10, 9, 10 * templates.HAN_DF])
    assert templates.reaches_template(keys, held, 10).tolist() == [True, False, False, True]


def test_han_fingerprints_spread_over_the_slots_of_template_tables():
    """Han fingerprints share the top bits of their image under the Han mark's multiplier;
    the template kernels' slots must not (a hash table of them went quadratic)."""
    from neardup.fingerprints.shingles import is_han, mark_han
    from neardup.util.hashtable import SLOT_MIX

    rng = np.random.default_rng(3)
    hashes = rng.integers(0, 2**63, 20_000, dtype=np.int64).astype(np.uint64)
    han = mark_han(hashes, np.ones(hashes.size, dtype=np.bool_))
    assert is_han(han).all()
    slots = np.unique((han * SLOT_MIX) >> np.uint64(64 - 16))  # as home_slot takes them
    assert slots.size > 10_000  # of 65 536: ~16 000 expected for random slots
