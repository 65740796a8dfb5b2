"""A huge line is not read whole: reading stops at --max-text-bytes + 1 MiB, the line is a
bad record naming its file and line, and the memory of the run stays bounded."""

from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clirun import run
from neardup.errors import InputError
from neardup.io.blocks import BLOCK_BYTES_MAX, JsonlBatches
from neardup.io.readers import line_limit, read_documents

MAX = 1000  # --max-text-bytes of these tests: lines over ~1 MiB are not read
LONG = 8 * 2**20  # a line far over it


def _good(i: int) -> bytes:
    return json.dumps({"id": f"d{i}", "text": f"words of document {i}"}).encode()


def _file(path: Path, long_line: bytes, last: bool = False) -> Path:
    lines = [_good(0), long_line, _good(2)] if not last else [_good(0), _good(1), long_line]
    data = b"\n".join(lines) + (b"" if last else b"\n")
    path.write_bytes(gzip.compress(data, 1) if path.suffix == ".gz" else data)
    return path


def _via_lines(path: Path) -> tuple[list[str], list[str]]:
    bad: list = []
    docs = read_documents([path], skip_bad=True, on_bad=bad.append, max_text_bytes=MAX)
    return [d.id for d in docs], [str(b) for b in bad]


def _via_blocks(path: Path) -> tuple[list[str], list[str]]:
    bad: list = []
    reader = JsonlBatches([path], skip_bad=True, on_bad=bad.append, max_text_bytes=MAX)
    ids: list[str] = []
    for job in reader.jobs():
        batch = job()
        keep = reader.settle(batch)
        ids += batch.ids if keep is None else batch.take(keep).ids
    return ids, [str(b) for b in bad]


@pytest.mark.parametrize("name", ["f.jsonl", "f.jsonl.gz"])
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize(
    "long_line",
    [
        b'{"id": "big", "text": "' + b"x" * LONG + b'"}',  # valid JSON, one huge text
        b"\x00" * LONG,  # no JSON at all
    ],
    ids=["json", "nul"],
)
def test_a_line_over_the_limit_is_one_bad_record_in_both_readers(tmp_path, name, last, long_line):
    path = _file(tmp_path / name, long_line, last)
    where = 3 if last else 2
    for read in (_via_lines, _via_blocks):
        ids, bad = read(path)
        assert ids == (["d0", "d1"] if last else ["d0", "d2"])
        assert len(bad) == 1
        assert bad[0].startswith(f"{path}:{where}: a line longer than")
        assert "--max-text-bytes" in bad[0]


def test_a_line_at_the_limit_is_read(tmp_path):
    text = "y" * (MAX - 10)
    bare = len(json.dumps({"id": "a", "text": text, "pad": ""}))
    line = json.dumps({"id": "a", "text": text, "pad": "z" * (line_limit(MAX) - bare)})
    assert len(line) == line_limit(MAX)
    for path in (tmp_path / "f.jsonl", tmp_path / "f.jsonl.gz"):
        path.write_bytes(gzip.compress(line.encode()) if path.suffix == ".gz" else line.encode())
        assert [d.text for d in read_documents([path], max_text_bytes=MAX)] == [text]
        assert _via_blocks(path) == (["a"], [])


def test_a_csv_line_over_the_limit_stops_the_run(tmp_path):
    path = tmp_path / "f.csv"
    path.write_bytes(b"id,text\na,one\nb," + b"x" * LONG + b"\nc,three\n")
    with pytest.raises(InputError, match=r"f\.csv:3: a line longer than"):
        list(read_documents([path], skip_bad=True, max_text_bytes=MAX))


def _peak_kib(*args: str, code: int = 1) -> tuple[int, str]:
    """The peak resident memory (KiB) of ``neardup ARGS``, its own only, and its stderr."""
    command = [sys.executable, "-c", "from neardup.cli import run; run()", *args]
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    err = proc.stderr.read().decode() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == code, err
    return usage.ru_maxrss, err


@pytest.mark.parametrize("skip_bad", [False, True])
def test_a_huge_line_is_refused_or_skipped_in_bounded_memory(tmp_path, skip_bad):
    small = _file(tmp_path / "small.jsonl", b"\x00" * 10)
    base, _ = _peak_kib("dedup", str(small), "--out", str(tmp_path / "o1"), "--skip-bad", code=0)
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as out:  # 200 MB of NUL bytes in line 2, the last without newline
        out.write(_good(0) + b"\n")
        for _ in range(200):
            out.write(b"\x00" * 2**20)
        out.write(b"\n" + _good(2))
    out = tmp_path / "o2"
    args = ("dedup", str(huge), "--out", str(out), "--max-text-bytes", str(MAX))
    peak, err = _peak_kib(*args, *(["--skip-bad"] if skip_bad else []), code=int(not skip_bad))
    assert f"{huge}:2: a line longer than" in (
        err if not skip_bad else json.loads((out / "summary.json").read_text())["bad_examples"][0]
    )
    assert "Traceback" not in err
    assert peak - base < 64 * 1024  # far below the 200 MB of the line (read whole: 400 MB+)
    if skip_bad:  # the kept records are copied without the line in between being held
        kept = (out / "kept.jsonl").read_text().splitlines()
        assert [json.loads(line)["id"] for line in kept] == ["d0", "d2"]


def test_a_document_over_a_block_gives_what_the_line_reader_gives(tmp_path):
    # a text of 17 MiB with escapes among small ones: read into its line's own buffer from
    # JSONL, line by line from the same records in CSV; the same pairs, kept and removed
    sentence = 'lorem ipsum "dolor" sit\namet, café 😀 consectetur adipiscing elit '
    text = sentence * (BLOCK_BYTES_MAX // len(sentence) + 100)
    records = [
        {"id": "s0", "text": "a small text of a few words"},
        {"id": "big", "text": text, "source": "one"},
        {"id": "s1", "text": "a small text of a few words"},
        {"id": "s2", "text": "another text, not like the others"},
    ]
    jsonl, table = tmp_path / "in.jsonl", tmp_path / "in.csv"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records))
    with open(table, "w", newline="") as fh:
        writer = csv.DictWriter(fh, ["id", "text", "source"])
        writer.writeheader()
        writer.writerows(records)
    results = []
    for path in (jsonl, table):
        out = tmp_path / f"out{path.suffix}"
        limit = str(2 * BLOCK_BYTES_MAX)
        assert run("dedup", str(path), "--out", str(out), "--max-text-bytes", limit).exit_code == 0
        pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
        kept = [json.loads(line)["id"] for line in (out / "kept.jsonl").read_text().splitlines()]
        removed = (out / "removed.jsonl").read_text().splitlines()
        results.append((pairs, kept, [json.loads(line)["id"] for line in removed]))
    assert results[0] == results[1]
    assert [(p["a"], p["b"]) for p in results[0][0]] == [("s0", "s1")]
    assert results[0][1] == ["s0", "big", "s2"]
    kept_lines = (tmp_path / "out.jsonl" / "kept.jsonl").read_bytes().splitlines()
    assert kept_lines[1] == json.dumps(records[1]).encode()  # copied through as stored
