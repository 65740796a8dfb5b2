"""neardup: find near-duplicate texts."""

__version__ = "0.1.0"
