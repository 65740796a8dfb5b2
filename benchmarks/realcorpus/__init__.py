"""Real-text benches for ``bench_real.py``: builders, labels and the as-written measures."""
