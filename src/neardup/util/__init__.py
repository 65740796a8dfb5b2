"""Helpers every part uses: array operations, memory, worker threads, interrupts,
optional extras, the kernels' thread count, tables cached on disk."""
