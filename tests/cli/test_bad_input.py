"""Bad input over every entry point: the documented exit code, one line, nothing lost.

Each case runs the real entry point (``neardup.cli.main``, in this process for speed: the
exit code and stderr are exactly a user's) and asserts: exit 1 for bad input, 2 for a bad
option; stderr one line ``neardup: error: …`` naming the file, line or value; no traceback;
and that what was stored or written before is still there (an earlier dedup output byte for
byte, a collection's file unchanged). Ctrl-C and the service run as real processes.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from neardup.cli import main
from neardup.collection import SQLiteStore
from neardup.collection.persistent import Collection
from neardup.dedup import DedupConfig

WORDS = "the night ferry left the harbour an hour late because a storm closed the channel"


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    def refused(self, code: int, *names: str) -> None:
        """Exit ``code`` with one error line naming each of ``names``, and no traceback."""
        assert self.code == code, self.err
        assert "Traceback" not in self.err
        lines = [line for line in self.err.splitlines() if line.strip()]
        assert len(lines) == 1, self.err
        assert lines[0].startswith("neardup: error: "), lines[0]
        for name in names:
            assert name in lines[0], (name, lines[0])


@pytest.fixture
def run(capsys, monkeypatch):
    """``neardup ARGS…`` in this process: the exit code main() gives and what it printed."""
    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # main() replaces it

    def invoke(*args: object) -> Outcome:
        monkeypatch.setattr(sys, "argv", ["neardup", *map(str, args)])
        code = 0
        try:
            main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return invoke


def _jsonl(path: Path, rows: list, raw_lines: tuple[bytes, ...] = ()) -> Path:
    with open(path, "wb") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False).encode() + b"\n")
        for line in raw_lines:
            out.write(line + b"\n")
    return path


def _docs(n: int = 6) -> list[dict]:
    return [{"id": f"d{i}", "text": f"{WORDS} {i} {'copy' if i % 2 else ''}"} for i in range(n)]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """Every input of the matrix, made once."""
    d = tmp_path_factory.mktemp("bad")
    f: dict[str, Path] = {"dir": d}
    f["good"] = _jsonl(d / "good.jsonl", _docs())
    f["bom"] = d / "bom.jsonl"
    f["bom"].write_bytes(b"\xef\xbb\xbf" + f["good"].read_bytes())
    f["crlf"] = d / "crlf.jsonl"
    f["crlf"].write_bytes(f["good"].read_bytes().replace(b"\n", b"\r\n"))
    f["nul"] = _jsonl(d / "nul.jsonl", _docs(1), (b'{"id": "x", "te\x00xt": "a"}',))
    f["nulesc"] = _jsonl(d / "nulesc.jsonl", _docs(1), (b'{"id": "x", "text": "a\\u0000b"}',))
    f["nulmeta"] = _jsonl(
        d / "nulmeta.jsonl", _docs(1), (b'{"id": "x", "text": "a", "m": ["\\u0000"]}',)
    )
    f["badutf8"] = _jsonl(d / "badutf8.jsonl", _docs(1), (b'{"id": "x", "text": "caf\xe9"}',))
    f["notjson"] = _jsonl(d / "notjson.jsonl", _docs(2), (b"{not json",))
    f["huge"] = _jsonl(d / "huge.jsonl", [*_docs(1), {"id": "big", "text": "w " * 5000}])
    f["surrogate"] = _jsonl(d / "surrogate.jsonl", _docs(1), (b'{"id": "\\ud800", "text": "a"}',))
    f["nan"] = _jsonl(d / "nan.jsonl", _docs(1), (b'{"id": "n", "text": "a", "score": NaN}',))
    f["empty"] = d / "empty.jsonl"
    f["empty"].write_bytes(b"")
    rows = [[r["id"], r["text"]] for r in _docs(8)]
    with open(d / "quote.csv", "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["id", "text"])
        writer.writerows(rows[:2])
        out.write('q,"an unterminated quote\n')  # line 4
        writer.writerows(rows[2:])
    f["quote"] = d / "quote.csv"
    f["nulcsv"] = d / "nul.csv"
    f["nulcsv"].write_bytes(b"id,text\r\na,one\x00two\r\nb,three four\r\n")
    f["bomcsv"] = d / "bom.csv"
    f["bomcsv"].write_bytes(b'\xef\xbb\xbfid,text\r\na,one two\r\nb,"multi\r\nline"\r\n')
    f["escapes"] = d / "escapes.csv"
    f["escapes"].write_bytes(b"id,te\x1b[31mxt\r\na,one\r\n")
    f["badconf"] = d / "bad.toml"
    f["badconf"].write_text('threshold = "x"\n')
    f["rangeconf"] = d / "range.json"
    f["rangeconf"].write_text('{"threshold": 7}')
    f["parquet"] = d / "types.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "text": [1, 2]}), f["parquet"])
    f["texts"] = d / "texts"
    f["texts"].mkdir()
    (f["texts"] / "a.txt").write_text(WORDS, encoding="utf-8")
    (f["texts"] / "b.pdf").write_bytes(b"%PDF-1.4")
    f["empty_txt"] = d / "empty.txt"
    f["empty_txt"].write_text("   ", encoding="utf-8")
    f["binary_txt"] = d / "binary.txt"
    f["binary_txt"].write_bytes(b"ab\x00cd")
    f["badutf8_txt"] = d / "badutf8.txt"
    f["badutf8_txt"].write_bytes(b"caf\xe9 au lait")
    f["a_txt"] = d / "a.txt"
    f["a_txt"].write_text(WORDS, encoding="utf-8")
    f["foreign"] = d / "foreign"
    f["foreign"].mkdir()
    (f["foreign"] / "notes.txt").write_text("mine", encoding="utf-8")
    f["truth_bad"] = _jsonl(d / "truth_bad.jsonl", [{"x": 1}])
    f["db"] = d / "c.db"
    store = SQLiteStore(f["db"])
    Collection.create(store, DedupConfig()).add([(r["id"], r["text"], None) for r in _docs()])
    store.close()
    f["corrupt"] = d / "corrupt.db"
    shutil.copy(f["db"], f["corrupt"])
    size = f["corrupt"].stat().st_size
    with open(f["corrupt"], "r+b") as fh:  # random bytes over the middle pages
        fh.seek(size // 3)
        fh.write(os.urandom(size // 3))
    return f


def _fill(args: tuple[str, ...], files: dict[str, Path], tmp: Path) -> list[str]:
    values = {k: str(v) for k, v in files.items()} | {"tmp": str(tmp)}
    return [a.format(**values) for a in args]


DEDUP = ("dedup", "--out", "{tmp}/out")
BAD_OPTIONS = [
    (("compare", "{a_txt}", "{a_txt}", "--size", "99999999999999999999"), ("--size",)),
    ((*DEDUP, "{good}", "--size", "99999999999999999999"), ("--size", "99999999999999999999")),
    ((*DEDUP, "{good}", "--step", "99999999999"), ("--step",)),
    ((*DEDUP, "{good}", "--threshold", "nan"), ("--threshold", "nan")),
    ((*DEDUP, "{good}", "--guard", "inf"), ("--guard", "inf")),
    ((*DEDUP, "{good}", "--keep", "weird"), ("weird",)),
    ((*DEDUP, "{good}", "--param", "colour=5"), ("colour",)),
    ((*DEDUP, "{good}", "--method", "minhash", "--param", "num_perm=9999999999"), ("num_perm",)),
    ((*DEDUP, "{good}", "--batch-size", "0"), ("--batch-size",)),
    ((*DEDUP, "{good}", "--config", "{badconf}"), ("--config", "bad.toml", "threshold", "'x'")),
    ((*DEDUP, "{good}", "--config", "{rangeconf}"), ("--config", "range.json", "threshold")),
    (("index", "create", "--db", "{tmp}/n.db", "--config", "{badconf}"), ("--config", "'x'")),
    ((*DEDUP, "{good}", "--max-text-bytes", "0"), ("--max-text-bytes",)),
    ((*DEDUP, "{good}", "--chain", "--guard", "0.5"), ("--chain",)),
    (("dedup", "{good}", "--out", "{good}"), ("--out", "is a file")),
    (("shingles", "{a_txt}", "--size", "0"), ("--size",)),
    (("index", "create", "--db", "{tmp}/n.db", "--threshold", "nan"), ("--threshold",)),
    (("index", "create", "--db", "{tmp}/n.db", "--param", "colour=5"), ("colour",)),
    (("index", "add", "--db", "{db}", "{good}", "--batch-size", "0"), ("--batch-size",)),
    (("evaluate", "{good}", "--truth", "{good}", "--thresholds", "0:1:0"), ("0:1:0",)),
    (("evaluate", "{good}", "--truth", "{good}", "--thresholds", "nan"), ("nan",)),
    (
        ("calibrate", "{good}", "--truth", "{good}", "--out", "{tmp}/c.json", "--sizes", "0"),
        ("--sizes",),
    ),
    (("evaluate", "{good}", "--truth", "{good}", "--csv", "{texts}"), ("--csv", "directory")),
    (("serve", "--db", "{db}", "--port", "0"), ("--port",)),
    (("serve", "--db", "{db}", "--workers", "0"), ("--workers",)),
]
BAD_INPUTS = [
    ((*DEDUP, "{tmp}/missing.jsonl"), ("missing.jsonl", "no such file")),
    ((*DEDUP, "{nul}"), ("nul.jsonl:2",)),
    ((*DEDUP, "{nulesc}"), ("nulesc.jsonl:2", "NUL")),
    ((*DEDUP, "{badutf8}"), ("badutf8.jsonl:2", "UTF-8")),
    ((*DEDUP, "{notjson}"), ("notjson.jsonl:3", "not valid JSON")),
    ((*DEDUP, "{huge}", "--max-text-bytes", "1000"), ("huge.jsonl:2", "--max-text-bytes")),
    ((*DEDUP, "{surrogate}"), ("surrogate.jsonl:2", "surrogate")),
    ((*DEDUP, "{nan}"), ("nan.jsonl:2", "'score'", "nan")),
    ((*DEDUP, "{quote}"), ("quote.csv:4", "quote")),
    ((*DEDUP, "{nulcsv}"), ("nul.csv:2",)),
    ((*DEDUP, "{escapes}"), ("escapes.csv:1", "te\\x1b[31mxt")),  # shown, not obeyed
    ((*DEDUP, "{parquet}"), ("types.parquet:1", "'text'", "not a string")),
    ((*DEDUP, "{good}", "--keep", "field:nonexistent"), ("nonexistent",)),
    (("dedup", "{good}", "--out", "{good}/out"), ("--out", "cannot write")),
    (("dedup", "{good}", "--out", "{foreign}"), ("--out", "notes.txt")),
    (("dedup", "{texts}", "--out", "{texts}/out"), ("inside the input directory",)),
    (("compare", "{tmp}/missing.txt", "{a_txt}"), ("missing.txt", "no such file")),
    (("compare", "{badutf8_txt}", "{a_txt}"), ("badutf8.txt",)),
    (("compare", "{empty_txt}", "{a_txt}"), ("empty.txt",)),
    (("compare", "--text-a", "caf\udce9", "--text-b", "x"), ("--text-a", "UTF-8")),
    (("shingles", "{empty_txt}"), ("empty.txt", "no shingles")),
    (("shingles", "{binary_txt}"), ("binary.txt", "binary")),
    (("index", "create", "--db", "{db}"), ("c.db", "already holds")),
    (("index", "add", "--db", "{db}", "{notjson}"), ("notjson.jsonl:3",)),
    (("index", "add", "--db", "{db}", "{surrogate}"), ("surrogate.jsonl:2",)),
    (("index", "add", "--db", "{db}", "{nulesc}"), ("nulesc.jsonl:2", "NUL")),
    (("index", "add", "--db", "{db}", "{nulmeta}"), ("nulmeta.jsonl:2", "NUL", "'m'")),
    (("index", "add", "--db", "{db}", "{quote}"), ("quote.csv:4",)),
    (("index", "add", "--db", "{corrupt}", "{good}"), ("corrupt.db", "damaged")),
    (("index", "query", "--db", "{corrupt}", "{good}"), ("corrupt.db", "damaged")),
    (("index", "query", "--db", "{db}", "{badutf8}"), ("badutf8.jsonl:2",)),
    (("index", "stats", "--db", "{corrupt}"), ("corrupt.db", "damaged")),
    (("index", "stats", "--db", "{tmp}/missing.db"), ("missing.db", "no such file")),
    (("index", "check", "--db", "{corrupt}"), ("corrupt.db", "damaged")),
    (("serve", "--db", "{corrupt}"), ("corrupt.db", "damaged")),
    (("evaluate", "{good}", "--truth", "{truth_bad}"), ("truth_bad.jsonl:1",)),
    (("evaluate", "{quote}", "--truth", "{good}"), ("good.jsonl:1",)),
    (("evaluate", "{good}", "--truth", "{good}", "--report", "{good}/r.html"), ("--report",)),
    (("calibrate", "{good}", "--truth", "{good}", "--out", "{good}/c.json"), ("--out",)),
]


@pytest.fixture
def earlier(run, files, tmp_path) -> dict[str, bytes]:
    """An earlier dedup output in tmp/out, and the collection files as they were."""
    done = run("dedup", files["good"], "--out", tmp_path / "out")
    assert done.code == 0, done.err
    out = tmp_path / "out"
    kept = {p.name: p.read_bytes() for p in out.iterdir()}
    return kept | {f"db:{k}": files[k].read_bytes() for k in ("db", "corrupt")}


def _unchanged(earlier: dict[str, bytes], files: dict[str, Path], tmp: Path) -> None:
    out = tmp / "out"
    now = {p.name: p.read_bytes() for p in out.iterdir()}
    assert now == {k: v for k, v in earlier.items() if not k.startswith("db:")}
    for key in ("db", "corrupt"):
        assert files[key].read_bytes() == earlier[f"db:{key}"], key
    assert not [p for p in tmp.iterdir() if "neardup-staging" in p.name]


@pytest.mark.parametrize(("args", "names"), BAD_OPTIONS, ids=lambda v: " ".join(v)[:60])
def test_a_bad_option_is_exit_2_with_one_line_naming_it(run, files, tmp_path, earlier, args, names):
    run(*_fill(args, files, tmp_path)).refused(2, *names)
    _unchanged(earlier, files, tmp_path)


@pytest.mark.parametrize(("args", "names"), BAD_INPUTS, ids=lambda v: " ".join(v)[:60])
def test_bad_input_is_exit_1_with_one_line_naming_it(run, files, tmp_path, earlier, args, names):
    run(*_fill(args, files, tmp_path)).refused(1, *names)
    _unchanged(earlier, files, tmp_path)


def test_no_error_line_holds_a_control_character(run, files, tmp_path):
    done = run("dedup", files["escapes"], "--out", tmp_path / "o")
    assert "\x1b" not in done.err
    assert "\\x1b" in done.err


def test_a_fifo_in_an_input_directory_is_skipped_with_a_warning(files, tmp_path):
    texts = tmp_path / "texts"
    texts.mkdir()
    (texts / "a.txt").write_text(WORDS, encoding="utf-8")
    os.mkfifo(texts / "pipe.txt")  # reading it would wait for a writer forever
    command = [sys.executable, "-c", "from neardup.cli import run; run()", "dedup"]
    done = subprocess.run(
        [*command, str(texts), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "pipe.txt" in done.stderr
    assert "not regular files" in done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["documents"] == 1


def test_skip_bad_counts_the_bad_records_and_keeps_the_rest(run, files, tmp_path):
    out = tmp_path / "skipped"
    done = run("dedup", files["quote"], "--skip-bad", "--out", out)
    assert done.code == 0, done.err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["bad_records"] == 1
    assert summary["documents"] == 8  # every row of the CSV but the broken one
    assert any("quote.csv:4" in b for b in summary["bad_examples"])


@pytest.mark.parametrize("name", ["bom", "crlf", "bomcsv"])
def test_bom_and_crlf_are_read_as_plain_text(run, files, tmp_path, name):
    out = tmp_path / "out"
    done = run("dedup", files[name], "--out", out)
    assert done.code == 0, done.err
    kept = [json.loads(line) for line in (out / "kept.jsonl").read_text().splitlines()]
    ids = [r["id"] for r in kept]
    assert ids[0] in ("a", "d0")  # the BOM is not part of the first field's name
    assert all("\r" not in r["text"] for r in kept if r["id"] != "b")
    assert "\ufeff" not in (out / "kept.jsonl").read_text()


def test_empty_inputs_and_skipped_files_are_reported(run, files, tmp_path):
    out = tmp_path / "out"
    done = run("dedup", files["good"], files["empty"], files["texts"], "--out", out)
    assert done.code == 0, done.err
    warned = [line for line in done.err.splitlines() if line.startswith("neardup: warning:")]
    assert any("empty.jsonl" in line and "no records" in line for line in warned)
    assert any("b.pdf" in line and "1 file(s) skipped" in line for line in warned)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["empty_inputs"] == [str(files["empty"])]
    assert summary["skipped_files"] == 1


def test_a_new_format_replaces_the_earlier_run_whole(run, files, tmp_path):
    out = tmp_path / "out"
    assert run("dedup", files["good"], "--out", out).code == 0
    assert run("dedup", files["good"], "--out", out, "--format", "parquet").code == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(
        [f"{n}.parquet" for n in ("clusters", "kept", "pairs", "removed")]
        + ["rare_words.npy", "report.html", "review.jsonl", "summary.json", "templates.npy"]
    )


def test_a_failed_run_leaves_no_file_in_a_new_out(run, files, tmp_path):
    run("dedup", files["notjson"], "--out", tmp_path / "new").refused(1, "notjson.jsonl:3")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_index_add_of_bad_input_stores_nothing(run, files, tmp_path):
    db = tmp_path / "c.db"
    shutil.copy(files["db"], db)
    run("index", "add", "--db", db, files["notjson"]).refused(1, "notjson.jsonl:3")
    assert sqlite3.connect(db).execute("SELECT count(*) FROM docs").fetchone() == (6,)


# ------------------------------------------------------------------------------ Ctrl-C


def test_ctrl_c_is_exit_130_with_one_line_and_the_earlier_output_whole(files, tmp_path):
    big = _jsonl(
        tmp_path / "big.jsonl",
        [{"id": f"b{i}", "text": f"{WORDS} {i} {i * 7} {i % 13}"} for i in range(60_000)],
    )
    out = tmp_path / "out"
    command = [sys.executable, "-c", "from neardup.cli import run; run()", "dedup"]
    first = subprocess.run([*command, str(files["good"]), "--out", str(out)], capture_output=True)
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    proc = subprocess.Popen(
        [*command, str(big), "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120

    def spilled() -> bool:  # the run's sign that it is fingerprinting: its spill has a batch
        spills = tmp_path.glob(".out.neardup-staging-*/neardup-*/*")
        return any(p.is_file() and p.stat().st_size for p in spills)

    while not spilled():  # a deadlock guard only: the run's own file says when
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    lines = [line for line in err.decode().splitlines() if line.strip()]
    assert lines == ["neardup: interrupted; nothing half-written was kept"]
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert not [p for p in tmp_path.iterdir() if "neardup-staging" in p.name]


def _numba_interrupted() -> None:
    """What numba raises when SIGINT arrives inside a compiled function."""
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as exc:
        message = "CPUDispatcher(<function f>) returned a result with an exception set"
        raise SystemError(message) from exc


def test_ctrl_c_inside_a_compiled_function_counts_as_ctrl_c():
    from neardup.cli import _interrupted

    with pytest.raises(SystemError) as caught:
        _numba_interrupted()
    assert _interrupted(caught.value)
    assert not _interrupted(SystemError("something else"))
    assert not _interrupted(ValueError("x"))
