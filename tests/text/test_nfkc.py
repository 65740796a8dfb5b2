"""NFKC piece by piece: the same text as ``unicodedata.normalize`` gives for the whole."""

import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.text import nfkc as nfkc_module
from neardup.text.nfkc import nfkc

# what NFKC changes, joins, reorders or leaves: combining marks (after ASCII letters too),
# precomposed letters, Hangul jamo that compose, ligatures, full-width and circled forms,
# no-break and ideographic spaces, math letters beyond the BMP, Han, Cyrillic
TRICKY = (
    "\u0301\u0308\u0327\u0323\u0338\u05b7\u0f71\u0f72"
    "éöñ\u1100\u1161\u11a8\uac00ﬁﬀ①Ａｂ\u00a0\u3000™…\u2126\u212b"
    "𝐀𝔸\u4e2d\u6587дл\u0419\u0306"
)
TEXTS = st.text(st.sampled_from("ae <>=\n" + TRICKY), max_size=60) | st.text(max_size=40)


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_pieces_give_the_normalization_of_the_whole(text):
    assert nfkc(text) == unicodedata.normalize("NFKC", text)


@pytest.mark.parametrize("piece", [1, 2, 3, 7])
def test_short_pieces_give_it_too(piece, monkeypatch):
    """Pieces of a few characters: nearly every cut falls next to a mark or a jamo."""
    monkeypatch.setattr(nfkc_module, "PIECE", piece)

    @settings(max_examples=300, deadline=None)
    @given(TEXTS)
    def check(text):
        assert nfkc(text) == unicodedata.normalize("NFKC", text)

    check()


def test_a_long_text_with_a_few_changed_characters():
    text = ("plain words and more words " * 200).join(["ﬁrst ", " e\u0301 ", " Ａ", " ™"])
    assert len(text) > 4 * nfkc_module.PIECE
    assert nfkc(text) == unicodedata.normalize("NFKC", text)
    ascii_only = "x" * 5000
    assert nfkc(ascii_only) is ascii_only


def test_no_canonical_composition_ends_in_an_ascii_character():
    """What the cuts rest on, for this Python's Unicode data: an ASCII character is never
    the second character of a canonical decomposition (so never joined to what precedes
    it), and NFKC leaves every ASCII character as it is."""
    for cp in range(sys.maxunicode + 1):
        parts = unicodedata.decomposition(chr(cp)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            assert int(parts[1], 16) >= 0x80, hex(cp)
    assert all(unicodedata.normalize("NFKC", chr(c)) == chr(c) for c in range(0x80))
    assert all(unicodedata.combining(chr(c)) == 0 for c in range(0x80))
