"""Every shell and Python example of the README and the documentation runs, against the sample.

A page's fenced ``bash`` and ``python`` blocks run in order in one fresh directory that holds
``corpus.jsonl`` (the bundled sample), as a reader who follows the page would run them; each
must exit 0. ``neardup`` is this checkout's command. Marks in an HTML comment right before a
block:

- ``<!-- example: skip REASON -->``: not run (a long-running server, a cluster); the reason is
  required, and the number of such blocks is capped below;
- ``<!-- example: server DB -->``: run while ``neardup serve --db DB --token $NEARDUP_TOKEN``
  serves the collection the page made, with ``localhost:8000`` pointing at it;
- ``<!-- example: postgres -->``: run with ``postgresql://localhost/news`` pointing at a new
  database of the tests' own PostgreSQL server (tests/pgserver.py).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from neardup.io.sample_corpus import sample_path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
MAX_SKIPPED = 5  # blocks marked skip over all pages (installs, the suite, Spark): keep it small
TOKEN = "a-long-secret"

_BLOCK = re.compile(
    r"(?:<!-- example: (?P<mark>[a-z]+)(?: (?P<arg>[^>]*?))? -->\s*\n)?"
    r"^```(?P<lang>bash|python)\n(?P<code>.*?)^```$",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    lang: str
    code: str
    mark: str | None
    arg: str | None


def examples(page: Path) -> list[Example]:
    text = page.read_text(encoding="utf-8")
    found = []
    for m in _BLOCK.finditer(text):
        line = text.count("\n", 0, m.start("code"))
        if m["mark"] not in (None, "skip", "server", "postgres"):
            pytest.fail(f"{page.name}:{line}: unknown example mark {m['mark']!r}")
        if m["mark"] == "skip" and not (m["arg"] or "").strip():
            pytest.fail(f"{page.name}:{line}: a skipped example must say why")
        found.append(Example(page, line, m["lang"], m["code"], m["mark"], m["arg"]))
    return found


def _bin(tmp: Path) -> Path:
    """A directory with a ``neardup`` command that runs this checkout's sources."""
    bin_dir = tmp / "_bin"
    bin_dir.mkdir()
    script = bin_dir / "neardup"
    script.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -c "from neardup.cli import run; run()" "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def _env(tmp: Path) -> dict[str, str]:
    src = str(ROOT / "src")
    path = os.environ.get("PYTHONPATH")
    return {
        **os.environ,
        "PATH": f"{_bin(tmp)}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": src if not path else f"{src}{os.pathsep}{path}",
        "NEARDUP_TOKEN": TOKEN,
        "COLUMNS": "100",
    }


def _run(example: Example, work: Path, env: dict[str, str]) -> None:
    if example.lang == "bash":
        command = ["bash", "-euo", "pipefail", "-c", example.code]
    else:
        command = [sys.executable, "-c", example.code]
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (
        f"{example.page.relative_to(ROOT)}:{example.line} ({example.lang}) exited "
        f"{done.returncode}\n--- code\n{example.code}--- stdout\n{done.stdout[-3000:]}"
        f"--- stderr\n{done.stderr[-3000:]}"
    )


def _run_served(example: Example, work: Path, env: dict[str, str], log: Path) -> None:
    from tests.service.test_service import serving

    db = str(work / (example.arg or "news.db"))
    with serving(db, log, "--token", TOKEN) as server:
        port = server.url.rsplit(":", 1)[1]
        code = example.code.replace("localhost:8000", f"localhost:{port}")
        _run(Example(example.page, example.line, example.lang, code, None, None), work, env)


def test_every_skipped_example_says_why_and_they_are_few() -> None:
    skipped = [e for page in PAGES for e in examples(page) if e.mark == "skip"]
    assert len(skipped) <= MAX_SKIPPED, [f"{e.page.name}:{e.line}" for e in skipped]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run(page: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    runnable = [e for e in examples(page) if e.mark != "skip"]
    if not runnable:
        return
    work = tmp_path / "work"
    work.mkdir()
    with sample_path() as sample:
        shutil.copy(sample, work / "corpus.jsonl")
    env = _env(tmp_path)
    for example in runnable:
        if example.mark == "server":
            _run_served(example, work, env, tmp_path / "server.log")
        elif example.mark == "postgres":
            url = request.getfixturevalue("postgres_url")
            code = example.code.replace("postgresql://localhost/news", url)
            _run(Example(example.page, example.line, example.lang, code, None, None), work, env)
        else:
            _run(example, work, env)
