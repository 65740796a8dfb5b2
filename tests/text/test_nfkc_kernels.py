"""Compiled NFKC by replacements: ``unicodedata.normalize``'s text wherever it says done."""

import random
import sys
import unicodedata

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.text import chars
from neardup.text.nfkc_kernels import nfkc_replaced

# replaced wherever they stand (no-break and ideographic space, ellipsis, numero, full-width
# and circled forms, ligatures, a compatibility jamo, Ångström and Ohm signs, math letters)
REPLACED = "\u00a0\u3000…№，Ａｂ①ﬁﬀ\u3131\u212b\u2126𝐀™"
# their NFKC depends on what stands beside them: combining marks, composing jamo,
# a half-width jamo that becomes one, Indic vowel signs that compose
CONTEXT = "\u0301\u0308\u0327\u0338\u1161\u11a8\uffc2\u0b3e\u0306"
STABLE = "ae .\n<ж\u0418\u0439é\u4e2d\u1100\uac00\u0b47"
TEXTS = st.text(st.sampled_from(STABLE + REPLACED + CONTEXT), max_size=40)


def _batch(texts: list[str], gap: bytes = b"\x00") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    lengths = np.array([len(e) for e in encoded], dtype=np.int64)
    ends = np.cumsum(lengths + len(gap)) - len(gap)
    text = np.frombuffer(gap.join(encoded) + gap, dtype=np.uint8)
    return text, ends - lengths, ends


def _texts(text: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[str]:
    raw = text.tobytes()
    return [raw[s:e].decode("utf-8", "surrogatepass") for s, e in zip(starts, ends, strict=True)]


@settings(max_examples=500, deadline=None)
@given(st.lists(TEXTS, max_size=8), st.data())
def test_done_texts_are_their_nfkc_and_the_others_are_untouched(texts, data):
    todo = np.array(data.draw(st.lists(st.booleans(), min_size=len(texts), max_size=len(texts))))
    text, starts, ends = _batch(texts, gap=b"\x00|")
    out, new_starts, new_ends, done = nfkc_replaced(text, starts, ends, todo.astype(np.bool_))
    got = _texts(out, new_starts, new_ends)
    for original, result, wanted, was_done in zip(texts, got, todo, done, strict=True):
        if was_done:
            assert result == unicodedata.normalize("NFKC", original)
        else:
            assert result == original
        # done exactly where asked and no character needs its neighbours
        assert was_done == (wanted and not any(c in CONTEXT for c in original))
    raw = out.tobytes()  # the bytes between texts as they were
    gaps = [raw[e:s] for e, s in zip(new_ends[:-1], new_starts[1:], strict=True)]
    assert all(g == b"\x00|" for g in gaps)
    if texts:
        assert raw[: new_starts[0]] == b""
        assert raw[new_ends[-1] :] == b"\x00|"


def test_each_replaced_character_is_its_nfkc_beside_any_neighbour():
    """Every replaced character, before and after stable and replaced characters of many
    scripts — and every stable character that begins a canonical composition — is NFKC's
    own result for the pair."""
    index, _offsets, _pool = chars.nfkc_replacements()
    stable = chars.nfkc_stable_table()
    replaced = [chr(c) for c in np.flatnonzero(index >= 0)]
    assert len(replaced) > 1000
    firsts = set()
    for c in range(sys.maxunicode + 1):
        parts = unicodedata.decomposition(chr(c)).split()
        if len(parts) == 2 and not parts[0].startswith("<") and stable[int(parts[0], 16)]:
            firsts.add(chr(int(parts[0], 16)))
    rng = random.Random(7)
    some_stable = [chr(c) for c in rng.sample(np.flatnonzero(stable == 1).tolist(), 40)]
    neighbours = sorted(firsts) + some_stable + rng.sample(replaced, 40)
    pairs = [
        pair
        for u in replaced
        for n in [*rng.sample(neighbours, 60), "a", "\u1100", "\uac00"]
        for pair in (u + n, n + u)
    ]
    text, starts, ends = _batch(pairs)
    out, s, e, done = nfkc_replaced(text, starts, ends, np.ones(len(pairs), np.bool_))
    assert done.all()
    wrong = [
        p for p, got in zip(pairs, _texts(out, s, e), strict=True)
        if got != unicodedata.normalize("NFKC", p)
    ]  # fmt: skip
    assert wrong == []


def test_a_batch_with_nothing_to_do_or_out_of_order_is_returned_as_it_is():
    text, starts, ends = _batch(["a\u00a0b", "x…"])
    none = np.zeros(2, np.bool_)
    assert nfkc_replaced(text, starts, ends, none)[0] is text
    swapped = nfkc_replaced(text, starts[::-1].copy(), ends[::-1].copy(), ~none)
    assert swapped[0] is text
    assert not swapped[3].any()


def test_the_table_replaces_what_web_and_russian_text_hold_and_leaves_marks():
    index, offsets, pool = chars.nfkc_replacements()

    def replacement(ch: str) -> str:
        k = index[ord(ch)]
        return bytes(pool[offsets[k] : offsets[k + 1]]).decode()

    assert replacement("\u00a0") == " "
    assert replacement("…") == "..."
    assert replacement("№") == "No"
    assert replacement("，") == ","
    assert index[ord("ж")] == chars.NFKC_KEEP
    assert index[0x0301] == chars.NFKC_CONTEXT  # a combining mark
    assert index[0xFFC2] == chars.NFKC_CONTEXT  # becomes a jamo that composes
