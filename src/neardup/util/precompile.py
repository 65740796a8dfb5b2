"""neardup's compiled kernels built ahead of a first run, on every core.

numba compiles a kernel the first time it is called with new argument types and keeps the
machine code in its on-disk cache: a fresh install pays a minute or more of compiling on its
first run, inside whatever command that is. :func:`compile_ahead` pays it at a chosen time
(building a container image, a cluster node, a CI job) by running the commands a user runs on
the bundled sample: the default dedup first, alone (it compiles the kernels every command
shares: text to fingerprint sets, candidates, verification, keepers), then every other method
and the stored collection, several at a time (each compiles only its own kernels). Their
outputs go to a temporary directory, removed at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from neardup.errors import NearDupError

Command = tuple[str, ...]


def commands(sample: Path, work: Path) -> tuple[Command, list[Command]]:
    """The default dedup of ``sample``, then the commands that may run beside each other
    (a dedup per other method; a collection created, added to and queried), writing in
    ``work``."""
    from neardup.methods import METHOD_NAMES

    first: Command = ("dedup", str(sample), "--out", str(work / "full"))
    others: list[Command] = [
        ("dedup", str(sample), "--method", name, "--out", str(work / name))
        for name in METHOD_NAMES
        if name != "full"
    ]
    db = str(work / "collection.db")
    others.append(("index", "create", "--db", db))
    others.append(("index", "add", "--db", db, str(sample)))
    others.append(("index", "query", "--db", db, str(sample)))
    return first, others


def compile_ahead(jobs: int | None = None) -> int:
    """Run :func:`commands` on the bundled sample (``jobs`` at a time after the first; by
    default one a core); returns how many ran. NearDupError naming the command that failed
    and its last line."""
    from neardup.io.sample_corpus import sample_path

    with sample_path() as sample, tempfile.TemporaryDirectory(prefix="neardup-compile-") as tmp:
        first, others = commands(Path(sample), Path(tmp))
        collection = [c for c in others if c[0] == "index"]
        parallel = [c for c in others if c[0] != "index"]
        _run(first)
        workers = max(1, jobs or os.cpu_count() or 1)
        with ThreadPoolExecutor(workers) as pool:
            # the collection's steps in order, beside the other methods' dedups
            done = [pool.submit(_run_all, collection)]
            done += [pool.submit(_run, command) for command in parallel]
            for future in done:
                future.result()
    return 1 + len(others)


def _run_all(commands: Sequence[Command]) -> None:
    for command in commands:
        _run(command)


def _run(command: Command) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "neardup", *command], capture_output=True, text=True
    )
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        last = lines[-1] if lines else f"exit {done.returncode}"
        raise NearDupError(f"compiling ahead: neardup {' '.join(command[:2])} failed: {last}")
