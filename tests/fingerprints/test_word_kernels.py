"""A token's word mark against its definition in Python (code points and their values)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.fingerprints.word_kernels import LETTERED, word_mark

# letters, digits, signs and scripts a token may mix: ASCII, × and ÷ beside accented
# letters, Greek, Cyrillic, a curly apostrophe, a combining accent, Han, an emoji
CHARACTERS = "ab9Z0_-'×÷¿ÀÿéœΩжЯ\u2019\u0301東京😀"


def marked_by_definition(token: str) -> int:
    if len(token) < 2 or any("0" <= c <= "9" for c in token):
        return -1
    beyond = any(0xC0 <= ord(c) <= 0x1FFF and c not in "×÷" for c in token)
    return int(LETTERED) if beyond else 0


@settings(deadline=None, max_examples=300)  # the first call compiles the kernel
@given(st.text(alphabet=CHARACTERS, min_size=1, max_size=8))
def test_word_mark_is_its_definition(token: str) -> None:
    buf = np.frombuffer(token.encode(), dtype=np.uint8)
    assert word_mark(buf, 0, buf.size) == marked_by_definition(token)


@settings(deadline=None, max_examples=400)
@given(
    token=st.text(alphabet="abzAZ09_-'é", min_size=1, max_size=12),
    before=st.binary(max_size=9),
    after=st.binary(max_size=12),
)
def test_word_mark_inside_a_buffer_is_its_definition(token: str, before: bytes, after: bytes):
    """Tokens inside a larger buffer, any bytes around them (short ASCII tokens are tested a
    word at a time, reading past their end): the mark is still the definition's."""
    encoded = token.encode()
    buf = np.frombuffer(before + encoded + after, dtype=np.uint8)
    lo = len(before)
    assert word_mark(buf, lo, lo + len(encoded)) == marked_by_definition(token)
