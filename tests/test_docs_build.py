"""The documentation site builds with ``mkdocs build --strict``: no broken link, no missing page,
and the generated references hold every command and every public name."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import neardup
from neardup.cli.app import _COMMANDS

ROOT = Path(__file__).resolve().parent.parent


def _text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")))


def test_site_builds_strictly_with_generated_references(tmp_path: Path) -> None:
    src = str(ROOT / "src")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p),
        "NO_MKDOCS_2_WARNING": "1",
    }
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    cli = _text(site / "reference" / "cli" / "index.html")
    for command in _COMMANDS:
        assert f"neardup {command}" in cli, command
    python = _text(site / "reference" / "python" / "index.html")
    for name in neardup.__all__:
        if name != "__version__":
            assert name in python, name
    http = _text(site / "reference" / "http" / "index.html")
    for route in ("POST /documents", "POST /query", "GET /stats", "GET /health"):
        assert route in http, route
    assert not (site / "hooks.py").exists()


def test_readme_is_a_short_front_door_pointing_inside_the_repository() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "pip install . && neardup demo" in readme
    assert "bash scripts/test.sh" in readme
    pages = [readme, *(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md"))]
    for text in pages:
        for outside in ("../shared", "METHODS §", "DESIGN.md"):
            assert outside not in text, outside
        assert not re.search(r"\b[Ss]ession \d", text)  # no history of the project's making
    for link in re.findall(r"\]\(((?!https?:)[^)#]+)", readme):
        assert (ROOT / link).exists(), link
