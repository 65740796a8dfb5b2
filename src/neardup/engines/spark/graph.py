"""Connected components of a graph held as a Spark DataFrame of edges, by DataFrame operations.

The large-star / small-star algorithm (Kiveris et al., "Connected Components in MapReduce and
Beyond", SoCC 2014): alternately, every node links its larger neighbours to the smallest node
of its neighbourhood (large-star), and every node links its smaller neighbours and itself to
the smallest of them (small-star), until the edge set no longer changes. The result is one
star per component around its smallest node, after O(log n) rounds; each round is a group-by
and a join, so no node's neighbourhood has to fit anywhere but in one aggregation. No
GraphFrames and no RDDs: it runs over Spark Connect too.

A graph of at most :data:`DRIVER_EDGES` distinct edges (near-duplicate pairs are usually
far fewer than the documents) is brought to the driver instead and labelled there by the
local engine's union-find in one job: each round costs several Spark jobs, whatever the
graph's size.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

log = logging.getLogger("neardup.spark")
MAX_ROUNDS = 64  # far beyond the O(log n) rounds a graph of 2^32 nodes needs
DRIVER_EDGES = 1 << 22  # distinct edges labelled on the driver (16 bytes each) up to this


def component_labels(edges: DataFrame, src: str = "src", dst: str = "dst") -> DataFrame:
    """``node, label`` for every node of an edge: the label is the smallest node of its
    component. Self-loops and repeated edges are harmless."""
    from pyspark.sql import functions as F

    current = (
        edges.select(F.col(src).alias("src"), F.col(dst).alias("dst"))
        .where(F.col("src") != F.col("dst"))
        .select(F.greatest("src", "dst").alias("src"), F.least("src", "dst").alias("dst"))
        .distinct()
    )
    if DRIVER_EDGES > 0:
        current = current.localCheckpoint()
        few = current.limit(DRIVER_EDGES + 1).toArrow()
        if few.num_rows <= DRIVER_EDGES:
            return _driver_labels(edges, few)
    signature = None
    for rounds in range(1, MAX_ROUNDS + 1):
        current = _small_star(_large_star(current)).localCheckpoint()  # a short plan each round
        changed = _signature(current)
        log.info("components: round %d, %d edges", rounds, changed[0])
        if changed == signature or changed[0] == 0:
            break
        signature = changed
    else:  # pragma: no cover - impossible for graphs of fewer than 2^64 nodes
        raise RuntimeError("connected components did not converge")
    # a star: every edge is (member, smallest node); the smallest node labels itself
    labels = current.select(F.col("src").alias("node"), F.col("dst").alias("label")).unionByName(
        current.select(F.col("dst").alias("node"), F.col("dst").alias("label"))
    )
    return labels.groupBy("node").agg(F.min("label").alias("label"))


def _driver_labels(edges: DataFrame, few: pa.Table) -> DataFrame:
    """``node, label`` of the edges ``few`` (``src, dst``) by
    :func:`neardup.dedup.flow.connected_components` on the driver, as a DataFrame."""
    import pyarrow as pa

    from neardup.dedup.flow import connected_components

    src = few.column("src").to_numpy().astype(np.int64)
    dst = few.column("dst").to_numpy().astype(np.int64)
    nodes = np.unique(np.concatenate((src, dst)))
    left, right = np.searchsorted(nodes, src), np.searchsorted(nodes, dst)
    labels = nodes[connected_components(nodes.size, left, right)]  # nodes sorted: the smallest
    table = pa.table({"node": pa.array(nodes, pa.int64()), "label": pa.array(labels, pa.int64())})
    return edges.sparkSession.createDataFrame(table)


def _large_star(edges: DataFrame) -> DataFrame:
    """Each node ``u`` links every neighbour ``v > u`` to ``m(u)``, the smallest of ``u``
    and its neighbours (repeated edges are left to the small-star's distinct)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    both = edges.unionByName(edges.select(F.col("dst").alias("src"), F.col("src").alias("dst")))
    smallest = F.least(F.min("dst").over(Window.partitionBy("src")), F.col("src"))
    linked = both.withColumn("m", smallest).where(F.col("dst") > F.col("src"))
    return linked.select(F.col("dst").alias("src"), F.col("m").alias("dst"))


def _small_star(edges: DataFrame) -> DataFrame:
    """Each node ``u`` links its neighbours ``v < u``, and itself, to the smallest of them.
    Edges arrive as (larger, smaller), and leave so."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    linked = edges.withColumn("m", F.min("dst").over(Window.partitionBy("src")))
    out = linked.select(F.col("dst").alias("src"), F.col("m").alias("dst")).unionByName(
        linked.select("src", F.col("m").alias("dst"))
    )
    return out.where(F.col("src") != F.col("dst")).distinct()


def _signature(edges: DataFrame) -> tuple[int, int]:
    """Count and an order-free hash sum of the edges: equal when a round changed nothing."""
    from pyspark.sql import functions as F

    row = edges.agg(
        F.count("*").alias("n"),
        F.coalesce(F.sum(F.xxhash64("src", "dst").cast("decimal(38,0)")), F.lit(0)).alias("h"),
    ).first()
    return int(row["n"]), int(row["h"])
