"""Unicode NFKC of a text, piece by piece: the ASCII stretches of a long text as they are.

``unicodedata.normalize`` rebuilds the whole of a text holding any character it must change:
a licence of megabytes with one ``™`` in it costs as much as one in another script. NFKC
never joins a character to the ASCII character after it — an ASCII character decomposes to
itself, is a starter (canonical combining class 0, so no reordering moves across it) and is
the second character of no canonical composition (composition joins a starter with what
follows it, never with a starter before it) — so the NFKC of a text is the NFKC of its
pieces cut before any ASCII character, joined. A piece of ASCII alone is left as it is.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["nfkc"]

PIECE = 1 << 10  # characters a piece holds at least (but the last)
_ASCII = re.compile(r"[\x00-\x7f]")


def nfkc(text: str) -> str:
    """``unicodedata.normalize("NFKC", text)``, normalizing only the pieces of ``text`` that
    are not ASCII (each about ``PIECE`` characters, cut before an ASCII character)."""
    if text.isascii():
        return text
    if len(text) <= PIECE:
        return unicodedata.normalize("NFKC", text)
    pieces = []
    at = 0
    while at < len(text):
        cut = at + PIECE
        if cut < len(text):  # the next ASCII character from there (none: the rest)
            found = _ASCII.search(text, cut)
            cut = found.start() if found else len(text)
        piece = text[at:cut]
        pieces.append(piece if piece.isascii() else unicodedata.normalize("NFKC", piece))
        at = cut
    return "".join(pieces)
