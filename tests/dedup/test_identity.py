"""The identity check (:mod:`neardup.dedup.identity`) against an oracle that shares no code
with it: rare words counted with Python sets and lists over texts of plain lowercase words
(nothing for canonicalization to change), near-copy groups by brute force over every pair."""

from __future__ import annotations

import itertools
import random
import string

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup import DedupConfig, deduplicate, score_candidates
from neardup.dedup.config import Pairs
from neardup.dedup.core import _names
from neardup.dedup.identity import (
    LEAST_DOCUMENTS,
    RARE_GROUPS,
    identity_scores,
    named_words,
    run_names,
)
from neardup.fingerprints.shingles import fingerprint_batch, fingerprints_and_words, word_sets_utf8
from neardup.fingerprints.word_kernels import REPEATED, UNREPEATED, WORD, word_sets_of
from neardup.text.canon import split_texts
from tests.dedup.test_removal_oracle import held

LETTERS = string.ascii_lowercase
VOCABULARY = ["".join(random.Random(i).choices(LETTERS, k=5)) for i in range(400)]


def letters(i: int) -> str:
    """A word of letters alone naming ``i`` (words with digits are not names)."""
    out = ""
    while True:
        out += LETTERS[i % 26]
        i //= 26
        if not i:
            return "zz" + out


def words_of(text: str) -> set[str]:
    return {w for w in text.split() if len(w) >= 2 and not any(c.isdigit() for c in w)}


def corpus(seed: int) -> list[tuple[str, str]]:
    """Licences shared by many files, each file with its own names (about a third of it;
    shared with a sibling package's copy of the file, or not), and edits of files."""
    rng = random.Random(seed)
    licences = [" ".join(rng.choices(VOCABULARY, k=rng.randint(55, 70))) for _ in range(3)]
    texts: list[str] = []
    for f in range(rng.randint(6, 14)):
        names = " ".join(letters(1000 * seed + 10 * f + j) for j in range(rng.randint(24, 34)))
        if rng.random() < 0.5:  # the file's first names repeated, as a program's name is
            names += " " + " ".join(names.split()[: rng.randint(1, 5)])
        text = f"{names} {rng.choice(licences)}"
        texts.append(text)
        if rng.random() < 0.4:  # a sibling package: the same file
            texts.append(text)
        if rng.random() < 0.3:  # an edit: a few words replaced
            edited = text.split()
            for i in rng.sample(range(len(edited)), k=3):
                edited[i] = rng.choice(VOCABULARY)
            texts.append(" ".join(edited))
    rng.shuffle(texts)
    return [(f"d{i}", t) for i, t in enumerate(texts)]


def rare_by_definition(texts: list[str]) -> tuple[list[set[str]], list[set[str]]]:
    """Each text's rare words: used by 2 or more texts and by fewer than 3 groups of near
    copies (texts holding ≥ 0.7 of each other as written, joined transitively), or its own:
    used by this text alone and more than once in it; and each text's own words."""
    n = len(texts)
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in itertools.combinations(range(n), 2):
        if min(held(texts[a], texts[b]), held(texts[b], texts[a])) >= 0.7:
            ra, rb = find(a), find(b)
            parent[max(ra, rb)] = min(ra, rb)
    sets = [words_of(t) for t in texts]
    holders: dict[str, list[int]] = {}
    for d, ws in enumerate(sets):
        for w in ws:
            holders.setdefault(w, []).append(d)
    rare = {w for w, ds in holders.items() if len(ds) >= 2 and len({find(d) for d in ds}) < 3}
    own = {w for w, ds in holders.items() if len(ds) == 1 and texts[ds[0]].split().count(w) > 1}
    return [ws & (rare | own) for ws in sets], [ws & own for ws in sets]


def refusals(seed: int) -> int:
    """How many removals the scores allow the identity check refuses in ``corpus(seed)``,
    after checking every pair's verdict against :func:`rare_by_definition`."""
    docs = corpus(seed)
    texts = [t for _, t in docs]
    config = DedupConfig(template_df=0)  # no licence is discounted as a template
    rare, own = rare_by_definition(texts)
    with score_candidates(docs, config, keep_all=False) as scored:
        pairs = scored.pairs.take(scored.pairs.score >= config.threshold)
        id_lr, id_rl = identity_scores(_names(scored, pairs, config), pairs, config.removal_guard)
    checked = 0
    for i, (a, b) in enumerate(zip(pairs.left.tolist(), pairs.right.tolist(), strict=True)):
        for held_doc, holder, score, got in (
            (a, b, pairs.score_lr[i], id_lr[i]),
            (b, a, pairs.score_rl[i], id_rl[i]),
        ):
            if score < config.removal_guard or pairs.resemblance[i] >= 0.9:
                assert got == 1.0
                continue
            mine = rare[held_doc]
            found = len(mine & words_of(texts[holder]))
            missing = len(mine) - found
            nameless = (missing >= 3 and found <= 0.2 * len(mine)) or len(own[held_doc]) >= 3
            expected = 0.0 if nameless else 1.0
            assert got == expected, (seed, docs[held_doc][0], docs[holder][0], mine)
            checked += expected == 0.0
    return checked


@pytest.mark.parametrize("seed", range(20))
def test_identity_equals_its_definition(seed):
    refusals(seed)


def test_the_random_corpora_do_refuse_removals():
    assert sum(refusals(seed) for seed in range(5)) >= 5


def test_a_shared_licence_carries_no_file_into_one_not_naming_it():
    rng = random.Random(3)
    licence = " ".join(rng.choices(VOCABULARY, k=100))
    names = lambda i, n: " ".join(letters(100 * i + j) for j in range(n))  # noqa: E731
    # each file's names are under a third of it: files are no near copies of each other
    files = {"jq": f"{names(1, 45)} {licence}", "icons": f"{names(2, 45)} {licence} {names(3, 9)}"}
    files |= {f"other{i}": f"{names(4 + i, 45)} {licence}" for i in range(2)}
    # every file also ships in a sibling package: each file's names are used twice
    docs = [(pkg, text) for name, text in files.items() for pkg in (name, f"lib{name}")]
    assert held(files["jq"], files["icons"]) >= 0.6  # held as written at the threshold
    result = deduplicate(docs, DedupConfig(template_df=0))
    assert result.removed.tolist() == [False, True] * len(files)  # copies, into no other
    loose = deduplicate(docs, DedupConfig(template_df=0, identity=False))
    assert loose.removed.sum() > len(files)


def test_names_of_one_file_alone_that_it_repeats_keep_it():
    rng = random.Random(5)
    body = rng.choices(VOCABULARY, k=100)
    licence = " ".join(body)
    names = lambda i, n: " ".join(letters(100 * i + j) for j in range(n))  # noqa: E731
    # word lists using the licence's words in other orders: its words are common
    lists = [(f"list{i}", " ".join(rng.sample(body, k=len(body)))) for i in range(3)]
    # no sibling packages: each file's names are its own, each said twice
    files = [(k, f"{names(i, 20)} {licence} {names(i, 20)}") for i, k in enumerate("abcd")]
    assert held(files[1][1], files[0][1]) >= 0.6  # held as written at the threshold
    assert not deduplicate(files + lists, DedupConfig(template_df=0)).removed.any()
    said_once = [(k, f"{names(i, 20)} {licence}") for i, k in enumerate("abcd")]
    # names said once may be typos: not counted, the files go into one of them
    assert deduplicate(said_once + lists, DedupConfig(template_df=0)).removed.sum() == 3


def test_a_rewrite_with_typos_still_goes_into_its_original():
    rng = random.Random(9)
    original = " ".join([*rng.choices(VOCABULARY, k=120), letters(5), letters(6), letters(7)])
    typos = original.split()
    for i in rng.sample(range(120), k=8):
        typos[i] = typos[i][::-1] + "q"  # words no other text uses
    docs = [("original", original), ("typos", " ".join(typos)), ("other", original[:200])]
    result = deduplicate(docs, DedupConfig())
    assert result.removed.tolist() == [False, True, True]


def test_pairs_near_identical_as_written_are_exempt():
    rng = random.Random(4)
    body = rng.choices(VOCABULARY, k=300)
    a = f"{letters(1)} {letters(2)} {letters(3)} {' '.join(body)}"
    b = f"{letters(4)} {letters(5)} {letters(6)} {' '.join(body)}"
    # three word lists using the body's words in another order: the body's words are
    # common, the names rare (each used twice)
    lists = [" ".join(rng.sample(body, k=len(body))) for _ in range(3)]
    docs = [
        ("a", a),
        ("b", b),
        ("a2", a),
        ("b2", b),
        *((f"list{i}", t) for i, t in enumerate(lists)),
    ]
    assert held(a, b) > 0.95  # near-identical as written, each with three names of its own
    assert deduplicate(docs, DedupConfig()).removed[:4].tolist() == [False, True, True, True]


def test_words_made_in_the_fingerprint_pass_equal_those_of_their_own_pass():
    texts = [
        "Copyright 2012 Stephen Dolan <mu@netsoc.tcd.ie>: jq, jq-1.6",
        "Привет, мир! 中文文本 mixed with English words",
        "",
        "a b c 123 x1 über straße",
    ]
    config = DedupConfig().text
    prints, lists = fingerprints_and_words(*split_texts(texts), config)
    words = word_sets_of(*lists)
    alone = word_sets_utf8(*split_texts(texts), config)
    assert all(np.array_equal(a, b) for a, b in zip(words, alone, strict=True))
    assert np.array_equal(prints.values, fingerprint_batch(texts, config).values)
    first = words[0][words[1][0] : words[1][1]]
    named = named_words(texts[0], config)
    assert set((first & UNREPEATED).tolist()) == set(named)  # what explain shows
    repeated = {named[h] for h in (first & UNREPEATED)[first & REPEATED > 0]}
    assert repeated == {"jq"}
    assert {"jq", "stephen", "dolan"} <= set(named_words(texts[0], config).values())
    assert not {"2012", "1", "6", "a", "x1"} & set(
        named_words(texts[0] + " " + texts[3], config).values()
    )


@settings(deadline=None, max_examples=80)
@given(st.integers(0, 2**32 - 1))
def test_rare_words_of_word_lists_are_those_of_the_documents_sets(seed):
    """Word lists as the fingerprint pass writes them — a word perhaps twice, in any order,
    its repetition told by a mark or by the second entry — give the rare and own words of
    the definition, counted with Python sets: held by 2 or more documents and fewer than 3
    groups, or by one document alone that repeats it."""
    rng = random.Random(seed)
    n = rng.randint(1, 12)
    vocabulary = [rng.getrandbits(64) & int(WORD) for _ in range(rng.randint(1, 30))]
    sets = [set(rng.sample(vocabulary, rng.randint(0, len(vocabulary)))) for _ in range(n)]
    repeated = [{w for w in ws if rng.random() < 0.4} for ws in sets]
    group = np.array([rng.randrange(n) for _ in range(n)], dtype=np.int64)
    lists, offsets = [], [0]
    for ws, again in zip(sets, repeated, strict=True):
        entries = []
        for w in ws:
            if w in again and rng.random() < 0.5:
                entries.append(w | int(REPEATED))  # told by its mark
            else:
                entries.append(w)
                if w in again:
                    entries.append(w)  # told by a second entry
            if w in again and rng.random() < 0.3:
                entries.append(w)  # met again once out of the table of recent words
        rng.shuffle(entries)
        lists += entries
        offsets.append(len(lists))
    count = rng.randint(1, 2 * n)
    left = np.array([rng.randrange(n) for _ in range(count)], dtype=np.int64)
    right = np.array([rng.randrange(n) for _ in range(count)], dtype=np.int64)
    ones = np.ones(count)
    pairs = Pairs(left, right, ones, ones, ones, ones, ones, ones)
    values = np.array(lists, dtype=np.uint64)
    names = run_names(values, np.array(offsets, dtype=np.int64), group, pairs)

    holders = {w: [d for d in range(n) if w in sets[d]] for w in vocabulary}
    for d in range(n):
        words = names.words[names.word_offsets[d] : names.word_offsets[d + 1]].tolist()
        rare = names.rare[names.rare_offsets[d] : names.rare_offsets[d + 1]].tolist()
        if d not in set(left.tolist()) | set(right.tolist()):
            assert words == rare == []
            continue
        marked = {w | (int(REPEATED) if w in repeated[d] else 0) for w in sets[d]}
        assert words == sorted(marked)
        expected = []
        for w in sets[d]:
            docs = holders[w]
            if len(docs) >= LEAST_DOCUMENTS and len({int(group[x]) for x in docs}) < RARE_GROUPS:
                expected.append(w)
            elif docs == [d] and w in repeated[d]:
                expected.append(w | int(REPEATED))  # its own word
        assert rare == sorted(expected)
