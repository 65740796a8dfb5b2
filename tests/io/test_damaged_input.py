"""Damaged compressed input (.gz / .zst cut short or corrupt) stops every reader with one line
naming the file, whatever --skip-bad says: the records after the damage cannot be read, so
it is not a bad record to count and skip. Run through the real command line."""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
import shutil
import sqlite3

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from clirun import neardup
from neardup.errors import DamagedInputError
from neardup.io.compressed import zstd_frames_problem
from neardup.io.readers import read_documents

_WORDS = ["harbour", "ferry", "storm", "channel", "night", "late", "hour", "captain", "deck"]


def _records(n: int, seed: int = 1) -> list[dict[str, str]]:
    rng = random.Random(seed)
    return [
        {"id": f"d{i}", "text": " ".join(rng.choice(_WORDS) for _ in range(40))} for i in range(n)
    ]


def _jsonl(records: list[dict[str, str]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _csv(records: list[dict[str, str]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "text"])
    writer.writerows([r["id"], r["text"]] for r in records)
    return out.getvalue().encode()


def _compress(data: bytes, kind: str) -> bytes:
    if kind == "gz":
        return gzip.compress(data)
    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


def _damage(data: bytes, how: str) -> bytes:
    if how == "cut10":
        return data[:-10]
    if how == "half":
        return data[: len(data) // 2]
    middle = len(data) // 2  # 40 bytes of noise in the middle
    noise = bytes(random.Random(7).randrange(256) for _ in range(40))
    return data[:middle] + noise + data[middle + 40 :]


DAMAGE = {"cut10": "truncated", "half": "truncated", "noise": "corrupt"}


def _one_error_line(err: str, *names: str) -> None:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("neardup: error:")]
    assert len(lines) == 1, err
    for name in names:
        assert name in lines[0], (name, lines[0])


@pytest.fixture(scope="module")
def originals() -> dict[str, bytes]:
    records = _records(3000)
    return {"jsonl": _jsonl(records), "csv": _csv(records)}


@pytest.mark.parametrize("kind", ["gz", "zst"])
@pytest.mark.parametrize("how", sorted(DAMAGE))
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("skip", [["--skip-bad"], []], ids=["skip-bad", "stop"])
def test_dedup_of_a_damaged_file_stops_with_one_line_even_with_skip_bad(
    tmp_path, originals, kind, how, fmt, skip
):
    path = tmp_path / f"in.{fmt}.{kind}"
    path.write_bytes(_damage(_compress(originals[fmt], kind), how))
    out = tmp_path / "out"
    done = neardup("dedup", str(path), "--out", str(out), *skip)
    assert done.returncode == 1, done.stderr
    _one_error_line(done.stderr, str(path), DAMAGE[how])
    assert not out.exists()


@pytest.mark.parametrize("kind", ["gz", "zst"])
@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_index_add_of_a_damaged_file_stops_and_keeps_what_was_stored(
    tmp_path, originals, kind, how
):
    db = tmp_path / "c.db"
    made = neardup("index", "create", "--db", str(db), "--method", "minhash")
    assert made.returncode == 0, made.stderr
    good = tmp_path / "good.jsonl"
    good.write_text("".join(json.dumps(r) + "\n" for r in _records(5, seed=9)))
    assert neardup("index", "add", "--db", str(db), str(good)).returncode == 0
    path = tmp_path / f"in.jsonl.{kind}"
    path.write_bytes(_damage(_compress(originals["jsonl"], kind), how))
    done = neardup("index", "add", "--db", str(db), str(path), "--skip-bad")
    assert done.returncode == 1, done.stderr
    _one_error_line(done.stderr, str(path), DAMAGE[how])
    with sqlite3.connect(db) as conn:
        ids = {row[0] for row in conn.execute("SELECT id FROM docs")}
    assert {f"d{i}" for i in range(5)} <= ids  # nothing stored before is lost


def test_whole_files_and_concatenated_frames_are_read_whole(tmp_path, originals):
    records = originals["jsonl"]
    cut = records.index(b"\n", len(records) // 2) + 1
    for kind in ("gz", "zst"):
        path = tmp_path / f"two.jsonl.{kind}"
        path.write_bytes(_compress(records[:cut], kind) + _compress(records[cut:], kind))
        assert len(list(read_documents([path]))) == 3000


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(["gz", "zst"]),
    at=st.floats(0.0, 1.0, exclude_max=True),
    noise=st.binary(min_size=1, max_size=64),
    cut=st.booleans(),
)
def test_damage_anywhere_is_an_error_or_changes_nothing(tmp_path_factory, kind, at, noise, cut):
    """A file cut anywhere always fails; noise anywhere fails or (where it overwrote bytes
    with the same bytes) reads the very records written — never fewer, never others."""
    records = _records(300, seed=3)
    whole = _compress(_jsonl(records), kind)
    place = int(at * len(whole))
    damaged = whole[:place] if cut else whole[:place] + noise + whole[place + len(noise) :]
    path = tmp_path_factory.mktemp("fuzz") / f"f.jsonl.{kind}"
    path.write_bytes(damaged)
    try:
        read = [(doc.id, doc.text) for doc in read_documents([path], skip_bad=True)]
    except DamagedInputError as exc:
        error = str(exc)
    else:
        error = ""
        assert not cut  # a cut always leaves a part of the stream out
        assert read == [(r["id"], r["text"]) for r in records]
    assert not error or error.startswith(f"{path}: ")


def test_the_frame_walk_tells_a_whole_zstd_file_from_a_cut_one(tmp_path):
    data = _compress(_jsonl(_records(200)), "zst")
    skippable = (0x184D2A50).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"abc"
    path = tmp_path / "f.zst"
    for good in (data, data + data, skippable + data):
        path.write_bytes(good)
        with open(path, "rb") as fh:
            assert zstd_frames_problem(fh) is None
    for bad, word in ((data[:-1], "truncated"), (data + b"not zstd at all", "corrupt at byte")):
        path.write_bytes(bad)
        with open(path, "rb") as fh:
            assert word in (zstd_frames_problem(fh) or "")


def test_a_copy_of_a_whole_file_reads_as_before(tmp_path, originals):
    for kind in ("gz", "zst"):
        path = tmp_path / f"in.jsonl.{kind}"
        path.write_bytes(_compress(originals["jsonl"], kind))
        shutil.copy(path, tmp_path / f"copy.jsonl.{kind}")
        docs = list(read_documents([tmp_path / f"copy.jsonl.{kind}"]))
        assert [d.id for d in docs] == [f"d{i}" for i in range(3000)]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_bad_record_that_corrupt_data_inflated_to_is_named_as_the_damage(tmp_path, fmt):
    # 40 bytes of 0xAA amid a gzip stream inflate to garbage lines (bad records) that come
    # before its checksum tells the damage: the run stops naming the damage, not a record
    rng = random.Random(1)
    words = [f"w{i}" for i in range(3000)]
    records = [
        {"id": f"d{i}", "text": " ".join(rng.choice(words) for _ in range(8))}
        for i in range(60_000)
    ]
    whole = gzip.compress(_jsonl(records) if fmt == "jsonl" else _csv(records))
    middle = len(whole) // 2
    path = tmp_path / f"in.{fmt}.gz"
    path.write_bytes(whole[:middle] + b"\xaa" * 40 + whole[middle + 40 :])
    bad: list = []
    with pytest.raises(DamagedInputError):  # bad records first, the damage at the end
        list(read_documents([path], skip_bad=True, on_bad=bad.append))
    assert bad
    with pytest.raises(DamagedInputError, match="corrupt gzip data"):
        list(read_documents([path]))
    done = neardup("dedup", str(path), "--out", str(tmp_path / "out"))
    assert done.returncode == 1, done.stderr
    _one_error_line(done.stderr, str(path), "corrupt")
