"""An output directory that always holds one whole run: staged beside the target, swapped in.

:func:`staged_output` checks the target before any work (it may be written, is not an input
directory nor inside one, holds nothing but an earlier run's outputs), makes an empty staging
directory beside it (same file system) and yields it; the run writes every output there, its
temporary files too. When the run ends without an error, the staging directory's files are
flushed to disk and it replaces the target — the earlier run's files, whatever their
``--format``, go with it —; an error or Ctrl-C removes it, leaving the earlier output whole,
and a full disk is one :class:`~neardup.errors.OutputError` naming ``--out``.

The swap is one atomic exchange where the OS has one (Linux ``renameat2``), else two renames
(target aside, staging in). The directories a run makes beside the target carry its host and
process id (``.NAME.neardup-staging-HOST.PID-*``, ``.NAME.neardup-old-HOST.PID-*``): the next
run (:func:`recover`) removes those of runs of this host no longer alive — a run killed
outright leaves its staging directory, spill included — and, when one was killed between the
two renames, puts the earlier run back in place first.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from neardup.errors import InputError, OutputError
from neardup.io.exchange import exchange
from neardup.util import interrupt

__all__ = ["check_target", "recover", "staged_output", "sync_files"]

# what a neardup dedup run writes (any format and compression), and its temporary files
_OUTPUT_NAME = re.compile(
    r"(pairs|clusters|kept|removed)\.(jsonl|parquet)(\.gz|\.zst)?|summary\.json|report\.html"
    r"|review\.jsonl|templates\.npy|rare_words\.npy"
    r"|\..*\.tmp"
)
FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})  # errors of a full disk or quota


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
    created before the block runs, so an unwritable ``out`` fails before any work; what dead
    runs left beside ``out`` is cleared first (:func:`recover`)."""
    recover(out)
    check_target(out, inputs)
    stage = _make_stage(out)
    try:
        yield stage
        interrupt.check()  # a Ctrl-C swallowed by compiled code still keeps the earlier run
        sync_files(stage)
        _swap(stage, out)
    except OSError as exc:
        full = _full(exc, stage)  # asked before the files are removed
        shutil.rmtree(stage, ignore_errors=True)
        if full:
            kept = "the earlier output is kept"
            raise OutputError(full_disk(f"--out {out}", exc, kept)) from None
        raise
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def _full(exc: OSError, where: Path) -> bool:
    """Whether ``exc`` is a write that failed for lack of space: a full-disk errno, or a
    short write without one (NumPy's ``tofile``) on a file system with no space left."""
    if exc.errno is not None:
        return exc.errno in FULL
    try:
        free = os.statvfs(where)
    except OSError:
        return False
    return free.f_bavail * free.f_frsize < 2**20


def full_disk(what: str, exc: OSError, kept: str) -> str:
    """The one line saying ``what`` could not be written for lack of space."""
    where = f" ({exc.filename})" if exc.filename else ""
    why = exc.strerror or os.strerror(errno.ENOSPC)
    return f"{what}: cannot write{where}: {why}; {kept}"


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
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:  # a temporary file renamed meanwhile: flushed under its name
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _owner() -> str:
    """This run's mark in the names of the directories it makes: ``HOST.PID``."""
    host = re.sub(r"[^A-Za-z0-9-]", "_", socket.gethostname())[:40]
    return f"{host}.{os.getpid()}"


def _made(out: Path, kind: str) -> Path:
    """A new directory beside ``out`` of this run (``kind``: staging or old)."""
    prefix = f".{out.name}.neardup-{kind}-{_owner()}-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=out.parent))


def _make_stage(out: Path) -> Path:
    """The staging directory beside ``out`` (InputError when it cannot be made)."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return _made(out, "staging")
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise InputError(f"--out {out}: cannot write there ({why})") from None


def _swap(stage: Path, out: Path) -> None:
    """Put ``stage`` in the place of ``out``; the earlier run's directory is removed. On an
    error, ``out`` is the earlier run (or missing, as before)."""
    os.chmod(stage, 0o777 & ~_umask())  # mkdtemp makes it 0700; an output dir is as mkdir's
    if not out.exists():
        os.replace(stage, out)
        return
    if exchange(stage, out):  # stage now holds the earlier run
        shutil.rmtree(stage, ignore_errors=True)
        return
    old = _made(out, "old")
    os.replace(out, old)  # replaces the empty placeholder directory
    try:
        os.replace(stage, out)
    except BaseException:
        os.replace(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    """Whether process ``pid`` of this host runs (one of another user counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(out: Path) -> list[Path]:
    """Clear what runs of this host that are no longer alive left beside ``out``: when
    ``out`` is missing and such a run had moved the earlier run aside (killed between the
    two renames of a swap), that run is put back as ``out``; then their staging and old
    directories are removed. Directories of live runs and of other hosts are left alone.
    Returns the directories removed."""
    parent, host = out.parent, _owner().rpartition(".")[0]
    if not parent.is_dir():
        return []
    mark = re.compile(rf"\.{re.escape(out.name)}\.neardup-(staging|old)-(.+)\.(\d+)-\w+")
    dead: dict[str, list[Path]] = {"staging": [], "old": []}
    for path in parent.iterdir():
        found = mark.fullmatch(path.name)
        if found and found[2] == host and path.is_dir() and not _alive(int(found[3])):
            dead[found[1]].append(path)
    if dead["old"] and not os.path.lexists(out):
        earlier = max(dead["old"], key=lambda p: p.stat().st_mtime)
        os.replace(earlier, out)
        dead["old"].remove(earlier)
    removed = dead["staging"] + dead["old"]
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed
