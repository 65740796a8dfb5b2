"""Judge methods against labelled data (METHODS §8): truth, pair scoring, evaluation runs,
their tables and report, and calibration of a config for ``dedup``."""
