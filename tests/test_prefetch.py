"""prefetch: the items in order, the producer's exceptions in place, an early stop honoured."""

import threading
import time

import pytest

from neardup.prefetch import prefetch


def test_items_come_in_order_and_the_producer_runs_in_another_thread():
    threads = []

    def items():
        for i in range(50):
            threads.append(threading.current_thread())
            yield i

    assert list(prefetch(items(), depth=3)) == list(range(50))
    assert threads
    assert all(t is not threading.current_thread() for t in threads)
    assert list(prefetch([])) == []


def test_an_exception_of_the_producer_is_raised_after_the_items_before_it():
    def items():
        yield 1
        yield 2
        raise ValueError("bad record")

    it = prefetch(items())
    assert [next(it), next(it)] == [1, 2]
    with pytest.raises(ValueError, match="bad record"):
        next(it)


def test_the_producer_stops_when_the_consumer_stops():
    produced = []

    def items():
        for i in range(10_000):
            produced.append(i)
            yield i

    it = prefetch(items(), depth=2)
    assert next(it) == 0
    it.close()
    time.sleep(0.5)  # the producer notices within its poll interval
    count = len(produced)
    time.sleep(0.3)
    assert len(produced) == count < 10
    assert not any(t.name == "neardup-prefetch" for t in threading.enumerate())
