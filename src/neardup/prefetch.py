"""Run an iterator one step ahead in a background thread.

Reading and parsing a batch of records is Python (it holds the GIL); fingerprinting it is
mostly compiled kernels that release the GIL. Producing batch N + 1 in a thread while batch
N is fingerprinted keeps both cores busy instead of taking turns.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

_DONE = object()
_POLL_SECONDS = 0.1  # how often a blocked producer looks whether the consumer has gone


def prefetch(items: Iterable[T], depth: int = 2) -> Iterator[T]:
    """The items of ``items``, in order, produced by a background thread at most ``depth``
    items ahead of the consumer.

    An exception raised by ``items`` is raised here, at its place in the sequence. When the
    consumer stops early (an exception, ``close()``), the producer stops at its next item.
    """
    ready: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put(item):
                    return
        except BaseException as exc:  # handed to the consumer, raised there
            put(_Raised(exc))
            return
        put(_DONE)

    thread = threading.Thread(target=produce, name="neardup-prefetch", daemon=True)
    thread.start()
    try:
        while (item := ready.get()) is not _DONE:
            if isinstance(item, _Raised):
                raise item.exc
            yield item  # type: ignore[misc]
    finally:
        stop.set()


class _Raised:
    """An exception of the producer, on its way to the consumer."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
