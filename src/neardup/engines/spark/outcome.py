"""A run's outcome on the driver, when it is small: the decisions and the verified pairs
collected once, and the outputs that are read from them alone (pairs, clusters, the order of
the review, the summary's counts) worked out in NumPy, as the local engine works them out.

Each output of a Spark job costs the driver a plan and the JVM a few stages, whatever its
size; a run whose documents in pairs and verified pairs fit the driver
(:data:`OUTCOME_ROWS` each) pays that once, for the collect, instead of once per output.
Only the inputs' records and the reviewed texts are read by Spark again. Nothing here
imports pyspark.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from neardup.dedup.config import Pairs
from neardup.engines.local.review import Removal, ordered_removals
from neardup.util.arrays import run_starts

OUTCOME_ROWS = 1 << 22  # documents in pairs, and verified pairs, that the driver collects

DECISION_COLUMNS = ("doc", "keep_of", "label", "keeper", "declined")
PAIR_COLUMNS = ("left", "right", "score", "s_lr", "s_rl", "resemblance", "c_lr", "c_rl")
MEASURES = ("score", "score_a_in_b", "score_b_in_a", "resemblance")
MEASURES += ("containment_a_in_b", "containment_b_in_a")


@dataclass(frozen=True, eq=False)
class Outcome:
    """The decided documents (``doc`` ascending, with their ``keep_of``, ``label``,
    ``keeper``, ``declined``, ``id`` and ``length``: characters of the text) and the
    verified pairs at the threshold (``left, right, score, s_lr, s_rl, resemblance, c_lr,
    c_rl``), as NumPy arrays and Arrow columns."""

    decisions: pa.Table
    pairs: pa.Table

    @classmethod
    def of(cls, decisions: pa.Table, pairs: pa.Table) -> Outcome:
        """The outcome of collected tables, in any row order."""
        return cls(decisions.sort_by("doc"), pairs)

    def column(self, name: str) -> np.ndarray:
        return self.decisions.column(name).to_numpy()

    def ids_of(self, docs: np.ndarray) -> pa.Array:
        """The ids of decided documents."""
        at = np.searchsorted(self.column("doc"), docs)
        return self.decisions.column("id").take(pa.array(at)).combine_chunks()

    def removed(self) -> tuple[np.ndarray, np.ndarray]:
        """The removed documents, ascending, and each one's keeper."""
        docs, keep_of = self.column("doc"), self.column("keep_of")
        moved = keep_of != docs
        return docs[moved], keep_of[moved]

    def removals(self) -> list[Removal]:
        """Every removal with its measures, weakest first (the local engine's review order)."""
        docs, keepers = self.removed()
        return ordered_removals(docs, keepers, self._pairs())

    def lengths_of(self, docs: np.ndarray) -> np.ndarray:
        return self.column("length")[np.searchsorted(self.column("doc"), docs)]

    def _pairs(self) -> Pairs:
        p = {name: self.pairs.column(name).to_numpy() for name in PAIR_COLUMNS}
        return Pairs(
            p["left"], p["right"], p["score"], p["s_lr"], p["s_rl"],
            p["resemblance"], p["c_lr"], p["c_rl"],
        )  # fmt: skip


def pair_table(outcome: Outcome, threshold: float) -> pa.Table:
    """``pairs``: the verified pairs by ids (of the ids' own type), ordered by their
    documents; ``contained`` names the direction whose score reaches the threshold and beats
    the other's."""
    pairs = outcome.pairs.sort_by([("left", "ascending"), ("right", "ascending")])
    s_lr, s_rl = pairs.column("s_lr").to_numpy(), pairs.column("s_rl").to_numpy()
    reached = pairs.column("score").to_numpy() >= threshold
    contained = np.full(len(pairs), None, dtype=object)
    contained[reached & (s_lr > s_rl)] = "a_in_b"
    contained[reached & (s_lr < s_rl)] = "b_in_a"
    columns = [
        outcome.ids_of(pairs.column("left").to_numpy()),
        outcome.ids_of(pairs.column("right").to_numpy()),
        *(pairs.column(name) for name in ("score", "s_lr", "s_rl", "resemblance", "c_lr", "c_rl")),
        pa.array(contained, pa.string()),
    ]
    return pa.Table.from_arrays(columns, names=["a", "b", *MEASURES, "contained"])


def cluster_table(outcome: Outcome) -> pa.Table:
    """``clusters``: each label held by two or more documents, its members' ids in input
    order and its keeper's id, numbered from 0 in the order of their labels (each cluster's
    first member)."""
    labels, docs = outcome.column("label"), outcome.column("doc")
    order = np.lexsort((docs, labels))  # by label, members in input order
    starts = run_starts(labels[order])
    sizes = np.diff(np.r_[starts, labels.size])
    members = order[np.repeat(sizes >= 2, sizes)]
    starts, sizes = starts[sizes >= 2], sizes[sizes >= 2]
    ids = outcome.decisions.column("id").take(pa.array(members)).combine_chunks()
    offsets = pa.array(np.r_[0, np.cumsum(sizes)].astype(np.int32))
    keepers = outcome.column("keeper")[order[starts]]
    return pa.Table.from_arrays(
        [
            pa.array(np.arange(starts.size, dtype=np.int64)),
            pa.ListArray.from_arrays(offsets, ids),
            outcome.ids_of(keepers),
        ],
        names=["cluster", "ids", "keep"],
    )


def counts(outcome: Outcome) -> dict[str, int]:
    """The summary's counts that the decisions and pairs give."""
    labels = outcome.column("label")
    _, per_label = np.unique(labels, return_counts=True)
    clusters = per_label[per_label >= 2]
    return {
        "removed": int(outcome.removed()[0].size),
        "clusters": int(clusters.size),
        "largest_cluster": int(clusters.max(initial=0)),
        "verified_pairs": len(outcome.pairs),
        "declined_pairs": int(pc.sum(outcome.decisions.column("declined")).as_py() or 0),
    }
