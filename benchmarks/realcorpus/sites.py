"""The site bench: HTML documentation sites on the machine, many pages sharing one template.

Sites: each ``/usr/share/doc/<package>/`` holding HTML pages; npm's bundled docs; and, where a
rustup toolchain is installed, the mdBook books shipped with each toolchain (the Rust book, the
reference, the nomicon, cargo's and rustc's guides, the error index…: every page carries the
whole book's table of contents, and two toolchains ship two versions of each page). The bench is
a directory of ``.html`` files (links to the originals; a page
not in UTF-8 is written out decoded as Latin-1) that ``neardup dedup`` reads itself.

A page's text *as written* is taken here, independently of neardup: the visible text of its
``<main>`` (or ``role="main"``) element, else of its body, scripts and styles left out. Its
``title`` is the first ``<h1>``/``<h2>`` of its main region, else its ``<title>``, else its
first heading. ``group`` (the split key) is the page
within its site, so both toolchains' versions of a page stay on one side; mdBook's
``print.html`` (the whole book on one page) is marked ``hub``.
"""

from __future__ import annotations

import os
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from realcorpus.written import split_of

DOC = Path("/usr/share/doc")
NPM_DOCS = Path("/usr/lib/node_modules/npm/docs")
RUSTUP = Path.home() / ".rustup" / "toolchains"
BOOKS = (
    "book",
    "nomicon",
    "reference",
    "edition-guide",
    "rustc",
    "cargo",
    "error_codes",
    "rustdoc",
    "clippy",
    "style-guide",
    "embedded-book",
)
SKIP = {"script", "style", "noscript", "template", "svg", "head"}
VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}
BLOCK = {
    "p",
    "div",
    "li",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "dt",
    "dd",
    "br",
    "table",
    "section",
    "article",
    "main",
    "nav",
    "header",
    "footer",
    "blockquote",
    "td",
}


class _Text(HTMLParser):
    """Collects a page's body text, its main region's text, its title and first h1."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []  # (tag, opens main)
        self.skip = 0
        self.main_depth = 0
        self.body: list[str] = []
        self.main: list[str] = []
        self.title: list[str] = []
        self.h1: list[str] = []
        self.main_h1: list[str] = []
        self.in_title = self.in_h1 = False
        self.h1_done = self.main_h1_done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            if tag == "br":
                self._put("\n")
            return
        opens_main = tag == "main" or dict(attrs).get("role") == "main"
        self.stack.append((tag, opens_main))
        self.main_depth += opens_main
        self.skip += tag in SKIP and tag != "head"
        if tag == "title":
            self.in_title = True
        if tag in ("h1", "h2") and not (self.main_h1_done if self.main_depth else self.h1_done):
            self.in_h1 = True
        if tag in BLOCK:
            self._put("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID or not any(t == tag for t, _ in self.stack):
            return
        while self.stack:
            top, opened = self.stack.pop()
            self.main_depth -= opened
            self.skip -= top in SKIP and top != "head"
            if top == "title":
                self.in_title = False
            if top in ("h1", "h2") and self.in_h1:
                self.in_h1 = False
                if self.main_depth:
                    self.main_h1_done = True
                else:
                    self.h1_done = True
            if top == tag:
                break
        if tag in BLOCK:
            self._put("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
            return
        if self.skip:
            return
        if self.in_h1:
            (self.main_h1 if self.main_depth else self.h1).append(data)
        self._put(data)

    def _put(self, data: str) -> None:
        self.body.append(data)
        if self.main_depth:
            self.main.append(data)


def tidy(text: str) -> str:
    """Blank lines dropped, spaces in each line squashed."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def page_text(markup: str) -> tuple[str, str]:
    """(text as written, title) of one HTML page (see the module docstring)."""
    parser = _Text()
    parser.feed(markup)
    parser.close()
    main = tidy("".join(parser.main))
    text = main or tidy("".join(parser.body))
    heads = (parser.main_h1, parser.title, parser.h1)
    title = next((" ".join("".join(h).split()) for h in heads if "".join(h).strip()), "")
    return text, title


def site_roots() -> list[tuple[str, str, Path]]:
    """(site, page-group prefix, directory) of every site found on this machine, sorted."""
    roots: list[tuple[str, str, Path]] = []
    for pkg in sorted(p for p in DOC.iterdir() if p.is_dir() and not p.is_symlink()):
        if next(pkg.rglob("*.html"), None) is not None:
            roots.append((f"debian-doc/{pkg.name}", f"debian-doc/{pkg.name}", pkg))
    if NPM_DOCS.is_dir():
        roots.append(("npm-docs", "npm-docs", NPM_DOCS))
    if RUSTUP.is_dir():
        for chain in sorted(RUSTUP.iterdir()):
            html = chain / "share" / "doc" / "rust" / "html"
            for book in BOOKS:
                if (html / book).is_dir():
                    tag = chain.name.split("-")[0]
                    roots.append((f"rust-{tag}/{book}", f"rust/{book}", html / book))
    return roots


def build(tree: Path) -> list[dict[str, Any]]:
    """Link every page of every site under ``tree/<split>/<site>/`` and return one record per
    page (``id`` the path under ``tree/<split>``, as ``neardup dedup`` names it)."""
    records = []
    for site, group_prefix, root in site_roots():
        for path in sorted(root.rglob("*.html")):
            if not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            data = path.read_bytes()
            try:
                markup = data.decode("utf-8")
            except UnicodeDecodeError:  # an old page in Latin-1: written out as UTF-8
                markup = data.decode("latin-1")
            text, title = page_text(markup)
            if not text.strip():
                continue
            page_id = f"{site}/{rel}"
            link = tree / split_of(f"{group_prefix}/{rel}") / page_id
            link.parent.mkdir(parents=True, exist_ok=True)
            if markup.encode() == data:
                link.unlink(missing_ok=True)
                os.symlink(path, link)
            else:
                link.write_text(markup, encoding="utf-8")
            records.append(
                {
                    "id": page_id,
                    "text": text,
                    "group": f"{group_prefix}/{rel}",
                    "site": site,
                    "page": f"{group_prefix}/{rel}",
                    "title": title,
                    "hub": path.name == "print.html",
                    "names": [title] if title else [],
                }
            )
    return records
