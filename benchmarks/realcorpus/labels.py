"""The rules that judge one removal (a document removed into its keeper), per bench.

Each rule gets the two records and their as-written shingle sets and returns a verdict:

- ``same``: the two are one document (see each bench) — never wrong;
- ``wrong``: a reader would refuse the removal;
- ``suspicious``: allowed by the rules, but worth a look;
- ``ok``.

RULES (printed with the results) says them in words. A document's identity terms are its
``names`` (software and holders, page name, author, page title) that its own text mentions; its
keeper *lacks its identity* when it mentions none of them (case-insensitive, whole words,
whitespace squashed, in the keeper's text as written).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from realcorpus.written import containment, mentions, resemblance, shingles, squash

Record = Mapping[str, Any]
Verdict = tuple[str, str]
Set = frozenset[str]
NEAR = 0.9
OWN_WORDS = 0.5

RULES = {
    "copyright": (
        "Same document: same source package, or identical after whitespace squashing. "
        "WRONG: the keeper names neither the removed file's software (package, source, "
        "Upstream-Name) nor any of its holders. Suspicious: keeper from another source "
        f"package and not near-identical (resemblance < {NEAR} as written)."
    ),
    "manpages": (
        "Same document: the same page (section/name) in the same language from another "
        "package, or identical text. WRONG: an English original removed into a translation; "
        "a translation removed into a page of another language other than its own English "
        "original (a partial translation may go into its original: the fuller text is kept); "
        "a page removed into another page (other name) that never names it. Suspicious: "
        "another page, not near-identical."
    ),
    "mail": (
        "Same document: identical body or the same Message-ID (one mail delivered twice). "
        "WRONG: the keeper holds less than half of the removed mail's own words as written "
        "(3-shingles of its unquoted lines before any signature, list footer or "
        "forwarded/original block; the whole body when it has none). Suspicious: a reply or "
        "forward removed into a mail of another thread."
    ),
    "sites": (
        "Same document: the same page of another version of the site (the other toolchain), "
        "a page of the same file name (not index.html) in the same site, or identical text. "
        "WRONG: a page removed into a whole-book page (mdBook print.html, a hub); a page "
        "removed into another page that lacks its title. Suspicious: another page, not "
        f"near-identical (resemblance < {NEAR} as written)."
    ),
}


def identity_terms(record: Record) -> list[str]:
    """The record's names that its own text mentions."""
    return [n for n in record.get("names", []) if n and mentions(record["text"], n)]


def lacks_identity(removed: Record, keeper: Record) -> bool:
    """Whether the keeper mentions none of the removed document's identity terms (False when
    the removed document mentions none of its names itself)."""
    terms = identity_terms(removed)
    return bool(terms) and not any(mentions(keeper["text"], n) for n in terms)


def _identical(removed: Record, keeper: Record) -> bool:
    return squash(removed["text"]) == squash(keeper["text"])


def copyright_rule(removed: Record, keeper: Record, a: Set, b: Set) -> Verdict:
    if removed["source"] == keeper["source"] or _identical(removed, keeper):
        return "same", "same source package or identical"
    if lacks_identity(removed, keeper):
        return "wrong", "keeper names neither its software nor its holders"
    if resemblance(a, b) < NEAR:
        return "suspicious", "other source package, not near-identical"
    return "ok", "other source package, near-identical"


def manpages_rule(removed: Record, keeper: Record, a: Set, b: Set) -> Verdict:
    if _identical(removed, keeper):
        return "same", "identical"
    same_page = (removed["section"], removed["name"]) == (keeper["section"], keeper["name"])
    if removed["lang"] != keeper["lang"]:
        if removed["original"]:
            return "wrong", "English original into a translation"
        if keeper["original"] and same_page:
            return "ok", "partial translation into its original"
        return "wrong", "translation into another language"
    if same_page:
        return "same", "same page, same language, another package"
    if lacks_identity(removed, keeper):
        return "wrong", "into another page that never names it"
    if resemblance(a, b) < NEAR:
        return "suspicious", "another page, not near-identical"
    return "ok", "another page, near-identical"


def mail_rule(removed: Record, keeper: Record, a: Set, b: Set) -> Verdict:
    if _identical(removed, keeper) or (
        removed["message_id"] and removed["message_id"] == keeper["message_id"]
    ):
        return "same", "identical or same Message-ID"
    own = shingles(removed["own"])
    if containment(own or a, b) < OWN_WORDS:
        return "wrong", f"keeper lacks its own words ({removed['kind']})"
    if removed["kind"] in ("reply", "forward") and removed["group"] != keeper["group"]:
        return "suspicious", f"{removed['kind']} into another thread"
    return "ok", "keeper holds its own words"


def sites_rule(removed: Record, keeper: Record, a: Set, b: Set) -> Verdict:
    if removed["page"] == keeper["page"] or _identical(removed, keeper):
        return "same", "same page of another version, or identical"
    name = removed["id"].rsplit("/", 1)[-1]
    if (
        name == keeper["id"].rsplit("/", 1)[-1]
        and name != "index.html"
        and (removed["site"] == keeper["site"])
    ):
        return "same", "same file name in the same site (one page in two formats)"
    if keeper["hub"] and not removed["hub"]:
        return "wrong", "page absorbed by a whole-book page"
    if lacks_identity(removed, keeper):
        return "wrong", "keeper lacks the page's title"
    if resemblance(a, b) < NEAR:
        return "suspicious", "another page, not near-identical"
    return "ok", "another page, near-identical"


Rule = Callable[[Record, Record, Set, Set], Verdict]
JUDGES: dict[str, Rule] = {
    "copyright": copyright_rule,
    "manpages": manpages_rule,
    "mail": mail_rule,
    "sites": sites_rule,
}
