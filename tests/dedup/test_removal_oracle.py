"""What a removal guarantees, checked against an oracle that shares no code with dedup.

The texts are words of one alphabet (nothing for canonicalization to change), so a text's
shingles as written are its word 3-grams, computed here with Python sets: every removal of
random corpora — with shared footers (templates), documents quoting others, bundles of
several others (hubs) and near copies — is checked against them.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup import DedupConfig, deduplicate
from neardup.dedup.cluster import KeepPolicy
from neardup.dedup.keepers import HUB_GROUPS
from neardup.dedup.templates import ContentCounts, directional_scores

VOCABULARY = [f"w{i}" for i in range(300)]
FOOTERS = [" ".join(random.Random(900 + i).choices(VOCABULARY, k=40)) for i in range(3)]


def shingles(text: str) -> set[tuple[str, ...]]:
    words = text.split()
    return {tuple(words[i : i + 3]) for i in range(max(len(words) - 2, 1))}


def held(a: str, b: str) -> float:
    """How much of ``a`` as written ``b`` holds."""
    sa = shingles(a)
    return len(sa & shingles(b)) / len(sa)


def corpus(seed: int) -> list[tuple[str, str]]:
    """Originals, edits and partial copies of them, footers shared by many, bundles."""
    rng = random.Random(seed)
    words = lambda n: " ".join(rng.choices(VOCABULARY, k=n))  # noqa: E731
    texts: list[str] = [words(rng.randint(8, 80)) for _ in range(rng.randint(6, 14))]
    for _ in range(rng.randint(4, 14)):
        base = rng.choice(texts).split()
        kind = rng.random()
        if kind < 0.3:  # an edit: some words replaced
            for i in rng.sample(range(len(base)), k=max(1, len(base) // rng.randint(4, 20))):
                base[i] = rng.choice(VOCABULARY)
        elif kind < 0.6:  # a partial copy
            cut = rng.randint(len(base) // 3, len(base))
            base = base[:cut]
        else:  # the text quoted inside another one
            base = words(rng.randint(3, 30)).split() + base + words(rng.randint(0, 30)).split()
        texts.append(" ".join(base))
    for _ in range(rng.randint(0, 3)):  # a bundle of several others
        texts.append(" ".join(rng.sample(texts, k=min(len(texts), rng.randint(3, 5)))))
    texts = [t + " " + rng.choice(FOOTERS) if rng.random() < 0.5 else t for t in texts]
    rng.shuffle(texts)
    return [(f"d{i}", t) for i, t in enumerate(texts)]


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize(("guard", "identity"), [(None, False), (0.8, False), (None, True)])
def test_every_removal_is_held_as_written_at_the_guard(seed, guard, identity):
    docs = corpus(seed)
    config = DedupConfig(guard=guard, identity=identity)
    result = deduplicate(docs, config)
    texts = [t for _, t in docs]
    bar = config.removal_guard
    for d, k in enumerate(result.keep_of.tolist()):
        if d != k:
            assert held(texts[d], texts[k]) >= bar - 1e-9, (docs[d][0], docs[k][0])


def test_a_guard_above_the_threshold_keeps_what_lies_between():
    rng = random.Random(7)
    body = " ".join(rng.choices(VOCABULARY, k=100))
    words = body.split()
    between = " ".join(words[:70] + rng.choices(VOCABULARY, k=30))  # held at ~0.7 by body
    docs = [("body", body), ("between", between)]
    assert 0.6 <= held(between, body) < 0.8
    loose = deduplicate(docs, DedupConfig())
    assert loose.removed.tolist() == [False, True]  # the threshold alone would remove it
    guarded = deduplicate(docs, DedupConfig(guard=0.8))
    assert not guarded.removed.any()
    assert len(guarded.pairs) == 1  # still a pair at the threshold, only kept


def test_without_templates_every_pair_at_the_threshold_is_found():
    for seed in range(12):
        docs = corpus(seed)
        texts = [t for _, t in docs]
        result = deduplicate(docs, DedupConfig(template_df=0))
        found = {
            (int(a), int(b)) for a, b in zip(result.pairs.left, result.pairs.right, strict=True)
        }
        found |= {(b, a) for a, b in found}
        for a, b in itertools.combinations(range(len(texts)), 2):
            if max(held(texts[a], texts[b]), held(texts[b], texts[a])) >= 0.6:
                assert (a, b) in found, (seed, a, b)


def test_a_bundle_absorbs_none_of_the_texts_it_holds():
    rng = random.Random(5)
    poems = [" ".join(rng.choices(VOCABULARY, k=40)) for _ in range(HUB_GROUPS)]
    anthology = " ".join(poems)
    docs = [(f"poem{i}", p) for i, p in enumerate(poems)] + [("anthology", anthology)]
    result = deduplicate(docs, DedupConfig())
    assert all(held(p, anthology) == 1.0 for p in poems)
    assert not result.removed.any()
    again = deduplicate([*docs, ("anthology-copy", anthology)], DedupConfig())
    assert again.removed.sum() == 1  # the bundle's own copy goes into it
    assert not again.removed[: len(poems)].any()


def test_a_partial_copy_never_keeps_over_its_fuller_text():
    rng = random.Random(11)
    full = " ".join(rng.choices(VOCABULARY, k=100))
    partial = " ".join(full.split()[:82])  # holds 0.8 of the full text
    for keep in ("first", "shortest"):
        docs = [("partial", partial), ("full", full)]
        result = deduplicate(docs, DedupConfig(keep=KeepPolicy.parse(keep)))
        assert result.removed.tolist() == [True, False], keep


def test_near_identical_copies_pair_however_much_is_template():
    rng = random.Random(13)
    licence = " ".join(rng.choices(VOCABULARY, k=120))
    others = [
        (f"other{i}", f"{' '.join(rng.choices(VOCABULARY, k=90))} {licence}") for i in range(12)
    ]
    header = "the open group all rights reserved see the notice below for the terms of use"
    a = f"copyright 1993 1998 {header} {licence}"
    b = f"copyright 1988 1998 {header} {licence}"
    result = deduplicate([("a", a), ("b", b), *others], DedupConfig())
    pairs = {
        (result.ids[x], result.ids[y])
        for x, y in zip(result.pairs.left, result.pairs.right, strict=True)
    }
    assert ("a", "b") in pairs
    assert result.keep_of[1] == 0  # b goes into a


def test_a_discounted_template_never_enables_a_removal():
    rng = random.Random(17)
    footer = " ".join(rng.choices(VOCABULARY, k=40))
    own = " ".join(f"own{j}" for j in range(50))
    lists = [(f"list{i}", f"{' '.join(rng.choices(VOCABULARY, k=20))} {footer}") for i in range(12)]
    message = ("message", f"{own} {footer}")  # its own words and the list's footer
    reply = ("reply", f"{own} {' '.join(f'more{j}' for j in range(30))}")  # no footer
    result = deduplicate([reply, message, *lists], DedupConfig())
    assert result.template_shingles >= 30  # the footer is template
    assert 0.5 < held(message[1], reply[1]) < 0.6  # as written, under the guard
    assert held(reply[1], message[1]) >= 0.6  # a pair; on content the message is all there
    assert not result.removed[1]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_score_on_content_is_never_above_the_plain_one(data):
    size_l, size_r = data.draw(st.integers(1, 200)), data.draw(st.integers(1, 200))
    shared = data.draw(st.integers(0, min(size_l, size_r)))
    template_shared = data.draw(st.integers(0, shared))
    content_l = data.draw(st.integers(shared - template_shared, size_l - template_shared))
    content_r = data.draw(st.integers(shared - template_shared, size_r - template_shared))
    content = ContentCounts(
        np.array([shared - template_shared]), np.array([content_l]), np.array([content_r])
    )
    one = (np.array([shared]), np.array([size_l]), np.array([size_r]))
    lr, rl = directional_scores(*one, content, "containment")
    assert lr[0] <= shared / size_l + 1e-12
    assert rl[0] <= shared / size_r + 1e-12
    res, _ = directional_scores(*one, content, "resemblance")
    assert res[0] <= shared / (size_l + size_r - shared) + 1e-12
