"""Compiled (numba) kernels behind neardup's public API; private, signatures may change."""
