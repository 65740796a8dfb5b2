"""Chinese word segmentation: written Chinese has no spaces, so word shingles need jieba first."""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

__all__ = ["HAN_CLASS", "has_han", "segment_zh"]

# CJK Unified Ideographs (URO, Extensions A–I) and CJK Compatibility Ideographs (+ Supplement).
HAN_CLASS = (
    "\u3400-\u4dbf"  # Extension A
    "\u4e00-\u9fff"  # Unified Ideographs
    "\uf900-\ufaff"  # Compatibility Ideographs
    "\U00020000-\U0002a6df"  # Extension B
    "\U0002a700-\U0002ebef"  # Extensions C, D, E, F
    "\U0002ebf0-\U0002ee5f"  # Extension I
    "\U0002f800-\U0002fa1f"  # Compatibility Ideographs Supplement
    "\U00030000-\U000323af"  # Extensions G, H
)
_HAN = re.compile(f"[{HAN_CLASS}]")
# what jieba cuts with its dictionary (its re_han_default, with every Han range of HAN_CLASS)
_JIEBA_BLOCK = re.compile(f"[{HAN_CLASS}a-zA-Z0-9+#&._%\\-]+")

_lock = threading.Lock()
_tokenizer: Any = None


def has_han(text: str) -> bool:
    """Whether ``text`` contains a Chinese (Han) character."""
    return _HAN.search(text) is not None


def _jieba() -> Any:
    """jieba's default tokenizer, its dictionary loaded once on first use, start-up log off."""
    global _tokenizer
    if _tokenizer is None:
        with _lock:
            if _tokenizer is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _tokenizer = jieba.dt
    return _tokenizer


def segment_zh(text: str) -> str:
    """``text`` with its Chinese cut into words by jieba (precise mode with HMM for unknown
    words), the words joined by single spaces ("用Python写" → "用 Python 写").

    Only the blocks jieba itself segments (Han with Latin letters and digits) that hold a
    Han character go through jieba; the rest is left as it is, since jieba cuts any other
    script into single letters ("Москва(莫斯科)" stays "Москва ( 莫斯科 )", not "М о с к в а").
    """
    cut = _jieba().cut
    pieces = []
    last = 0
    for match in _JIEBA_BLOCK.finditer(text):
        if not has_han(match.group()):
            continue
        words = cut(match.group(), cut_all=False, HMM=True)
        pieces += [text[last : match.start()], " ".join(w for w in words if not w.isspace())]
        last = match.end()
    pieces.append(text[last:])
    return " ".join(" ".join(p.split()) for p in pieces if p and not p.isspace())
