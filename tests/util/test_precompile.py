"""``neardup compile``: which commands it runs to build the kernels ahead, side by side, in
what order, and what a failing one says. (Compiling everything from an empty cache takes
minutes; the suite's own runs meet every kernel anyway.)"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli import cli
from neardup.errors import NearDupError
from neardup.methods import METHOD_NAMES
from neardup.util import precompile


def _name(command: tuple[str, ...]) -> str:
    if command[0] == "dedup":
        return command[command.index("--method") + 1] if "--method" in command else "full"
    return " ".join(command[:2]) if command[0] == "index" else command[0]


def test_every_method_compare_explain_and_the_collection_are_run(tmp_path):
    planned = precompile.chains(Path("sample.jsonl"), ["text a", "text b"], tmp_path)
    first = planned[0][0]
    assert first == ("dedup", "sample.jsonl", "--out", str(tmp_path / "full"))  # longest first
    commands = [step for chain in planned for step in chain if not callable(step)]
    names = [_name(c) for c in commands]
    assert sorted(n for n in names if n in METHOD_NAMES) == sorted(METHOD_NAMES)
    assert [n for n in names if n.startswith("index")] == [
        "index create",
        "index add",
        "index query",
    ]
    assert ("compare", "--text-a", "text a", "--text-b", "text b") in commands
    outputs = [c[c.index("--out") + 1] for c in commands if "--out" in c]
    assert len(set(outputs)) == len(outputs)  # side by side, never in the same directory
    assert all(o.startswith(str(tmp_path)) for o in outputs)


def test_explain_asks_for_the_first_cluster_of_the_finished_run(tmp_path):
    planned = precompile.chains(Path("sample.jsonl"), ["a", "b"], tmp_path)
    explain = planned[0][1]
    assert callable(explain)
    (tmp_path / "full").mkdir()
    clusters = [{"cluster": 0, "ids": ["x", "y", "z"], "keep": "x"}, {"ids": ["p", "q"]}]
    (tmp_path / "full/clusters.jsonl").write_text("".join(json.dumps(c) + "\n" for c in clusters))
    assert explain() == ("explain", "x", "y", "--run", str(tmp_path / "full"))


def test_the_chains_run_side_by_side_each_in_its_order(monkeypatch):
    log: list[tuple[str, str, float]] = []
    lock = threading.Lock()

    def run(command: tuple[str, ...]) -> None:
        with lock:
            log.append(("start", _name(command), time.monotonic()))
        time.sleep(0.05)
        with lock:
            log.append(("end", _name(command), time.monotonic()))

    monkeypatch.setattr(precompile, "_run", run)
    monkeypatch.setattr(precompile, "_explain", lambda run: ("explain", "x", "y", "--run", "r"))
    ran = precompile.compile_ahead(jobs=4)
    started = [name for kind, name, _ in log if kind == "start"]
    assert ran == len(started) == len(METHOD_NAMES) + 5  # + explain, compare, 3 index steps
    assert started.index("explain") > started.index("full")
    assert [n for n in started if n.startswith("index")] == [
        "index create",
        "index add",
        "index query",
    ]
    times = [t for _, _, t in log]
    assert max(times) - min(times) < 0.05 * len(started) * 0.75  # not one after another


def test_a_failing_command_is_named_with_its_last_line(monkeypatch):
    def failing(sample: Path, texts: list[str], work: Path) -> list[list[tuple[str, ...]]]:
        return [[("methods",)], [("dedup", str(work / "missing.jsonl"), "--out", str(work / "o"))]]

    monkeypatch.setattr(precompile, "chains", failing)
    with pytest.raises(NearDupError, match=r"neardup dedup .*missing\.jsonl"):
        precompile.compile_ahead(jobs=1)


def test_a_bad_jobs_option_is_exit_2():
    done = CliRunner().invoke(cli, ["compile", "--jobs", "0"])
    assert done.exit_code == 2
