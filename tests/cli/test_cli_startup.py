"""`neardup --help` lists every command without importing their modules, in their own words."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

from clirun import neardup
from neardup.cli.app import _COMMANDS, cli
from neardup.util.numba_trim import SKIPPED

HEAVY = {"numpy", "numba", "pyarrow", "fastapi", "pyspark", "rich"}


def _modules_after(*args: str) -> set[str]:
    code = (
        "import json, sys\nfrom neardup.cli.app import cli\n"
        "try:\n    cli(sys.argv[1:], prog_name='neardup')\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_help_and_version_load_nothing_heavy() -> None:
    for args in (["--help"], ["--version"]):
        loaded = _modules_after(*args)
        assert not {m for m in loaded if m.split(".")[0] in HEAVY}, args
        assert "neardup.dedup" not in loaded
        assert not {m for m in loaded if m.startswith("neardup.cli.") and m != "neardup.cli.app"}


def _help(preload: bool) -> str:
    """`neardup --help` in a fresh process, with every command's module imported first or not."""
    imports = "".join(
        f"import neardup.cli.{m}\n" for m in sorted({m for m, _ in _COMMANDS.values()})
    )
    code = f"{imports if preload else ''}from neardup.cli import run\nrun()"
    done = subprocess.run(
        [sys.executable, "-c", code, "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "100"},
    )
    return done.stdout


def test_help_lists_the_commands_in_their_own_words() -> None:
    assert _help(preload=False) == _help(preload=True)
    for module in {module for module, _ in _COMMANDS.values()}:
        importlib.import_module(f"neardup.cli.{module}")
    for name, (_, summary) in _COMMANDS.items():
        assert (cli.commands[name].help or "").split("\n\n")[0] == summary, name
    assert set(cli.commands) == set(_COMMANDS)


def test_a_command_still_runs_after_the_lazy_help() -> None:
    done = neardup("compare", "--text-a", "the cat sat on the mat", "--text-b", "the cat sat")
    assert done.returncode == 0, done.stderr
    assert "containment" in done.stdout.lower()


def test_dedup_help_loads_no_kernels() -> None:
    """The options' defaults come without numba, Arrow or rich: only a run loads them."""
    loaded = _modules_after("dedup", "--help")
    assert not {m for m in loaded if m.split(".")[0] in {"numba", "pyarrow", "rich"}}
    assert not {m for m in loaded if m.endswith("_kernels")}
    assert "neardup.cli.corpus" in loaded


def test_the_defaults_shown_are_those_a_run_uses() -> None:
    from neardup.dedup import DedupConfig, candidates, defaults

    config = DedupConfig()
    assert config.max_bucket == candidates.DEFAULT_MAX_BUCKET == defaults.DEFAULT_MAX_BUCKET
    assert config.template_df == defaults.DEFAULT_TEMPLATE_DF
    assert (config.method, config.threshold, config.measure) == (
        defaults.DEFAULT_METHOD,
        defaults.DEFAULT_THRESHOLD,
        defaults.DEFAULT_MEASURE,
    )


def test_a_dedup_run_loads_no_cffi_nor_scipy(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """numba's cffi support (cffi and its C parser, where installed) is never loaded by a run:
    no command passes a cffi function to a kernel; nor SciPy, which numba imports only to
    check its version."""
    data = tmp_path / "in.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": str(i), "text": f"the cat sat on the mat number {i % 3}"}) + "\n"
            for i in range(6)
        )
    )
    code = "from neardup.cli import run\nrun()"
    out = str(tmp_path / "out")
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code, "dedup", str(data), "--out", out],
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "numba.core.typing.cffi_utils" in imported  # the kernels were loaded …
    # … not cffi (a blocked import is listed alone, taking microseconds, with no submodule)
    assert not {m for m in imported if m.split(".")[0] in {"_cffi_backend", "pycparser"}}
    assert not {m for m in imported if m.startswith("cffi.")}
    assert {m for m in imported if m.split(".")[0] == "scipy"} <= set(SKIPPED)  # blocked only


def test_the_command_collects_its_young_objects_in_larger_batches() -> None:
    """The command's run (not a program importing the library) raises the collector's
    first threshold: its imports' long-lived objects no longer set off full collections."""
    code = (
        "import gc, neardup.cli as c\n"
        "before = gc.get_threshold()\n"
        "now = gc.get_threshold\n"
        "c.main = lambda: print(before[0], now()[0], now()[1:] == before[1:])\n"
        "c.run()"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    from neardup.cli import COLLECT_AFTER

    assert done.stdout.split() == ["700", str(COLLECT_AFTER), "True"]
