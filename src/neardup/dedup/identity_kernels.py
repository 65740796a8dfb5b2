"""Kernel of the identity check: how many of a document's rare words its keeper holds."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neardup.fingerprints.word_kernels import CHARACTERS, LETTERED, REPEATED, WORD
from neardup.util.hashtable import key_table, slot_of


@njit(cache=True, parallel=True)
def missing_and_held(
    rare: np.ndarray,
    rare_offsets: np.ndarray,
    words: np.ndarray,
    word_offsets: np.ndarray,
    held: np.ndarray,
    holder: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair ``i``: how many rare words of document ``held[i]`` document ``holder[i]``
    lacks, how many it has (one merge walk of two sorted sets of words, compared without
    their :data:`~neardup.fingerprints.word_kernels.REPEATED` mark), and how many of them are
    ``held[i]``'s own (marked in ``rare``: no other document uses them)."""
    n = held.size
    missing = np.zeros(n, dtype=np.int64)
    found = np.zeros(n, dtype=np.int64)
    own = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        a, b = held[i], holder[i]
        p, p_end = rare_offsets[a], rare_offsets[a + 1]
        for j in range(p, p_end):
            own[i] += rare[j] & REPEATED
        q, q_end = word_offsets[b], word_offsets[b + 1]
        k = 0
        while p < p_end and q < q_end:
            mine, word = rare[p] & WORD, words[q] & WORD
            if mine == word:
                k += 1
                p += 1
                q += 1
            elif mine < word:
                p += 1
            else:
                q += 1
        found[i] = k
        missing[i] = rare_offsets[a + 1] - rare_offsets[a] - k
    return missing, found, own


@njit(cache=True)
def _distinct_words(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.uint64]:
    """The distinct words (``hash & WORD``) of ``values``, in the order first met, and their
    hash table (:func:`~neardup.util.hashtable.key_table`), grown while they are found: one
    pass through a table that stays about as small as the distinct words, where sorting
    would move every value."""
    keys = np.empty(values.size, dtype=np.uint64)
    bits = 4
    shift = np.uint64(64 - bits)
    table = np.zeros(1 << bits, dtype=np.int64)
    count = 0
    for e in range(values.size):
        v = values[e] & WORD
        slot = slot_of(table, keys, v, shift)
        if table[slot] != 0:
            continue
        keys[count] = v
        count += 1
        table[slot] = count
        if 2 * count + 1 > table.size:  # half full: twice the slots
            bits += 1
            shift = np.uint64(64 - bits)
            table = np.zeros(1 << bits, dtype=np.int64)
            for i in range(count):
                table[slot_of(table, keys, keys[i], shift)] = i + 1
    return keys[:count], table, shift


@njit(cache=True, inline="always")
def _add_label(seen: np.ndarray, i: int, label: int) -> None:
    """Note ``label`` among the (up to three) distinct labels ``seen[i]``."""
    for g in range(3):
        if seen[i, g] == label:
            return
        if seen[i, g] < 0:
            seen[i, g] = label
            return


@njit(cache=True, inline="always")
def _labels_met(seen: np.ndarray, i: int) -> int:
    """How many distinct labels ``seen[i]`` holds (at most 3)."""
    count = 0
    while count < 3 and seen[i, count] >= 0:
        count += 1
    return count


@njit(cache=True, parallel=True)
def rare_entries(
    values: np.ndarray,
    offsets: np.ndarray,
    labels: np.ndarray,
    mine: np.ndarray,
    mine_offsets: np.ndarray,
    mine_labels: np.ndarray,
    least_documents: int,
    rare_groups: int,
    threads: int,
) -> np.ndarray:
    """Which entries of ``mine`` (word hashes, marked as in ``values``: the sets of some
    documents, ``mine[mine_offsets[k]:mine_offsets[k + 1]]``, labelled ``mine_labels[k]``)
    are rare: 1 where held by at least ``least_documents`` documents (a document's word
    list, which may hold a word twice, is ``values[offsets[d]:offsets[d + 1]]``, labelled
    ``labels[d]``) and by fewer than
    ``rare_groups`` (at most 3) distinct labels, 2 where held by their own document alone and
    repeated in it, 0 elsewhere.

    A word that ``mine``'s own documents hold under ``rare_groups`` labels already is settled
    (not rare, not alone). The others are counted in one pass of every document, cut into
    ``threads`` parts, through a hash table of those words behind a bit filter small enough
    for the cache: the common words, nearly every entry, stop at the filter."""
    keys, table, shift = _distinct_words(mine)
    n, m = offsets.size - 1, keys.size
    met = np.full((m, 3), -1, dtype=np.int64)  # labels among mine's documents
    for k in range(mine_offsets.size - 1):
        for e in range(mine_offsets[k], mine_offsets[k + 1]):
            _add_label(met, table[slot_of(table, keys, mine[e] & WORD, shift)] - 1, mine_labels[k])
    open_words = np.zeros(m, dtype=np.bool_)
    for i in range(m):
        open_words[i] = _labels_met(met, i) < rare_groups
    fbits = 10
    while (1 << fbits) < 16 * open_words.sum():
        fbits += 1
    fshift = np.uint64(64 - fbits)
    wanted = np.zeros(1 << fbits, dtype=np.bool_)
    for i in range(m):
        if open_words[i]:
            wanted[np.int64(keys[i] >> fshift)] = True
    parts = max(1, min(threads, n))
    documents = np.zeros((parts, m), dtype=np.int64)
    last = np.full((parts, m), -1, dtype=np.int64)  # the document a part counted a word for last
    seen = np.full((parts * m, 3), -1, dtype=np.int64)  # up to three distinct labels a part
    for p in prange(parts):
        for d in range(p * n // parts, (p + 1) * n // parts):
            for j in range(offsets[d], offsets[d + 1]):
                v = values[j] & WORD
                if not wanted[np.int64(v >> fshift)]:
                    continue
                i = table[slot_of(table, keys, v, shift)] - 1
                if i < 0 or not open_words[i] or last[p, i] == d:
                    continue
                last[p, i] = d
                documents[p, i] += 1
                _add_label(seen, p * m + i, labels[d])
    rare = np.zeros(m, dtype=np.bool_)
    alone = np.zeros(m, dtype=np.bool_)
    for i in prange(m):
        if not open_words[i]:
            continue
        total = 0
        distinct = np.full((1, 3), -1, dtype=np.int64)
        for p in range(parts):
            total += documents[p, i]
            for g in range(_labels_met(seen, p * m + i)):
                _add_label(distinct, 0, seen[p * m + i, g])
        rare[i] = total >= least_documents and _labels_met(distinct, 0) < rare_groups
        alone[i] = total == 1
    out = np.zeros(mine.size, dtype=np.uint8)
    for e in prange(mine.size):
        i = table[slot_of(table, keys, mine[e] & WORD, shift)] - 1
        if mine[e] & WORD == CHARACTERS:
            continue  # a script, not a name
        if rare[i]:
            out[e] = 1
        elif alone[i] and mine[e] & REPEATED != 0:
            out[e] = 2
    return out


ONE = 1 << 20  # one function word in the fixed point of language weights


@njit(cache=True)
def function_word_table(keys: np.ndarray) -> tuple[np.ndarray, np.uint64]:
    """The hash table of the function words' hashes (sorted, distinct)."""
    return key_table(keys)


@njit(cache=True, inline="always")
def _function_word(table: np.ndarray, shift: np.uint64, keys: np.ndarray, word: np.uint64) -> int:
    """The index of ``word`` among the function words ``keys``; -1: none."""
    return table[slot_of(table, keys, word, shift)] - 1


@njit(cache=True, parallel=True)
def translations(
    words: np.ndarray,
    word_offsets: np.ndarray,
    held: np.ndarray,
    holder: np.ndarray,
    keys: np.ndarray,
    masks: np.ndarray,
    languages: tuple[np.ndarray, np.ndarray],
    table: tuple[np.ndarray, np.uint64],
    least_own: float,
) -> tuple[np.ndarray, ...]:
    """Per pair ``i``: the language of document ``held[i]`` (the one its function words —
    ``keys``, with the languages of each as a bit mask, ``masks``, and listed,
    ``languages``: ``(offsets, numbers)`` — are most of, a word of k languages
    counting 1/k to each, in fixed point: ``ONE // k``; the first of equals; -1 when
    under ``least_own``), its words marked :data:`~neardup.fingerprints.word_kernels.LETTERED`, and
    among the words of ``holder[i]`` that ``held[i]`` lacks: how many are function words
    of that language, the other language most of the others are function words of with
    how many, how many there are, how many are marked ``LETTERED``, and whether
    :data:`~neardup.fingerprints.word_kernels.CHARACTERS` is one; and how many words of ``held[i]``
    ``holder[i]`` lacks."""
    slots, shift = table
    first, listed = languages
    n = held.size
    own = np.full(n, -1, dtype=np.int64)
    own_lettered = np.zeros(n, dtype=np.int64)
    same = np.zeros(n, dtype=np.int64)
    other = np.full(n, -1, dtype=np.int64)
    foreign = np.zeros(n, dtype=np.int64)
    added = np.zeros(n, dtype=np.int64)
    lettered = np.zeros(n, dtype=np.int64)
    script = np.zeros(n, dtype=np.bool_)
    lacking = np.zeros(n, dtype=np.int64)
    docs = np.unique(held)  # each held document's language told once, however many pairs
    doc_language = np.full(docs.size, -1, dtype=np.int64)
    doc_lettered = np.zeros(docs.size, dtype=np.int64)
    for k in prange(docs.size):
        a = docs[k]
        weight = np.zeros(64, dtype=np.int64)
        for j in range(word_offsets[a], word_offsets[a + 1]):
            doc_lettered[k] += (words[j] & LETTERED) != 0
            f = _function_word(slots, shift, keys, words[j] & WORD)
            if f >= 0:
                share = ONE // (first[f + 1] - first[f])
                for lang in listed[first[f] : first[f + 1]]:
                    weight[lang] += share
        lang_a = np.argmax(weight)
        if weight[lang_a] >= least_own * ONE:
            doc_language[k] = lang_a
    which = np.searchsorted(docs, held)
    for i in prange(n):
        a, b = held[i], holder[i]
        own_lettered[i] = doc_lettered[which[i]]
        lang_a = doc_language[which[i]]
        if lang_a < 0:
            continue
        own[i] = lang_a
        mine = np.uint64(1) << np.uint64(lang_a)
        counts = np.zeros(64, dtype=np.int64)
        p, p_end = word_offsets[a], word_offsets[a + 1]
        for q in range(word_offsets[b], word_offsets[b + 1]):
            word = words[q] & WORD
            while p < p_end and words[p] & WORD < word:
                p += 1
            if p < p_end and words[p] & WORD == word:
                lacking[i] -= 1
                continue  # a word both use
            added[i] += 1
            lettered[i] += (words[q] & LETTERED) != 0
            script[i] |= word == CHARACTERS
            f = _function_word(slots, shift, keys, word)
            if f < 0:
                continue
            if masks[f] & mine:
                same[i] += 1
            else:
                for lang in listed[first[f] : first[f + 1]]:
                    counts[lang] += 1
        other[i] = np.argmax(counts)
        foreign[i] = counts[other[i]]
        lacking[i] += p_end - word_offsets[a]
    return own, own_lettered, same, other, foreign, added, lettered, script, lacking
