"""Engines that run the dedup flow of :mod:`neardup.dedup` elsewhere than in one process.

``spark`` runs it on Apache Spark (``pip install 'neardup[spark]'``): the same pure batch
functions inside ``mapInArrow`` tasks (:mod:`neardup.engines.spark.batches`, importable without
Spark), the group-bys and joins between them as DataFrame operations, components by
large-star / small-star (:mod:`neardup.engines.spark.graph`). Results equal the local engine's.
"""
