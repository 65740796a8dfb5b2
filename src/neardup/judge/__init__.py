"""Judge methods against labelled data (docs/guides/judge.md): truth, pair scoring, evaluation runs,
their tables and report, and calibration of a config for ``dedup``."""
