import numba

from neardup.util.kernels import PARALLEL_MIN_WORK, threads_for


def test_small_work_runs_on_one_thread_and_restores_the_setting():
    before = numba.get_num_threads()
    with threads_for(10):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with threads_for(PARALLEL_MIN_WORK):
        assert numba.get_num_threads() == before


def test_a_fresh_install_is_told_apart_from_a_warm_cache(tmp_path):
    import os
    import subprocess
    import sys

    from neardup.fingerprints.shingles import fingerprints
    from neardup.util.kernels import kernels_compiled

    fingerprints("warm the kernels up if this worktree never ran them")
    assert kernels_compiled()
    code = "from neardup.util.kernels import kernels_compiled; print(kernels_compiled())"
    env = os.environ | {"NUMBA_CACHE_DIR": str(tmp_path)}  # an empty cache: nothing compiled
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.stdout.strip() == "False"
