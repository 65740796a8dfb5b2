"""Markup removal: HTML pages (with boilerplate) and leftover MediaWiki markup → plain text.

Both parsers are imported lazily, so ``import neardup`` stays fast and plain texts (which
:func:`looks_like_html` / :func:`looks_like_wiki` reject cheaply) never pay for them.
"""

from __future__ import annotations

import contextlib
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["looks_like_html", "looks_like_wiki", "strip_html", "strip_wiki"]

# --------------------------------------------------------------------------------------------
# HTML

# A start tag (`<p>`, `<a href=...>`, `<br/>`), an end tag, `<!--`/`<!DOCTYPE`, or an entity.
# Stricter than "`<` followed by a letter" so that "x<y" or "a < b" stay plain text.
_HTML_RE = re.compile(
    r"<[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>"
    r"|</[A-Za-z][A-Za-z0-9:-]*\s*>"
    r"|<!(?:--|\[CDATA\[|[A-Za-z])"
    r"|&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});"
)
# Tags only (no entities): used to spot entity-escaped HTML left after one pass (RSS feeds).
_TAG_RE = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>")
_MAX_PASSES = 3

# Elements whose contents are never text of the page.
_NEVER_TEXT = [
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "iframe",
    "object",
    "embed",
    "canvas",
    "audio",
    "video",
]
# Page furniture by element name (HTML5 semantics: trusted, dropped whatever their size).
_FURNITURE_TAGS = frozenset({"nav", "header", "footer", "aside", "menu", "button"})
# ARIA landmark roles of page furniture (besides role names matched by _FURNITURE_WORD).
_FURNITURE_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"}
    | {"toolbar", "dialog", "alertdialog"}
)
# One word of an id/class/role value naming furniture: "nav", "sidebar", "main-menu",
# "topnav", "cookie-banner", "social-share", "comments", "ad", "advertisement", ...
_FURNITURE_WORD = re.compile(
    r"(?:top|side|sub|main|site|page|mobile|primary|secondary|global|mega|off|foot|head)?"
    r"(?:nav|navbar|navigation|menu|menubar|sidebar|breadcrumbs?|crumbs|cookies?|banner"
    r"|footer|header|masthead|share|sharing|sharebar|social|comments?|advert|adverts"
    r"|advertisement|advertising|ads?|sponsored|promo|popup|newsletter|subscribe|related)s?"
)
# "has-sidebar", "with-menu", "no-header": modifiers describing a wrapper, not furniture.
_MODIFIER_PREFIX = ("has-", "has_", "with-", "with_", "no-", "no_", "without-", "is-", "is_")
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Furniture found by class/id only (div class="header"...) is kept if it holds this share of
# the page's text: a wrapper like ASP.NET's page-wide <form> is not furniture.
_WRAPPER_SHARE = 0.5
# Several <article>s: keep those with at least this share of the longest one's text.
_ARTICLE_SHARE = 0.25
_CONTENT = "main, article, [role=main]"
_CANDIDATES = "nav, header, footer, aside, menu, button, form, [role], [id], [class]"

# Elements that start a new line of text: words in different blocks must not be glued.
_BLOCKS = (
    "address, article, aside, blockquote, br, caption, center, dd, details, dialog, div, dl, "
    "dt, fieldset, figcaption, figure, footer, form, h1, h2, h3, h4, h5, h6, header, hgroup, "
    "hr, legend, li, main, nav, ol, option, p, pre, section, summary, table, tbody, td, "
    "textarea, tfoot, th, thead, title, tr, ul"
)


_QUOTED_LINE = re.compile(r"^[ \t]*>[^\n]*(?:\n|\Z)", re.MULTILINE)
# "On 1 Jan 2014, Ann wrote:" / "1 янв, Анна пишет:" / "安 於 … 寫道：": one short line ending in a
# colon right before a quoted block introduces the quote, and goes with it
_ATTRIBUTION = re.compile(r"^[^\n>]{1,200}[:：][ \t]*\n(?:[ \t]*\n)*(?=[ \t]*>)", re.MULTILINE)


def strip_quoted(text: str) -> str:
    """``text`` without its quoted lines (``> …``, ``>> …``: mail replies quoting others) and
    the line that introduces each quote ("On …, Ann wrote:").

    A reply is compared on its own words: the message it quotes is a document of its own, and
    the attribution line is shared by every reply to that message.
    """
    if not (text.startswith(">") or "\n>" in text or re.search(r"\n[ \t]+>", text)):
        return text
    return _QUOTED_LINE.sub("", _ATTRIBUTION.sub("", text))


def looks_like_html(text: str) -> bool:
    """Whether ``text`` has a tag, comment/doctype or entity, so that parsing it is worthwhile."""
    if "<" not in text and "&" not in text:
        return False  # the common case, decided at memchr speed
    return _HTML_RE.search(text) is not None


@lru_cache(maxsize=1)
def _parser_class() -> Callable[[str], Any]:
    """The fastest selectolax parser available: Lexbor, else the older Modest backend."""
    try:
        from selectolax.lexbor import LexborHTMLParser
    except ImportError:  # pragma: no cover - old selectolax without Lexbor
        from selectolax.parser import HTMLParser

        return HTMLParser
    return LexborHTMLParser


def strip_html(text: str, *, boilerplate: bool = True) -> str:
    """HTML → plain text: entities decoded, one line per block element, scripts etc. dropped.

    With ``boilerplate`` true, page furniture (menus, headers, footers, sidebars, cookie
    banners, share buttons, comments, adverts) is removed before the text is taken, and if the
    page marks its content with ``<main>``/``<article>`` only that is kept — so two copies of one
    article on different sites compare by the article, not by the sites' menus. If that leaves
    nothing, the whole page's text is returned instead.

    Entity-escaped HTML (``&lt;p&gt;`` in RSS feeds) comes out of one pass as tags; it is
    stripped again, up to three passes in all.
    """
    for _ in range(_MAX_PASSES):
        text = _strip_html_once(text, boilerplate)
        if _TAG_RE.search(text) is None:
            break
    return text


def _strip_html_once(html: str, boilerplate: bool) -> str:
    """One parse of ``html`` into plain text (see :func:`strip_html`)."""
    parse = _parser_class()
    tree = parse(html)
    tree.strip_tags(_NEVER_TEXT)
    if boilerplate:
        text = "\n".join(filter(None, map(_block_text, _content_regions(tree))))
        if text:
            return text
        tree = parse(html)  # furniture was all there was: fall back to the whole page
        tree.strip_tags(_NEVER_TEXT)
    root = tree.body if tree.body is not None else tree.root
    return _block_text(root) if root is not None else ""


def _content_regions(tree: Any) -> list[Any]:
    """Drop furniture from ``tree``; return the elements holding the text (main/articles/body).

    With several outermost ``<article>``s (a blog's front page, or one story among teasers),
    those with at least a quarter of the longest one's text are kept, in page order.
    """
    body = tree.body
    if body is None:
        return []
    page_chars = len(body.text(deep=True))
    holders = _content_holders(body)
    doomed = [node for node in body.css(_CANDIDATES) if _is_furniture(node, page_chars, holders)]
    # Reverse document order: descendants go before their ancestors, so no node is touched
    # after an ancestor has freed it.
    for node in reversed(doomed):
        node.decompose()
    main = body.css_first("main, [role=main]")
    if main is not None:
        return [main]
    articles = [a for a in body.css("article") if not _has_ancestor(a, "article")]
    if not articles:
        return [body]
    sizes = [len(a.text(deep=True)) for a in articles]
    floor = max(sizes) * _ARTICLE_SHARE
    return [a for a, size in zip(articles, sizes, strict=True) if size >= floor and size]


def _content_holders(body: Any) -> set[Any]:
    """The content elements (``_CONTENT``) of ``body`` and every element holding one: found
    once per page, from each content element up (one query, not one per candidate)."""
    holders: set[Any] = set()
    for node in body.css(_CONTENT):
        while node is not None and node not in holders:
            holders.add(node)
            node = node.parent
    return holders


def _is_furniture(node: Any, page_chars: int, holders: set[Any]) -> bool:
    """Whether ``node`` is page furniture to drop (never html/body/main/article or a parent;
    ``holders``: the elements that are or hold content, :func:`_content_holders`)."""
    tag = node.tag
    if tag in ("html", "body", "main", "article"):
        return False
    attrs = node.attributes
    role = (attrs.get("role") or "").strip().lower()
    if role == "main":
        return False
    by_tag = tag in _FURNITURE_TAGS or role in _FURNITURE_ROLES
    if tag == "header" and _has_ancestor(node, "article", "main"):
        by_tag = False  # an article's own header holds its title
    by_name = not by_tag and (
        tag == "form" or _names_furniture(attrs.get("id"), attrs.get("class"), role)
    )
    if not (by_tag or by_name):
        return False
    if node in holders:
        return False  # a wrapper of the content, e.g. <div class="page has-sidebar">
    if by_name:
        if _has_ancestor(node, "article", "main") and _only_header_words(attrs):
            return False  # <div class="entry-header"> inside the article: its title
        if page_chars and len(node.text(deep=True)) >= _WRAPPER_SHARE * page_chars:
            return False  # holds most of the page: a wrapper, not furniture
    return True


def _names_furniture(*values: str | None) -> bool:
    """Whether an id/class/role value has a word naming furniture ("sidebar-left": yes)."""
    return any(value and _value_names_furniture(value) for value in values)


@lru_cache(maxsize=8192)
def _value_names_furniture(value: str) -> bool:
    """:func:`_names_furniture` for one attribute value (cached: class names repeat a lot)."""
    for token in value.split():
        if token.lower().startswith(_MODIFIER_PREFIX):
            continue
        words = _WORD_SPLIT.split(_CAMEL.sub("-", token).lower())
        if any(w and _FURNITURE_WORD.fullmatch(w) for w in words):
            return True
    return False


def _only_header_words(attrs: dict[str, str | None]) -> bool:
    """Whether the furniture words of id/class are only "header"/"masthead" (titles)."""
    text = " ".join(v for v in (attrs.get("id"), attrs.get("class")) if v)
    words = {w for w in _WORD_SPLIT.split(_CAMEL.sub("-", text).lower()) if w}
    hits = {w for w in words if _FURNITURE_WORD.fullmatch(w)}
    return bool(hits) and all("head" in w for w in hits)


def _has_ancestor(node: Any, *tags: str) -> bool:
    """Whether an ancestor of ``node`` is one of ``tags``."""
    parent = node.parent
    while parent is not None:
        if parent.tag in tags:
            return True
        parent = parent.parent
    return False


def _block_text(node: Any) -> str:
    """Text of ``node`` with a line break around every block element, whitespace collapsed."""
    for block in node.css(_BLOCKS):
        block.insert_before("\n")
        block.insert_after("\n")
    return _collapse_whitespace(node.text(deep=True, separator=""))


def _collapse_whitespace(text: str) -> str:
    """``text`` with each line's whitespace runs as one space and no blank lines, stripped:
    what replacing the whitespace runs without a newline by a space, then those with one by
    a newline gives, by splits and joins (no pattern tried at every character)."""
    return "\n".join(filter(None, (" ".join(line.split()) for line in text.split("\n"))))


# --------------------------------------------------------------------------------------------
# MediaWiki

# The marks of MediaWiki markup but ``[[``, ``{{`` and ``'''`` (plain strings), each with a test for
# a string any match holds
_WIKI_PATTERNS: tuple[tuple[Callable[[str], bool], re.Pattern[str]], ...] = (
    (lambda t: "''" in t, re.compile(r"''[^'\n]+''")),
    (lambda t: "<ref" in t, re.compile(r"<ref[\s>/]")),
    (lambda t: t.startswith("{|") or "\n{|" in t, re.compile(r"^\{\|", re.MULTILINE)),
    (
        lambda t: t.startswith("=") or "\n=" in t,
        re.compile(r"^=={0,4}[^=\n]+={2,6}\s*$", re.MULTILINE),
    ),
    (lambda t: "__" in t, re.compile(r"__[A-Z]{3,}__")),
)
# Links that are not text: media, categories (en/ru/zh names) and interlanguage links.
_NON_TEXT_LINK = re.compile(
    r"\s*:?\s*(?:file|image|media|category|файл|изображение|категория|文件|檔案|档案|图像"
    r"|圖像|分类|分類|[a-z]{2,3}(?:-[a-z]{2,8})?)\s*:",
    re.IGNORECASE,
)
# Extension tags whose contents are not running text.
_NON_TEXT_TAGS = frozenset(
    {"ref", "references", "gallery", "imagemap", "timeline", "templatestyles", "math", "chem"}
    | {"score", "graph", "mapframe", "maplink", "syntaxhighlight", "source"}
)
_MAGIC_WORD = re.compile(r"__[A-Z]{3,}__")
_WIKI_LEFTOVER = re.compile(r"\[\[|\]\]|\{\{|\}\}|'{2,}|^=+|=+$|^\{\||^\|\}", re.MULTILINE)


def looks_like_wiki(text: str) -> bool:
    """Whether ``text`` has MediaWiki markup (links, templates, bold, headings, refs, tables)."""
    if "[[" in text or "{{" in text or "'''" in text:
        return True
    # the other patterns one at a time, each only where its marker occurs: the alternation,
    # tried at every character of a long text, costs many times more
    return any(needs(text) and pattern.search(text) for needs, pattern in _WIKI_PATTERNS)


def strip_wiki(text: str) -> str:
    """MediaWiki markup → plain text with mwparserfromhell.

    Link texts, headings' words, bold/italic words and table cells are kept; templates,
    ``<ref>``s, comments, File/Image/Category and interlanguage links, magic words and all
    markup characters are dropped. Entities are decoded.
    """
    import mwparserfromhell
    from mwparserfromhell.nodes import Tag, Wikilink

    text = text.replace("\x00", "")  # the C tokenizer stops at NUL: the rest would be lost
    if not looks_like_wiki(text):
        return text  # the parser would read markup into stray "==" or "''" of plain text
    try:
        code = mwparserfromhell.parse(text)
    except Exception:  # pragma: no cover - the parser is lenient; guard against its bugs
        return _WIKI_LEFTOVER.sub(" ", _MAGIC_WORD.sub(" ", text))
    doomed: list[Any] = []
    breaks: list[Any] = []
    for node in code.filter(recursive=True, forcetype=(Tag, Wikilink)):
        if isinstance(node, Wikilink):
            if _NON_TEXT_LINK.match(str(node.title)):
                doomed.append(node)
        elif str(node.tag).strip().lower() in _NON_TEXT_TAGS:
            doomed.append(node)
        elif str(node.tag).strip().lower() == "br":
            breaks.append(node)
    for nodes, by in ((doomed, " "), (breaks, "\n")):
        for node in nodes:
            with contextlib.suppress(ValueError):  # inside a node removed already
                code.replace(node, by, recursive=True)
    plain = code.strip_code(normalize=True, collapse=True, keep_template_params=False)
    plain = _MAGIC_WORD.sub(" ", plain)
    return _collapse_whitespace(plain)
