"""neardup's compiled kernels built ahead of a first run, on every core.

numba compiles a kernel the first time it is called with new argument types and keeps the
machine code in its on-disk cache: a fresh install pays a minute or more of compiling on its
first run, inside whatever command that is. :func:`compile_ahead` pays it at a chosen time
(building a container image, a cluster node, a CI job) by running the commands a user runs on
the bundled sample, in chains of commands that run side by side (one a core): the default
dedup then ``explain`` on its output (the longest chain: it compiles the kernels most commands
share), ``compare``, every other method's dedup, and a stored collection created, added to
and queried. numba compiles one kernel at a time in a process, so the chains are processes;
one that meets a kernel another has already cached loads it. Their outputs go to a temporary
directory, removed at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from neardup.errors import NearDupError

Command = tuple[str, ...]
Chain = list[Command | Callable[[], Command]]  # a callable: a command made once those before ran


def chains(sample: Path, texts: Sequence[str], work: Path) -> list[Chain]:
    """The chains of commands on ``sample`` (two of its ``texts`` for ``compare``), longest
    first, writing in ``work``."""
    from neardup.methods import METHOD_NAMES

    run = work / "full"
    db = str(work / "collection.db")
    longest: Chain = [("dedup", str(sample), "--out", str(run)), lambda: _explain(run)]
    compare: Chain = [("compare", "--text-a", texts[0], "--text-b", texts[1])]
    methods: list[Chain] = [
        [("dedup", str(sample), "--method", name, "--out", str(work / name))]
        for name in METHOD_NAMES
        if name != "full"
    ]
    collection: Chain = [
        ("index", "create", "--db", db),
        ("index", "add", "--db", db, str(sample)),
        ("index", "query", "--db", db, str(sample)),
    ]
    return [longest, compare, *methods, collection]


def _explain(run: Path) -> Command:
    """``explain`` of the first cluster's first two documents of a finished run."""
    with open(run / "clusters.jsonl", encoding="utf-8") as lines:
        ids = json.loads(next(lines))["ids"]
    return ("explain", ids[0], ids[1], "--run", str(run))


def compile_ahead(jobs: int | None = None) -> int:
    """Run the :func:`chains` on the bundled sample, ``jobs`` at a time (by default one a
    core); returns how many commands ran. NearDupError naming a command that failed and its
    last line."""
    from neardup.io.sample_corpus import sample_documents, sample_path

    texts = [document["text"] for document in sample_documents()[:2]]
    with sample_path() as sample, tempfile.TemporaryDirectory(prefix="neardup-compile-") as tmp:
        planned = chains(Path(sample), texts, Path(tmp))
        with ThreadPoolExecutor(max(1, jobs or os.cpu_count() or 1)) as pool:
            for future in [pool.submit(_run_chain, chain) for chain in planned]:
                future.result()
    return sum(len(chain) for chain in planned)


def _run_chain(chain: Chain) -> None:
    for step in chain:
        _run(step() if callable(step) else step)


def _run(command: Command) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "neardup", *command], capture_output=True, text=True
    )
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        last = lines[-1] if lines else f"exit {done.returncode}"
        raise NearDupError(f"compiling ahead: neardup {' '.join(command[:2])} failed: {last}")
