"""Language-specific building blocks of canonicalization: markup, stop words, word forms."""
