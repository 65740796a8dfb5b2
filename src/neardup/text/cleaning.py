"""Each text's Python steps of canonicalization (markup removal, quoted lines, NFKC), and
running them on worker processes for large batches of markup.

The markup parsers' work (selectolax's calls, the furniture test, mwparserfromhell) is Python
that holds the interpreter lock: batches cleaned on several threads take turns through it.
Inside :func:`markup_processes`, a batch with enough markup to clean is sent to worker
processes instead, so every core parses pages while the threads wait with the lock released.
The workers import this module and the markup parsers only (no NumPy, no numba), and give
the texts :func:`clean_text` gives on the calling thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from neardup.text import clean
from neardup.text.nfkc import nfkc
from neardup.text.text_config import CanonConfig

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = ["DOC_SEPARATOR", "clean_text", "clean_texts", "markup_processes"]

DOC_SEPARATOR = "\x00"
# markup of a batch worth sending to the processes (pickling both ways and the wait cost
# about as much as parsing a few small pages)
MIN_CHARS = 1 << 16
MIN_TEXTS = 8
# markup cleaned on the calling threads before the processes start: a run with little
# markup never pays for starting them
START_CHARS = 1 << 22
_CHUNKS_PER_PROCESS = 2  # tasks per process: balances uneven pages


def clean_text(text: str, config: CanonConfig) -> str:
    """The per-text steps: markup removal and NFKC (both skipped cheaply when not needed)."""
    # wiki first: wikitext may hold <ref> tags that only the wiki parser drops
    if config.wiki and _may_be_wiki(text, config) and clean.looks_like_wiki(text):
        text = clean.strip_wiki(text)
    if config.html and clean.looks_like_html(text):
        text = clean.strip_html(text, boilerplate=config.boilerplate)
    if config.quotes:
        text = clean.strip_quoted(text)
    if config.normalize and not text.isascii():
        # per text, not per batch: one odd text would send the whole batch down the slow path
        text = nfkc(text)
    if DOC_SEPARATOR in text:
        text = text.replace(DOC_SEPARATOR, " ")
    return text


# the wiki markup that hides or carries words: links, templates, references, tables, magic
# words; the rest (bold and italic quotes, headings' "="s) goes with the punctuation anyway
_WIKI_STRUCTURE = ("[[", "{{", "<ref", "{|", "__")


def _may_be_wiki(text: str, config: CanonConfig) -> bool:
    """Cheap gate before the wiki check: when punctuation is removed, a text without the
    marks of :data:`_WIKI_STRUCTURE` has only markup that removing punctuation drops anyway.
    A licence quoting ``''AS IS''`` beside ``<holder@example.org>`` is no wiki page, and
    parsing it as one costs much (the parser is Python) for nothing."""
    return not config.punctuation or any(mark in text for mark in _WIKI_STRUCTURE)


class _Processes:
    """The worker processes of :func:`markup_processes`: started at the first batch that
    needs them, stopped when the block ends."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.seen = 0  # characters of markup cleaned on the calling threads
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                import multiprocessing  # here: a run that never starts them never loads them
                from concurrent.futures import ProcessPoolExecutor

                # spawned, not forked: the caller runs threads (a fork copies their locks)
                context = multiprocessing.get_context("spawn")
                self._pool = ProcessPoolExecutor(self.workers, mp_context=context)
            return self._pool

    def stop(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None


_active: _Processes | None = None


@contextmanager
def markup_processes(workers: int) -> Iterator[None]:
    """Within the block, :func:`clean_texts` cleans large batches on ``workers`` processes
    (none below two: the calling threads do it)."""
    global _active
    if workers < 2 or _active is not None:
        yield
        return
    _active = _Processes(workers)
    try:
        yield
    finally:
        processes, _active = _active, None
        processes.stop()


def clean_texts(texts: Sequence[str], config: CanonConfig) -> list[str]:
    """:func:`clean_text` of each text: on the worker processes of :func:`markup_processes`
    when inside one, the texts are many and long enough and the run has cleaned
    ``START_CHARS`` of markup already, else on this thread."""
    processes = _active
    chars = sum(map(len, texts))
    if processes is None or len(texts) < MIN_TEXTS or chars < MIN_CHARS:
        return [clean_text(text, config) for text in texts]
    if processes.seen < START_CHARS:
        processes.seen += chars
        return [clean_text(text, config) for text in texts]
    parts = _chunks(texts, processes.workers * _CHUNKS_PER_PROCESS)
    done = processes.pool().map(_clean_chunk, parts, [config] * len(parts))
    return [text for part in done for text in part]


def _clean_chunk(texts: list[str], config: CanonConfig) -> list[str]:
    """:func:`clean_text` of each text (on a worker process)."""
    return [clean_text(text, config) for text in texts]


def _chunks(texts: Sequence[str], parts: int) -> list[list[str]]:
    """``texts`` cut into at most ``parts`` consecutive runs of about equal characters."""
    total = sum(map(len, texts))
    step = total / parts
    out: list[list[str]] = [[]]
    chars = 0
    for text in texts:
        if out[-1] and len(out) < parts and chars >= step * len(out):
            out.append([])
        out[-1].append(text)
        chars += len(text)
    return out
