"""The local engine: a dedup run on files in one process (:mod:`neardup.engines.local.pipeline`),
its staged output directory, the copy of input records, the report, and reading a run back."""
