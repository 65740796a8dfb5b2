"""neardup: find near-duplicate texts."""

import os

# numba's OpenMP workers spin while they wait; on a machine whose other cores are busy a
# spinning worker holds up every parallel region (measured: 2 threads twice as slow as one).
# Sleeping workers cost ~5% on an idle machine and keep the speed under load. Set before
# numba loads OpenMP; a value the user set wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
