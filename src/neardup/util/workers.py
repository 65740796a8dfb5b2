"""Map a function over a stream of items on worker threads: results in order, memory bounded.

Fingerprinting a batch is mostly compiled kernels that release the GIL, so batches handled
on separate threads keep every core busy while the caller reads the next ones. Each worker
runs its kernels on its own thread only (numba's thread count is per thread): a parallel
region inside a worker would wait for a core that another worker or the reader holds.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

import numba

T = TypeVar("T")
R = TypeVar("R")

_END = object()


def ordered_map(
    fn: Callable[[T], R], items: Iterable[T], workers: int, ahead: int = 0
) -> Iterator[R]:
    """``fn(item)`` for each item, in order, computed by ``workers`` threads at most
    ``ahead`` items (default: twice the workers) ahead of the consumer.

    With one worker, or a single item, ``fn`` runs on the calling thread with all of its
    kernel threads. An exception of ``fn`` is raised at its item's place. When the consumer
    stops (an exception, ``close()``), items not started are dropped and the running ones
    are waited for, so no worker outlives the iterator (the interpreter may exit safely).
    """
    it = iter(items)
    first, second = next(it, _END), next(it, _END)
    if workers <= 1 or second is _END:
        if first is not _END:
            yield fn(first)  # type: ignore[arg-type]
        if second is not _END:
            yield fn(second)  # type: ignore[arg-type]
            yield from map(fn, it)
        return
    ahead = ahead or 2 * workers
    pending: deque[Future[R]] = deque()
    with kernel_pool(workers) as pool:
        try:
            for item in _chain(first, second, it):
                pending.append(pool.submit(fn, item))
                if len(pending) >= ahead:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def kernel_pool(workers: int) -> ThreadPoolExecutor:
    """``workers`` threads, each running its kernels on itself alone (one numba thread)."""
    return ThreadPoolExecutor(
        workers, thread_name_prefix="neardup-worker", initializer=numba.set_num_threads,
        initargs=(1,),
    )  # fmt: skip


def _chain(first: object, second: object, rest: Iterator[T]) -> Iterator[T]:
    yield first  # type: ignore[misc]
    yield second  # type: ignore[misc]
    yield from rest
