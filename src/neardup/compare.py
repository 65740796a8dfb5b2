"""Compare two texts: every measure of METHODS §5 and the passages they share."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from neardup.config import TextConfig
from neardup.errors import EmptyTextError
from neardup.measures import Overlap, overlap
from neardup.passages import Passages, shared_passages
from neardup.shingles import fingerprint_batch


@dataclass(frozen=True, slots=True)
class Comparison:
    """The result of comparing text A with text B by their full shingle sets."""

    overlap: Overlap
    passages_a: Passages
    passages_b: Passages
    method: str = "full"

    def as_dict(self) -> dict[str, object]:
        """Measures, counts and shared passages (the CLI's ``--json`` object)."""
        return self.overlap.as_dict() | {
            "method": self.method,
            "passages_a": self.passages_a.passages(),
            "passages_b": self.passages_b.passages(),
        }


def compare_texts(
    a: str, b: str, config: TextConfig | None = None, labels: tuple[str, str] = ("A", "B")
) -> Comparison:
    """Compare two texts; a text with no shingles left raises EmptyTextError naming it."""
    config = config or TextConfig()
    batch = fingerprint_batch([a, b], config)
    for label, text, prints in zip(labels, (a, b), (batch[0], batch[1]), strict=True):
        if prints.size == 0:
            why = (
                "the text is empty" if not text.strip() else "no words left after canonicalization"
            )
            raise EmptyTextError(f"{label}: {why}")
    passages_a, passages_b = shared_passages(a, b, config)
    return Comparison(overlap(batch[0], batch[1]), passages_a, passages_b)


def pairwise_overlaps(
    texts: Sequence[str], config: TextConfig | None = None
) -> Iterator[tuple[int, int, Overlap]]:
    """Every pair ``(i, j, overlap)`` of a handful of texts (quadratic: corpora use dedup)."""
    batch = fingerprint_batch(texts, config)
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            yield i, j, overlap(batch[i], batch[j])
