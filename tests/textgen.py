"""Random texts for tests: reproducible from a seed, with controlled word edits."""

from __future__ import annotations

import numpy as np

WORDS = [f"w{i}" for i in range(400)]


def text(seed: int, n: int = 60) -> str:
    """``n`` words drawn from :data:`WORDS` (the same text for the same seed)."""
    rng = np.random.default_rng(seed)
    return " ".join(rng.choice(WORDS, n))


def edit(body: str, seed: int, changes: int) -> str:
    """``body`` with ``changes`` distinct words replaced by new ones."""
    rng = np.random.default_rng(seed)
    words = body.split()
    for i in rng.choice(len(words), changes, replace=False):
        words[i] = f"x{seed}_{i}"
    return " ".join(words)
