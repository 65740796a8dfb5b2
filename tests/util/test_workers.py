"""ordered_map: results in order from worker threads, bounded look-ahead, exceptions in place,
no worker left behind when the consumer stops."""

import threading

import numba
import pytest

from neardup.util.workers import ordered_map


def _worker_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("neardup-worker")]


def test_results_come_in_order_from_workers_running_one_kernel_thread_each():
    seen = []

    def work(i: int) -> int:
        seen.append((threading.current_thread().name, numba.get_num_threads()))
        return i * i

    assert list(ordered_map(work, range(40), workers=2)) == [i * i for i in range(40)]
    assert all(name.startswith("neardup-worker") and n == 1 for name, n in seen)
    assert numba.get_num_threads() >= 1  # the caller's own setting untouched
    assert not _worker_threads()


def test_one_item_or_one_worker_runs_on_the_calling_thread():
    here = threading.current_thread().name
    names = []

    def work(i: int) -> int:
        names.append(threading.current_thread().name)
        return i

    assert list(ordered_map(work, [7], workers=2)) == [7]
    assert list(ordered_map(work, range(5), workers=1)) == list(range(5))
    assert list(ordered_map(work, [], workers=2)) == []
    assert names == [here] * 6


def test_items_are_taken_at_most_ahead_of_the_consumer():
    taken = []

    def items():
        for i in range(100):
            taken.append(i)
            yield i

    results = ordered_map(lambda i: i, items(), workers=2, ahead=3)
    for consumed, value in enumerate(results, 1):
        assert value == consumed - 1
        assert len(taken) <= consumed + 3
    assert len(taken) == 100


def test_an_exception_is_raised_at_its_item_after_the_results_before_it():
    def work(i: int) -> int:
        if i == 5:
            raise ValueError("bad batch 5")
        return i

    results = ordered_map(work, range(20), workers=2)
    assert [next(results) for _ in range(5)] == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="bad batch 5"):
        next(results)
    assert not _worker_threads()


def test_a_consumer_that_stops_leaves_no_worker_running():
    started = []

    def work(i: int) -> int:
        started.append(i)
        return i

    results = ordered_map(work, range(1000), workers=2, ahead=4)
    assert next(results) == 0
    results.close()
    assert not _worker_threads()
    count = len(started)
    assert count <= 6  # the look-ahead, not the whole stream
    assert len(started) == count  # nothing runs after close
