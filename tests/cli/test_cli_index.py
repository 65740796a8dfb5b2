"""``neardup index`` on a real SQLite file: create, add, query, remove, stats, and bad input."""

import json
import sqlite3

import numpy as np
import pytest

from clirun import neardup, run
from neardup.collection import SQLiteStore
from neardup.collection.persistent import Collection

WORDS = [f"word{i}" for i in range(300)]


def body(seed: int, n: int = 50) -> str:
    rng = np.random.default_rng(seed)
    return " ".join(rng.choice(WORDS, n))


def near(text: str) -> str:
    words = text.split()
    words[3] = "changed"
    return " ".join(words)


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "coll.db"
    result = run("index", "create", "--db", str(path), "--method", "minhash", "--threshold", "0.5")
    assert result.exit_code == 0, result.output
    return path


def count(path) -> int:
    store = SQLiteStore(path)
    try:
        return store.count()
    finally:
        store.close()


def test_add_query_stats_remove_json(db, tmp_path):
    first = write_jsonl(
        tmp_path / "a.jsonl",
        [{"id": "a", "text": body(1), "source": "feed"}, {"id": "b", "text": body(2)}],
    )
    second = write_jsonl(tmp_path / "b.jsonl", [{"id": "c", "text": near(body(1))}])
    result = run("index", "add", "--db", f"sqlite:///{db}", first, "--json")
    assert result.exit_code == 0, result.output
    assert [json.loads(line) for line in result.output.splitlines()] == [
        {"id": "a", "duplicates": []},
        {"id": "b", "duplicates": []},
    ]
    result = run("index", "add", "--db", str(db), second, "--json")
    [line] = [json.loads(line) for line in result.output.splitlines()]
    assert line["id"] == "c"
    assert [d["id"] for d in line["duplicates"]] == ["a"]
    assert 0.5 <= line["duplicates"][0]["score"] < 1.0

    result = run("index", "query", "--db", str(db), first, "--json")
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"]  # the input ids, one line per input document
    assert [d["id"] for d in rows[0]["duplicates"]] == ["a", "c"]
    assert rows[0]["duplicates"][0]["score"] == 1.0
    assert [d["id"] for d in rows[1]["duplicates"]] == ["b"]

    stats = json.loads(run("index", "stats", "--db", str(db), "--json").output)
    assert stats["documents"] == 3
    assert stats["method"] == "minhash"
    assert stats["threshold"] == 0.5

    store = SQLiteStore(db)
    assert Collection.open(store).get("a").meta == {"source": "feed"}
    store.close()

    result = neardup("index", "remove", "--db", str(db), "a", "nope", "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout) == {"removed": ["a"], "not_stored": ["nope"]}
    assert "not stored: nope" in result.stderr
    assert count(db) == 2


def test_plain_output(db, tmp_path):
    data = write_jsonl(tmp_path / "a.jsonl", [{"id": "a", "text": body(3)}])
    copy = write_jsonl(tmp_path / "b.jsonl", [{"id": "b", "text": body(3)}])
    assert "added 1 documents; 0 have" in run("index", "add", "--db", str(db), data).output
    result = run("index", "add", "--db", str(db), copy)
    assert "b\ta (1.000)" in result.output
    assert "documents" in run("index", "stats", "--db", str(db)).output


def test_create_from_config_file_and_refuse_twice(tmp_path):
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"method": "bottomn", "threshold": 0.7}), encoding="utf-8")
    path = str(tmp_path / "c.db")
    result = run("index", "create", "--db", path, "--config", str(config), "--threshold", "0.6")
    assert result.exit_code == 0, result.output
    stats = json.loads(run("index", "stats", "--db", path, "--json").output)
    assert (stats["method"], stats["threshold"]) == ("bottomn", 0.6)  # the option wins
    again = neardup("index", "create", "--db", path)
    assert again.returncode == 1
    assert "already holds a collection" in again.stderr


def test_known_id_is_refused_and_nothing_of_the_batch_stored(db, tmp_path):
    write_jsonl(tmp_path / "a.jsonl", [{"id": "a", "text": body(4)}])
    run("index", "add", "--db", str(db), str(tmp_path / "a.jsonl"))
    batch = write_jsonl(
        tmp_path / "b.jsonl", [{"id": "new", "text": body(5)}, {"id": "a", "text": body(6)}]
    )
    result = neardup("index", "add", "--db", str(db), batch)
    assert result.returncode == 1
    assert "'a'" in result.stderr
    assert "--upsert" in result.stderr
    assert count(db) == 1
    result = neardup("index", "add", "--db", str(db), batch, "--upsert")
    assert result.returncode == 0, result.stderr
    assert count(db) == 2


def test_malformed_record_names_the_line_and_keeps_earlier_batches(db, tmp_path):
    bad = tmp_path / "bad.jsonl"
    lines = [json.dumps({"id": f"d{i}", "text": body(10 + i)}) for i in range(5)]
    lines.insert(3, '{"id": "broken", "text": ')
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = neardup("index", "add", "--db", str(db), str(bad), "--batch-size", "2")
    assert result.returncode == 1
    assert f"{bad}:4" in result.stderr
    assert "2 documents of earlier batches were" in result.stderr
    assert count(db) == 2  # the first batch; the batch holding line 4 was never stored


def test_store_errors_are_clear(tmp_path):
    missing = tmp_path / "missing.db"
    result = neardup("index", "stats", "--db", str(missing))
    assert result.returncode == 1
    assert "no such file" in result.stderr
    assert not missing.exists()  # a mistyped path makes no stray file
    SQLiteStore(tmp_path / "empty.db").close()
    data = write_jsonl(tmp_path / "a.jsonl", [{"id": "a", "text": body(1)}])
    result = neardup("index", "add", "--db", str(tmp_path / "empty.db"), data)
    assert result.returncode == 1
    assert "holds no collection" in result.stderr
    result = neardup("index", "stats", "--db", "mysql://host/db")
    assert result.returncode == 1
    assert "unknown scheme 'mysql'" in result.stderr
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database, just some text" * 100)
    result = neardup("index", "stats", "--db", str(junk))
    assert result.returncode == 1
    assert str(junk) in result.stderr
    assert "Traceback" not in result.stderr


def test_other_version_of_the_collection_is_refused(db):
    raw = sqlite3.connect(db)
    raw.execute("UPDATE meta SET value = '99' WHERE name = 'format_version'")
    raw.commit()
    raw.close()
    result = neardup("index", "stats", "--db", str(db))
    assert result.returncode == 1
    assert "format version is 99" in result.stderr


def test_collection_of_an_older_store_layout_is_refused_in_one_line(db):
    raw = sqlite3.connect(db)
    raw.execute("DELETE FROM meta WHERE name = 'schema'")  # as written before layout 2
    raw.commit()
    raw.close()
    for command in ("stats", "add"):
        args = [str(write_jsonl(db.parent / "a.jsonl", [{"id": "a", "text": body(1)}]))]
        result = neardup("index", command, "--db", str(db), *(args if command == "add" else []))
        assert result.returncode == 1
        assert "store layout 1" in result.stderr
        assert "rebuild the collection" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert "Traceback" not in result.stderr


UNSTORABLE_LINES = [  # one rule for every store: refused as a bad record, nothing stored
    r'{"id": "nul\u0000id", "text": "words"}',
    r'{"id": "t", "text": "a NUL \u0000 here"}',
    r'{"id": "k", "text": "words", "k\u0000": 1}',
    r'{"id": "v", "text": "words", "tags": ["x", {"deep": "v\u0000"}]}',
    r'{"id": "line\nbreak", "text": "words"}',
    '{"id": "' + "x" * 2000 + '", "text": "words"}',
]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_index_add_refuses_unstorable_records_on_every_store(tmp_path, request, backend):
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'c.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    assert neardup("index", "create", "--db", url, "--method", "minhash").returncode == 0
    path = tmp_path / "in.jsonl"
    good = [json.dumps({"id": f"g{i}", "text": body(i)}) for i in range(3)]
    path.write_text("\n".join([good[0], *UNSTORABLE_LINES, *good[1:]]) + "\n")
    bad_lines = range(2, 2 + len(UNSTORABLE_LINES))
    refused = neardup("index", "add", "--db", url, str(path))
    assert refused.returncode == 1, refused.stderr
    assert "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines() == [
        line for line in refused.stderr.strip().splitlines() if line.startswith("neardup: error:")
    ]
    assert f"{path}:2:" in refused.stderr
    skipped = neardup("index", "add", "--db", url, str(path), "--skip-bad", "--json")
    assert skipped.returncode == 0, skipped.stderr
    warned = [line for line in skipped.stderr.splitlines() if "skipped" in line]
    assert all(f"{path}:{n}:" in line for n, line in zip(bad_lines, warned, strict=True))
    assert len(warned) == len(UNSTORABLE_LINES)
    assert "\x00" not in skipped.stderr
    assert "\nbreak" not in skipped.stderr
    stored = [json.loads(line)["id"] for line in skipped.stdout.splitlines()]
    assert stored == ["g0", "g1", "g2"]
