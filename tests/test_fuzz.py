"""Fuzzing: any bytes through the readers, any text through canonicalization — no crash.

A reader may only yield documents or raise :class:`InputError` (a bad record, named); with
``skip_bad`` it never raises. Canonicalization and shingling take any string. Fixed budgets
(``max_examples``) and derandomized runs keep these fast and repeatable.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.errors import InputError
from neardup.fingerprints.shingles import fingerprint_batch
from neardup.io.jsonvalues import json_problem
from neardup.io.readers import Document, read_documents
from neardup.text.canon import canonicalize_batch

FUZZ = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# bytes that make readers work: quotes, separators, newlines, NULs, escapes, UTF-8 pieces
PIECES = st.sampled_from(
    [b'"', b",", b"\n", b"\r\n", b"\r", b"\x00", b"\\", b"\\ud800", b"{", b"}", b":", b"[",
     b'"text"', b'"id"', b"NaN", b"\xef\xbb\xbf", b"\xff", b"\xd0\x96", b"\xe4\xb8\xad", b"a b"]
)  # fmt: skip
RAW = st.one_of(st.binary(max_size=300), st.lists(PIECES, max_size=60).map(b"".join))


def _read(data: bytes, suffix: str, skip_bad: bool) -> list[Document]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, f"fuzz{suffix}")
        path.write_bytes(data)
        return list(read_documents(path, skip_bad=skip_bad, max_text_bytes=1000))


@FUZZ
@given(data=RAW, suffix=st.sampled_from([".jsonl", ".csv"]))
def test_readers_yield_documents_or_name_the_bad_record(data, suffix):
    docs, problem = [], ""
    try:
        docs = _read(data, suffix, skip_bad=False)
    except InputError as exc:
        problem = str(exc)
    assert not problem or "fuzz" in problem  # a bad record names the file
    assert all(isinstance(d, Document) and d.id for d in docs)
    skipped = _read(data, suffix, skip_bad=True)  # never raises
    for doc in skipped:
        doc.text.encode("utf-8")  # every document's text can be written back
        doc.id.encode("utf-8")
        assert json_problem(doc.record) is None


@FUZZ
@given(
    st.lists(
        st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=200),
        max_size=5,
    ),
    st.sampled_from(["word", "char", "auto"]),
)
def test_canonicalization_and_shingling_take_any_text(texts, unit):
    batch = canonicalize_batch(texts, unit=unit)
    assert len(batch) == len(texts)
    for d in range(len(batch)):
        assert " " not in "".join(batch.tokens(d))
        batch.text(d).encode("utf-8")
    prints = fingerprint_batch(texts)
    assert len(prints) == len(texts)
