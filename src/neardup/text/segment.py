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
    """``text`` cut into words by jieba (precise mode with HMM for unknown words), the words
    joined by single spaces; non-Chinese words stay whole ("用Python写" → "用 Python 写")."""
    words = _jieba().cut(text, cut_all=False, HMM=True)
    return " ".join(w for w in words if w and not w.isspace())
