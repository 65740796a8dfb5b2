"""The staged output directory: checked before work, swapped in whole, removed on failure."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from neardup.engines.local import outdir
from neardup.engines.local.outdir import check_target, staged_output
from neardup.errors import InputError
from neardup.io.exchange import exchange


def _names(path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


def test_a_finished_run_replaces_the_earlier_one_whole(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "kept.parquet").write_text("old")
    (out / "summary.json").write_text("old")
    with staged_output(out) as stage:
        assert stage.parent == tmp_path
        assert stage != out
        assert _names(stage) == []
        (stage / "kept.jsonl").write_text("new")
        assert (out / "kept.parquet").read_text() == "old"  # untouched while the run works
    assert _names(out) == ["kept.jsonl"]
    assert _names(tmp_path) == ["out"]  # no staging or old directory left


def _fail_inside(out, exc: BaseException) -> None:
    with staged_output(out) as stage:
        (stage / "pairs.jsonl").write_text("half")
        raise exc


def test_a_failed_or_interrupted_run_leaves_the_earlier_output_as_it_was(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("old")
    for exc in (RuntimeError("boom"), KeyboardInterrupt()):
        with pytest.raises(type(exc)):
            _fail_inside(out, exc)
        assert _names(out) == ["summary.json"]
        assert _names(tmp_path) == ["out"]


def test_a_new_out_appears_only_at_the_end_with_normal_permissions(tmp_path):
    out = tmp_path / "a" / "b"
    with staged_output(out) as stage:
        assert not out.exists()
        (stage / "summary.json").write_text("{}")
    assert _names(out) == ["summary.json"]
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o777 & ~mask


def _a_file(t):
    (t / "f").write_text("x")
    return t / "f"


def _foreign(t):
    (t / "mine").mkdir()
    (t / "mine" / "notes.txt").write_text("x")
    return t / "mine"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_a_file, "not a directory"),
        (lambda t: t / "inputs", "inside the input directory"),
        (lambda t: t / "inputs" / "out", "inside the input directory"),
        (_foreign, "notes.txt"),
    ],
)
def test_targets_refused_before_any_work(tmp_path, make, message):
    (tmp_path / "inputs").mkdir()
    out = make(tmp_path)
    with pytest.raises(InputError, match=message):
        check_target(out, [tmp_path / "inputs"])


def test_an_unwritable_place_is_refused_before_the_block_runs(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    ran = False
    with pytest.raises(InputError, match="cannot write there"), staged_output(blocker / "out"):
        ran = True
    assert not ran


def test_earlier_outputs_and_temporary_files_are_allowed(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    earlier = ("pairs.jsonl.gz", "kept.parquet", "report.html", ".kept.jsonl.ab12.tmp")
    for name in (*earlier, "review.jsonl", "templates.npy"):
        (out / name).write_text("x")
    check_target(out, [tmp_path / "elsewhere.jsonl"])


def test_every_file_is_flushed_to_disk_before_it_replaces_the_earlier_run(tmp_path, flushed):
    out = tmp_path / "out"
    out.mkdir()
    (out / "kept.jsonl").write_text("old")
    with staged_output(out) as stage:
        for name in ("kept.jsonl", "removed.jsonl", "summary.json"):
            (stage / name).write_text("new")
    assert (out / "kept.jsonl").read_text() == "new"
    # each file and then the directory, all while they were still the staging directory's
    assert sorted(flushed[:3]) == sorted(
        str(stage / n) for n in ("kept.jsonl", "removed.jsonl", "summary.json")
    )
    assert flushed[3:] == [str(stage)]


def test_a_failed_run_flushes_nothing(tmp_path, flushed):
    with pytest.raises(RuntimeError):
        _fail_inside(tmp_path / "out", RuntimeError("boom"))
    assert flushed == []


# ------------------------------------------------------- swaps, and what killed runs leave


def _dead_pid() -> int:
    """The id of a process that has ended (and was reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _left(out, kind: str, pid: int, files: dict[str, str], host: str | None = None):
    """A directory a run of ``pid`` made beside ``out``, as a kill leaves it."""
    host = host or outdir._owner().rpartition(".")[0]
    path = out.parent / f".{out.name}.neardup-{kind}-{host}.{pid}-abc123_x"
    path.mkdir()
    for name, text in files.items():
        (path / name).write_text(text)
    return path


def test_a_kill_between_the_two_renames_is_undone_by_the_next_run(tmp_path):
    out = tmp_path / "out"  # killed after "out → old", before "staging → out"
    pid = _dead_pid()
    _left(out, "old", pid, {"summary.json": "earlier"})
    _left(out, "staging", pid, {"summary.json": "new, never acknowledged"})
    removed = outdir.recover(out)
    assert _names(out) == ["summary.json"]
    assert (out / "summary.json").read_text() == "earlier"
    assert _names(tmp_path) == ["out"]
    assert len(removed) == 1


def test_the_next_run_clears_dead_runs_and_leaves_live_ones_and_other_hosts(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("current")
    dead = _dead_pid()
    _left(out, "staging", dead, {"kept.jsonl": "spill of a killed run"})
    _left(out, "old", dead, {})  # the placeholder of a run killed before its first rename
    live = _left(out, "staging", os.getpid(), {"kept.jsonl": "a run at work"})
    other = _left(out, "staging", dead, {"x": "y"}, host="another-host")
    legacy = tmp_path / ".out.neardup-staging-k2j3h4"  # no owner in the name: left alone
    legacy.mkdir()
    with staged_output(out) as stage:
        (stage / "summary.json").write_text("newer")
    assert (out / "summary.json").read_text() == "newer"
    assert sorted(tmp_path.iterdir()) == sorted([out, live, other, legacy])


def test_the_swap_is_one_exchange_on_linux_and_two_renames_elsewhere(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "f").write_text("a")
    (b / "f").write_text("b")
    swapped = exchange(a, b)
    assert swapped == sys.platform.startswith("linux")
    if swapped:
        assert ((a / "f").read_text(), (b / "f").read_text()) == ("b", "a")
    out = tmp_path / "out"
    for atomic in (True, False):  # the same result by either way
        if not atomic:
            monkeypatch.setattr(outdir, "exchange", lambda *_: False)
        out.mkdir(exist_ok=True)
        (out / "summary.json").write_text("old")
        with staged_output(out) as stage:
            (stage / "kept.jsonl").write_text("new")
        assert _names(out) == ["kept.jsonl"]
        assert _names(tmp_path) == ["a", "b", "out"]


def test_a_failed_exchange_keeps_the_earlier_run(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("old")
    with pytest.raises(OSError, match="missing"):
        exchange(tmp_path / "missing", out)
    assert (out / "summary.json").read_text() == "old"
