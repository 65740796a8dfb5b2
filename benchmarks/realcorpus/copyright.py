"""The copyright bench: every ``/usr/share/doc/*/copyright`` of the installed Debian packages.

One record per file: ``id`` the package (the doc directory's name), ``text`` the file as
written, ``source`` its source package (``dpkg-query``), ``software`` the names it is known by
(package, source, ``Upstream-Name:``) and ``holders`` (names from its copyright lines, years and
e-mail addresses stripped). Files are grouped for the split by source package.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

DOC = Path("/usr/share/doc")
YEARS_RE = re.compile(r"\b(19|20)\d\d\b(\s*[-–,]\s*((19|20)?\d\d)\b)*")
MAIL_RE = re.compile(r"<[^>]*>|\S+@\S+|\(c\)|©|copyright\b|all rights reserved\.?", re.I)
FIELD_RE = re.compile(r"^([A-Za-z][\w-]*):\s?(.*)$")
FREE_RE = re.compile(r"copyright\s*(?:\(c\)|©)?\s*(?:(?:19|20)\d\d|\(c\)|©)", re.I)
# one holder from the next on a copyright line ("Bart Massey, Jamey Sharp, and Josh Triplett")
HOLDER_SPLIT_RE = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*", re.I)
# what follows a name without being one ("Foo, Inc.", "Bar and others")
NOT_NAMES = {"inc", "ltd", "llc", "gmbh", "corp", "co", "others", "et al", "contributors"}


def source_packages() -> dict[str, str]:
    """Package → source package of the installed packages (a package is its own source when
    dpkg names none)."""
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Package}\t${source:Package}\n"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    pairs = (line.split("\t") for line in out.splitlines() if "\t" in line)
    return {pkg: (src or pkg) for pkg, src in pairs}


def holder_names(line: str) -> list[str]:
    """The holders named on one copyright line, each on its own ("A, B, and C" names three):
    years, e-mails, ``(C)`` and ``Copyright`` stripped; company suffixes and "others" are
    not names."""
    text = MAIL_RE.sub(" ", YEARS_RE.sub(" ", line))
    names = []
    for part in HOLDER_SPLIT_RE.split(" ".join(text.split())):
        name = re.sub(r"^\W*(by\b)?\W*|[\s,;.:]+$", "", part, flags=re.I)
        if len(name) >= 3 and re.search(r"[^\W\d_]{2}", name) and name.lower() not in NOT_NAMES:
            names.append(name)
    return names


def parse(text: str) -> tuple[str | None, list[str]]:
    """(``Upstream-Name``, holders) of a copyright file, DEP-5 or free-form."""
    upstream = None
    holders: list[str] = []
    in_copyright = False
    for line in text.splitlines():
        field = FIELD_RE.match(line)
        if field:
            name, value = field.group(1).lower(), field.group(2)
            in_copyright = name == "copyright"
            if name == "upstream-name" and value.strip():
                upstream = value.strip()
            if in_copyright:
                holders.append(value)
            continue
        if in_copyright and line[:1] in (" ", "\t") and line.strip() != ".":
            holders.append(line)
        else:
            in_copyright = False
            if FREE_RE.search(line):
                holders.append(line)
    names = [name for line in holders for name in holder_names(line)]
    return upstream, list(dict.fromkeys(names))[:60]


def build(doc: Path = DOC) -> list[dict[str, Any]]:
    """One record per ``doc/*/copyright`` file, sorted by package."""
    sources = source_packages()
    records = []
    for path in sorted(doc.glob("*/copyright")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        package = path.parent.name
        source = sources.get(package, package)
        upstream, holders = parse(text)
        software = list(dict.fromkeys(n for n in (package, source, upstream) if n))
        records.append(
            {
                "id": package,
                "text": text,
                "group": source,
                "source": source,
                "software": software,
                "holders": holders,
                "names": software + holders,
            }
        )
    return records
