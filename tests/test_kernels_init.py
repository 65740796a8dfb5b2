import numba

from neardup._kernels import PARALLEL_MIN_WORK, threads_for


def test_small_work_runs_on_one_thread_and_restores_the_setting():
    before = numba.get_num_threads()
    with threads_for(10):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with threads_for(PARALLEL_MIN_WORK):
        assert numba.get_num_threads() == before
