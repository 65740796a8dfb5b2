"""The man-page bench: every translated man page and its English original, rendered to text.

Pages are ``/usr/share/man/<lang>/man<s>/<name>.<s>[.gz]`` (translations) and the English
``/usr/share/man/man<s>/`` page of the same file name when at least one translation exists.
Symbolic links and ``.so`` redirections are left out (they are another page). Each page is
rendered once with ``groff -mandoc -Tutf8`` (tables through ``tbl``, no overstrike) and the
text cached beside the bench. ``id`` is ``lang/section/name``; ``group`` (the split key) is the
page, ``section/name``, so a page and all its translations stay on one side.
"""

from __future__ import annotations

import gzip
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

MAN = Path("/usr/share/man")
GROFF = ["groff", "-K", "utf-8", "-t", "-mandoc", "-Tutf8", "-P-cbou", "-rLL=78n"]


def read_source(path: Path) -> str:
    """The roff source of a page (gzip or plain; UTF-8, else Latin-1)."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def is_redirect(source: str) -> bool:
    """Whether a page only points to another (``.so other.1``)."""
    lines = [x for x in source.splitlines() if x.strip() and not x.startswith(('.\\"', "'\\\""))]
    return len(lines) <= 2 and any(x.startswith(".so ") for x in lines)


def render(source: str) -> str:
    """Roff source → plain text, as ``man`` shows it (no bold/underline, no page header)."""
    out = subprocess.run(GROFF, input=source.encode(), capture_output=True, check=False).stdout
    text = out.decode("utf-8", errors="replace")
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def page_files(man: Path = MAN) -> list[tuple[str, str, str, Path]]:
    """(lang, section, name, path) of every translation and of the originals translated."""
    translated: list[tuple[str, str, str, Path]] = []
    for lang_dir in sorted(p for p in man.iterdir() if p.is_dir() and not p.name.startswith("man")):
        for path in sorted(lang_dir.glob("man*/*")):
            if path.is_file() and not path.is_symlink():
                translated.append((lang_dir.name, path.parent.name[3:], path.name, path))
    names = {(sec, fname) for _, sec, fname, _ in translated}
    originals = [
        ("en", sec, fname, man / f"man{sec}" / fname)
        for sec, fname in sorted(names)
        if (man / f"man{sec}" / fname).is_file() and not (man / f"man{sec}" / fname).is_symlink()
    ]
    return originals + translated


def page_name(fname: str) -> str:
    """``dpkg-buildflags.1.gz`` → ``dpkg-buildflags``."""
    base = fname.removesuffix(".gz")
    return base.rsplit(".", 1)[0] if "." in base else base


def build(cache: Path, man: Path = MAN, jobs: int = 2) -> list[dict[str, Any]]:
    """One record per page (rendered text cached under ``cache``), originals first."""
    files = page_files(man)

    def one(item: tuple[str, str, str, Path]) -> dict[str, Any] | None:
        lang, sec, fname, path = item
        name = page_name(fname)
        cached = cache / lang / sec / f"{fname}.txt"
        if cached.exists():
            text = cached.read_text(encoding="utf-8")
        else:
            try:
                source = read_source(path)
            except OSError:
                return None
            text = "" if is_redirect(source) else render(source)
            cached.parent.mkdir(parents=True, exist_ok=True)
            cached.write_text(text, encoding="utf-8")
        if not text.strip():
            return None
        return {
            "id": f"{lang}/{sec}/{name}",
            "text": text,
            "group": f"{sec}/{name}",
            "name": name,
            "section": sec,
            "lang": lang,
            "original": lang == "en",
            "path": str(path),
            "names": [name],
        }

    with ThreadPoolExecutor(jobs) as pool:
        records = [r for r in pool.map(one, files) if r is not None]
    seen: set[str] = set()
    unique = []
    for r in records:  # one page file per id (name.1 and name.1.gz would collide)
        if r["id"] not in seen:
            seen.add(r["id"])
            unique.append(r)
    return unique
