"""The as-written measures, independent of neardup: tokens, 3-shingles, containment, pairs.

Text is NFKC-normalised and lower-cased; tokens are ``\\w+`` runs, a Han character being a
token of its own; a document's shingles are the SET of its runs of three consecutive tokens
(one shingle of all its tokens when it has fewer than three, none when it has none). The
near-identical pairs of a corpus (resemblance ≥ a bar) are found exactly with a prefix filter:
two sets with Jaccard ≥ t share a shingle among the first ``|S| - ceil(t·|S|) + 1`` of each
set ordered rarest first, so only documents sharing such a shingle are compared.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
TOKEN_RE = re.compile(rf"[{HAN}]|[^\W{HAN}]+")
SHINGLE = 3


def tokens(text: str) -> list[str]:
    """NFKC, lower-cased ``\\w+`` tokens; each Han character alone."""
    return TOKEN_RE.findall(unicodedata.normalize("NFKC", text).lower())


def shingles(text: str, size: int = SHINGLE) -> frozenset[str]:
    """The set of ``size``-token runs of ``text`` (all its tokens when fewer than ``size``)."""
    toks = tokens(text)
    if not toks:
        return frozenset()
    if len(toks) < size:
        return frozenset([" ".join(toks)])
    return frozenset(" ".join(toks[i : i + size]) for i in range(len(toks) - size + 1))


def containment(a: frozenset[str], b: frozenset[str]) -> float:
    """Share of ``a``'s shingles that are in ``b`` (0 for an empty ``a``)."""
    return len(a & b) / len(a) if a else 0.0


def resemblance(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard of two shingle sets (0 when both are empty)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def squash(text: str) -> str:
    """``text`` with every run of whitespace one space, trimmed: equal means identical."""
    return " ".join(text.split())


def mentions(haystack: str, needle: str) -> bool:
    """Whether ``needle`` occurs in ``haystack`` as written, case-insensitive, whitespace
    squashed, and not inside a longer word (``bc`` is not found in ``abc``)."""
    needle = squash(needle).lower()
    if not needle:
        return False
    pattern = r"(?<!\w)" + re.escape(needle).replace(r"\ ", r"\s+") + r"(?!\w)"
    return re.search(pattern, haystack.lower()) is not None


def split_of(key: str) -> str:
    """``tune`` or ``heldout``, by a stable hash of a grouping key (about half each)."""
    digest = hashlib.sha256(key.encode()).digest()
    return "tune" if digest[0] % 2 == 0 else "heldout"


def near_identical_pairs(
    sets: Sequence[frozenset[str]], bar: float = 0.9
) -> list[tuple[int, int, float]]:
    """Every pair ``(i, j, resemblance)``, ``i < j``, of non-empty sets with resemblance ≥ ``bar``,
    exactly (prefix filter over a rarest-first order, then a size filter and a full check)."""
    df: Counter[str] = Counter()
    for s in sets:
        df.update(s)
    index: dict[str, list[int]] = defaultdict(list)
    out: list[tuple[int, int, float]] = []
    order = sorted((i for i, s in enumerate(sets) if s), key=lambda i: (len(sets[i]), i))
    for i in order:  # shorter first: each pair is checked when its longer member arrives
        s = sets[i]
        ranked = sorted(s, key=lambda g: (df[g], g))
        prefix = ranked[: len(s) - math.ceil(bar * len(s) - 1e-9) + 1]
        seen: set[int] = set()
        for g in prefix:
            for j in index[g]:
                if j in seen:
                    continue
                seen.add(j)
                if len(sets[j]) < bar * len(s) - 1e-9:
                    continue
                r = resemblance(s, sets[j])
                if r >= bar:
                    out.append((min(i, j), max(i, j), r))
            index[g].append(i)
    out.sort()
    return out


def lacking(removed: str, keeper_shingles: frozenset[str], limit: int = 240) -> str:
    """The words of ``removed`` whose shingles the keeper lacks, runs joined by ``…``."""
    toks = tokens(removed)
    parts: list[str] = []
    run = False
    for i in range(max(len(toks) - SHINGLE + 1, 1)):
        gram = " ".join(toks[i : i + SHINGLE])
        if gram not in keeper_shingles:
            parts.append(toks[i + SHINGLE - 1] if run else gram)
            run = True
        elif run:
            parts.append("…")
            run = False
        if sum(len(p) + 1 for p in parts) > limit:
            break
    return " ".join(parts)


def all_shingles(texts: Iterable[str]) -> list[frozenset[str]]:
    """:func:`shingles` of each text."""
    return [shingles(t) for t in texts]
