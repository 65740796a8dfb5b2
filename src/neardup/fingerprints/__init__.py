"""Canonical tokens to fingerprint sets: shingles, hashes, long texts, with their compiled
kernels; the measures of two sets and the passages two texts share."""
