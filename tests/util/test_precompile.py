"""``neardup compile``: which commands it runs to build the kernels ahead, in what order, and
what a failing one says. (Compiling everything from an empty cache takes minutes; the
suite's own runs meet every kernel anyway.)"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import cli
from neardup.errors import NearDupError
from neardup.methods import METHOD_NAMES
from neardup.util import precompile


def test_every_method_and_the_collection_are_run_the_default_dedup_first(tmp_path):
    first, others = precompile.commands(Path("sample.jsonl"), tmp_path)
    assert first == ("dedup", "sample.jsonl", "--out", str(tmp_path / "full"))
    methods = [c[c.index("--method") + 1] for c in others if c[0] == "dedup"]
    assert sorted(["full", *methods]) == sorted(METHOD_NAMES)
    steps = [c[1] for c in others if c[0] == "index"]
    assert steps == ["create", "add", "query"]
    outputs = [c[c.index("--out") + 1] for c in (first, *others) if "--out" in c]
    assert len(set(outputs)) == len(outputs)  # side by side, never in the same directory
    assert all(o.startswith(str(tmp_path)) for o in outputs)


def test_the_first_command_ends_before_the_others_start_side_by_side(monkeypatch):
    log: list[tuple[str, str, float]] = []
    lock = threading.Lock()

    def run(command: tuple[str, ...]) -> None:
        if command[0] == "dedup":
            name = command[command.index("--method") + 1] if "--method" in command else "full"
        else:
            name = " ".join(command[:2])
        with lock:
            log.append(("start", name, time.monotonic()))
        time.sleep(0.05)
        with lock:
            log.append(("end", name, time.monotonic()))

    monkeypatch.setattr(precompile, "_run", run)
    assert precompile.compile_ahead(jobs=3) == len(METHOD_NAMES) + 3
    started = [name for kind, name, _ in log if kind == "start"]
    assert sorted(started) == sorted([*METHOD_NAMES, "index create", "index add", "index query"])
    first_end = next(t for kind, name, t in log if kind == "end" and name == "full")
    later = [t for kind, name, t in log if kind == "start" and name != "full"]
    assert min(later) >= first_end
    assert [name for name in started if name.startswith("index")] == [
        "index create",
        "index add",
        "index query",
    ]
    ends = [t for kind, _, t in log if kind == "end"]
    assert max(ends) - first_end < 0.05 * len(later)  # side by side, not one after another


def test_a_failing_command_is_named_with_its_last_line(monkeypatch):
    def failing(base: Path, work: Path) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
        return ("methods",), [("dedup", str(work / "missing.jsonl"), "--out", str(work / "o"))]

    monkeypatch.setattr(precompile, "commands", failing)
    with pytest.raises(NearDupError, match=r"neardup dedup .*missing\.jsonl"):
        precompile.compile_ahead(jobs=1)


def test_a_bad_jobs_option_is_exit_2():
    done = CliRunner().invoke(cli, ["compile", "--jobs", "0"])
    assert done.exit_code == 2
