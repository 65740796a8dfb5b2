"""The heap tuning: freed blocks under KEEP_BELOW are reused, not faulted in again."""

import os
import subprocess
import sys

import pytest

from neardup.util.heap import ARROW_POOL, KEEP_BELOW, release_free_memory, reuse_freed_memory

FAULTS = """
import resource, sys
import numpy as np
if sys.argv[1] == "tuned":
    from neardup.util.heap import reuse_freed_memory
    reuse_freed_memory()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    np.ones(40 * 2**20 // 8)  # 40 MiB: above glibc's own adaptive limit (32 MiB)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    # pages of 4 KiB: NumPy's huge pages (when the mapping happens to be aligned for them,
    # which varies from run to run) would cut the faults of a fresh mapping 500-fold
    env = {**os.environ, "NUMPY_MADVISE_HUGEPAGE": "0"}
    out = subprocess.run(
        [sys.executable, "-c", FAULTS, mode], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_freed_batch_memory_is_reused_not_faulted_in_again():
    assert KEEP_BELOW > 40 * 2**20
    plain, tuned = _faults("plain"), _faults("tuned")
    assert tuned < plain / 5  # faulted in once and reused, not mapped afresh 20 times


def test_both_calls_are_harmless_in_this_process():
    reuse_freed_memory()
    release_free_memory()


POOL = """
import os, sys
if sys.argv[1] != "-":
    os.environ["ARROW_DEFAULT_MEMORY_POOL"] = sys.argv[1]
from neardup.util.heap import reuse_freed_memory
reuse_freed_memory()
import pyarrow as pa
print(pa.default_memory_pool().backend_name)
"""


def _pool(chosen: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != ARROW_POOL}
    out = subprocess.run(
        [sys.executable, "-c", POOL, chosen], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_arrow_s_buffers_come_from_the_tuned_heap_unless_the_user_chose_an_allocator():
    assert _pool("-") == "system"
    assert _pool("mimalloc") == "mimalloc"
