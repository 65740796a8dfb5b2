"""A dedup run killed outright (SIGKILL) leaves nothing in $TMPDIR — its spill is inside its
staging directory beside --out — and the next run removes what it left."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from clirun import neardup


def _corpus(path: Path, n: int) -> Path:
    rng = random.Random(5)
    words = [f"w{i}" for i in range(3000)]
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            out.write(json.dumps({"id": f"d{i}", "text": " ".join(rng.choices(words, k=80))}))
            out.write("\n")
    return path


def _spills(parent: Path) -> list[Path]:
    """The spill directories inside the staging directories of ``parent``."""
    return [
        spill
        for stage in parent.glob(".out.neardup-staging-*")
        for spill in stage.glob("neardup-*")
    ]


def test_a_killed_run_leaves_no_spill_in_tmpdir_and_the_next_run_clears_it(tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    out = work / "out"
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    big = _corpus(tmp_path / "big.jsonl", 60_000)
    command = [sys.executable, "-c", "from neardup.cli import run; run()", "dedup"]
    proc = subprocess.Popen([*command, str(big), "--out", str(out)], env=env)
    deadline = time.monotonic() + 300
    while not _spills(work):  # the run has started writing its spill
        assert proc.poll() is None, "the run ended before it was killed"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert list(tmpdir.iterdir()) == []
    assert _spills(work)  # what the killed run left, beside --out
    small = _corpus(tmp_path / "small.jsonl", 30)
    done = neardup("dedup", str(small), "--out", str(out), env=env)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in work.iterdir()) == ["out"]
    assert json.loads((out / "summary.json").read_text())["documents"] == 30
