"""An output directory that always holds one whole run: staged beside the target, swapped in.

:func:`staged_output` checks the target before any work (it may be written, is not an input
directory nor inside one, holds nothing but an earlier run's outputs), makes an empty staging
directory beside it (same file system) and yields it; the run writes every output there. When
the run ends without an error, the staging directory's files are flushed to disk and it
replaces the target — the earlier run's files, whatever their ``--format``, go with it —; an
error or Ctrl-C removes it, leaving the earlier output whole. The swap is two renames
(target aside, staging in) and the removal of the old run; a crash in the instant between
the renames leaves the earlier run under ``.NAME.neardup-old-*`` beside the target. A run
killed outright (SIGKILL, power loss) leaves its hidden ``.NAME.neardup-staging-*``
directory, which may be deleted.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from neardup import interrupt
from neardup.errors import InputError

__all__ = ["check_target", "staged_output", "sync_files"]

# what a neardup dedup run writes (any format and compression), and its temporary files
_OUTPUT_NAME = re.compile(
    r"(pairs|clusters|kept|removed)\.(jsonl|parquet)(\.gz|\.zst)?|summary\.json|report\.html"
    r"|review\.jsonl|templates\.npy"
    r"|\..*\.tmp"
)


def check_target(out: Path, inputs: Sequence[str | Path]) -> None:
    """Refuse an ``out`` that is a file, is or lies inside an input directory (the next run
    would read this run's outputs), or holds files that are not neardup outputs (replacing
    it would delete them). InputError naming the path; nothing is touched."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a directory")
    target = out.resolve()
    for given in inputs:
        source = Path(given).resolve()
        if source.is_dir() and (target == source or source in target.parents):
            raise InputError(
                f"--out {out} is inside the input directory {given}: the next run would read "
                "its outputs as documents; choose an --out outside it"
            )
    if out.is_dir():
        foreign = sorted(p.name for p in out.iterdir() if not _OUTPUT_NAME.fullmatch(p.name))
        if foreign:
            shown = ", ".join(foreign[:3]) + (", …" if len(foreign) > 3 else "")
            raise InputError(
                f"--out {out} holds files that are not outputs of neardup dedup ({shown}); "
                "choose a new or empty directory, or one of an earlier run"
            )


@contextlib.contextmanager
def staged_output(out: Path, inputs: Sequence[str | Path] = ()) -> Iterator[Path]:
    """A new empty directory beside ``out`` to write a run into; swapped in for ``out`` when
    the block ends without an error, removed otherwise. Checked (:func:`check_target`) and
    created before the block runs, so an unwritable ``out`` fails before any work."""
    check_target(out, inputs)
    stage = _make_stage(out)
    try:
        yield stage
        interrupt.check()  # a Ctrl-C swallowed by compiled code still keeps the earlier run
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    sync_files(stage)
    _swap(stage, out)


def sync_files(directory: Path) -> None:
    """Flush every file of ``directory``, then its entries, to disk: the outputs are whole on
    disk before they replace the earlier run. The files are flushed side by side (threads: an
    ``fsync`` waits for the disk, not the CPU); a file flushed before costs next to nothing."""
    files = [p for p in directory.iterdir() if p.is_file()]
    if files:
        with ThreadPoolExecutor(min(len(files), 8), thread_name_prefix="neardup-sync") as pool:
            list(pool.map(_fsync, files))
    with contextlib.suppress(OSError):  # a directory some systems cannot open or flush
        _fsync(directory)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _make_stage(out: Path) -> Path:
    """The staging directory beside ``out`` (InputError when it cannot be made)."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{out.name}.neardup-staging-", dir=out.parent))
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise InputError(f"--out {out}: cannot write there ({why})") from None


def _swap(stage: Path, out: Path) -> None:
    """Put ``stage`` in the place of ``out``; the earlier run's directory is removed."""
    os.chmod(stage, 0o777 & ~_umask())  # mkdtemp makes it 0700; an output dir is as mkdir's
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.neardup-old-", dir=out.parent))
        os.replace(out, old)  # replaces the empty placeholder directory
    os.replace(stage, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
