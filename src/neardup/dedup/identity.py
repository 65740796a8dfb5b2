"""Identity is kept: a document is not removed into a keeper that does not name it.

Two files of one licence share most of their text; what tells them apart is a few words:
the software's name, its authors, their addresses. A reader refuses to drop ``jq``'s
copyright file into ``adwaita-icon-theme``'s because the latter never names jq or its
author, however much MIT and Creative Commons text they share. So:

- A document's **rare words** are its words (canonical tokens of two or more characters
  without digits: :mod:`neardup.fingerprints.word_kernels`) that at least ``LEAST_DOCUMENTS``
  documents of the run use but fewer than ``RARE_GROUPS`` groups of near copies (documents
  holding ≥ ``NEAR_COPY`` of each other both ways, as in the template step: copies count
  once). Names, holders, hosts and the terms of
  one text's own subject are rare; the words of a shared licence, footer or language are
  not.
- A document's **own words** are words no other document of the run uses and that it uses
  more than once (a program's name and its authors in its own copyright file): a name is
  repeated in the text it names, while a typo is made once, and a rewrite's typos must not
  keep it from its original. They are rare words too, and no other document holds them.
- A document is **not removed into a keeper that lacks its names**: when the keeper lacks
  ``MISSING_NAMES`` or more of its rare words and holds no more than ``HELD_NAMES`` of them.
  A keeper that names it (holds a fair share of its rare words) is not refused. A document
  with ``MISSING_NAMES`` or more own words is named by no other document: whatever shared
  text (a licence's own rare words) a keeper holds, it lacks what this one alone says.
- Pairs near-identical as written (resemblance ≥ :data:`~neardup.dedup.templates.
  NEAR_IDENTICAL`) are exempt: copies that differ in a year or a name are copies.

Counted over the whole run in one pass through a table of the words that matter (those of
documents in a pair); the decision then needs each document's words and rare words only, so
the Spark engine (a batch of whole components) decides as the local engine does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from neardup.dedup import identity_kernels as _k
from neardup.dedup.config import Pairs
from neardup.dedup.template_kernels import gather
from neardup.dedup.templates import NEAR_IDENTICAL
from neardup.dedup.translation import FunctionWords, translations
from neardup.fingerprints.hashing import kernel_hash
from neardup.fingerprints.word_kernels import (
    UNREPEATED,
    WORD,
    token_word_hashes,
    word_sets,
    word_sets_of,
)
from neardup.text.canon import canonicalize_batch
from neardup.text.text_config import TextConfig
from neardup.util.arrays import unique

LEAST_DOCUMENTS = 2  # a word used by at least this many documents …
RARE_GROUPS = 3  # … and by fewer than this many groups of near copies is rare
MISSING_NAMES = 3  # a keeper lacking this many of a document's rare words …
HELD_NAMES = 0.2  # … and holding no more than this share of them does not name it


@dataclass(frozen=True, slots=True, eq=False)
class Names:
    """Per document that may be removed or keep another (the others have none): its word
    set (marked where it repeats a word: :data:`~neardup.fingerprints.word_kernels.REPEATED`)
    and its rare word hashes (marked where they are its own words), each sorted and distinct
    (``words[word_offsets[d]:word_offsets[d + 1]]``, ``rare`` likewise)."""

    words: np.ndarray
    word_offsets: np.ndarray
    rare: np.ndarray
    rare_offsets: np.ndarray
    function_words: FunctionWords | None = None  # to tell translations (None: not told)


def run_names(
    words: np.ndarray,
    offsets: np.ndarray,
    group: np.ndarray,
    pairs: Pairs,
    known: FunctionWords | None = None,
) -> Names:
    """The :class:`Names` of a run's documents: the word sets and rare words (see the module
    docstring) of those in ``pairs`` (those that may be removed), counted over every
    document's word list (``words[offsets[d]:offsets[d + 1]]``, as the fingerprint pass
    writes them: :mod:`neardup.fingerprints.word_kernels`; ``group``: each one's group of
    near copies); the others have none. ``known``: the function words that tell a
    translation."""
    n = offsets.size - 1
    wanted = unique(np.concatenate((pairs.left, pairs.right)))
    lists = gather(words, offsets, wanted)  # the wanted documents' lists, one after the other
    list_offsets = np.zeros(wanted.size + 1, dtype=np.int64)
    np.cumsum(offsets[wanted + 1] - offsets[wanted], out=list_offsets[1:])
    mine, mine_offsets = word_sets_of(lists, list_offsets)
    del lists
    threads = numba.get_num_threads()
    kind = _k.rare_entries(
        words, offsets, group, mine, mine_offsets, group[wanted], LEAST_DOCUMENTS, RARE_GROUPS,
        threads,
    )  # fmt: skip
    is_rare = kind > 0
    rare = mine[is_rare]
    shared = kind[is_rare] == 1
    rare[shared] &= WORD  # own words keep their mark
    # rare entries before each document's first: found among the rare entries' places
    # (no running count as long as every document's word set)
    rare_before = np.searchsorted(np.flatnonzero(is_rare), mine_offsets)
    word_offsets = _offsets_of(n, wanted, np.diff(mine_offsets))
    rare_offsets = _offsets_of(n, wanted, np.diff(rare_before))
    return Names(mine, word_offsets, rare, rare_offsets, known)


def _offsets_of(n: int, docs: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The offsets of ``n`` segments, those of ``docs`` (increasing) of ``sizes``, the
    others empty."""
    per_doc = np.zeros(n, dtype=np.int64)
    per_doc[docs] = sizes
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_doc, out=offsets[1:])
    return offsets


def identity_scores(names: Names, pairs: Pairs, guard: float) -> tuple[np.ndarray, np.ndarray]:
    """``(left in right, right in left)``: 0.0 where the holder does not name the held
    document or translates it (:mod:`neardup.dedup.translation`): a removal the scores
    allow, refused; 1.0 elsewhere."""
    id_lr, id_rl = np.ones(len(pairs)), np.ones(len(pairs))
    ordinary = pairs.resemblance < NEAR_IDENTICAL
    for need, held, holder, out in (
        ((pairs.score_lr >= guard) & ordinary, pairs.left, pairs.right, id_lr),
        ((pairs.score_rl >= guard) & ordinary, pairs.right, pairs.left, id_rl),
    ):
        if need.any():
            refused = nameless(*lacking_names(names, held[need], holder[need]))
            if names.function_words is not None and not refused.all():
                rest = np.flatnonzero(need)[~refused]  # only those not refused already
                refused[~refused] = translations(
                    names.words, names.word_offsets, held[rest], holder[rest], names.function_words
                ).translated()
            out[need] = np.where(refused, 0.0, 1.0)
    return id_lr, id_rl


def lacking_names(
    names: Names, held: np.ndarray, holder: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair: how many rare words of ``held`` its ``holder`` lacks, how many it has, and
    how many of them are ``held``'s own words."""
    return _k.missing_and_held(
        names.rare,
        names.rare_offsets,
        np.asarray(names.words),
        names.word_offsets,
        np.ascontiguousarray(held, dtype=np.int64),
        np.ascontiguousarray(holder, dtype=np.int64),
    )


def nameless(missing: np.ndarray, found: np.ndarray, own: np.ndarray) -> np.ndarray:
    """Whether a holder lacking ``missing`` and holding ``found`` rare words of a document
    with ``own`` words of its own does not name it."""
    lacking = (missing >= MISSING_NAMES) & (found <= HELD_NAMES * (missing + found))
    return lacking | (own >= MISSING_NAMES)


def named_words(text: str, config: TextConfig) -> dict[int, str]:
    """The words of one text as the identity check sees them (hash, marked
    :data:`~neardup.fingerprints.word_kernels.LETTERED` where it is → canonical word; a
    text of characters has :data:`~neardup.fingerprints.word_kernels.CHARACTERS` too), for
    showing which rare words a keeper lacks: the run's own word kernel, spelled out."""
    batch = canonicalize_batch([text], config.canon, config.shingle.unit)
    seed = kernel_hash(config.shingle.hash, config.shingle.seed)[1]
    tokens = (batch.buf, batch.tok_starts, batch.tok_ends)
    marked, _ = word_sets(*tokens, batch.tok_offsets, seed)
    spelled = dict(zip(token_word_hashes(*tokens, seed).tolist(), batch.tokens(0), strict=True))
    return {
        h: spelled.get(h & int(WORD), "(text of characters)")
        for h in (marked & UNREPEATED).tolist()
    }
