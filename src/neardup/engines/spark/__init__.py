"""The Spark engine: the dedup flow on Apache Spark (``pip install 'neardup[spark]'``).

The batch functions of :mod:`neardup.engines.spark.batches` import no pyspark; the rest does."""
