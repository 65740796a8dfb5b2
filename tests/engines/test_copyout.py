"""kept/removed records copied from the inputs: JSONL lines as stored, other inputs re-read."""

import gzip
import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup import DedupConfig
from neardup.engines.local.copyout import Lines, Places, input_records, with_duplicate_of
from neardup.engines.local.pipeline import Inputs, run_dedup
from neardup.io.files import LineBlock

STORY = (
    "A small museum in the valley opened a room for old farm tools. Children can try the "
    "wooden plough, turn the handle of a butter churn and weigh grain on a brass scale, while "
    "a retired blacksmith explains how each tool was made and repaired through the winter."
)
OTHER = (
    "The choir rehearses on Thursday evenings in the school hall; new singers are welcome and "
    "no audition is needed, only a love of music and the patience to learn four-part harmony."
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(), json_values, max_size=5), st.text(), st.booleans())
def test_duplicate_of_spliced_into_any_object(record, keeper, spaced):
    line = json.dumps(record, ensure_ascii=spaced)
    if spaced:
        line = line[:-1] + "  }  "
    out = with_duplicate_of(line.encode(), keeper)
    assert json.loads(out) == record | {"_duplicate_of": keeper}


def test_jsonl_lines_are_copied_byte_for_byte(tmp_path):
    lines = [
        '{"id": "story", "text": "' + STORY + '", "n": 1.50, "esc": "caf\\u00e9"}',
        "",  # blank lines are not records
        '{"text":"' + OTHER + '","id":"other"}',
        '{ "id" : "copy" , "text" : "' + STORY.upper() + '" }',
    ]
    data = tmp_path / "in.jsonl.gz"
    data.write_bytes(gzip.compress(("\ufeff" + "\r\n".join(lines) + "\r\n").encode()))
    out = tmp_path / "out"
    summary = run_dedup(Inputs((str(data),)), out, DedupConfig())
    assert (summary["kept"], summary["removed"]) == (2, 1)
    kept = (out / "kept.jsonl").read_bytes().decode().splitlines()
    assert kept == [lines[0], lines[2]]  # as stored: spacing, number format, escapes
    removed = (out / "removed.jsonl").read_bytes().decode().splitlines()
    tail = '","_duplicate_of":"story"}'
    assert removed == ['{ "id" : "copy" , "text" : "' + STORY.upper() + tail]


def test_records_of_mixed_inputs_in_first_pass_order(tmp_path):
    """A JSONL file given twice (all its second copy's ids are duplicates, skipped), a CSV
    with a bad row, a directory: every document's record once, in order."""
    a = tmp_path / "a.jsonl"
    records = [
        json.dumps({"id": "s", "text": STORY}),
        "{oops",
        json.dumps({"id": "o", "text": OTHER}),
    ]
    a.write_text("\n".join(records), encoding="utf-8")
    csv = tmp_path / "b.csv"
    csv.write_text(f'id,text,x\nc,"{OTHER}",1\nbad,row\ns,"dup of a",2\nd,"{STORY}",3\n')
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "p.txt").write_text(OTHER, encoding="utf-8")
    paths = (str(a), str(a), str(csv), str(pages))
    places = Places()
    docs = []
    for doc in Inputs(paths, skip_bad=True).read(on_input=places.start_input):
        places.add(doc.line)
        docs.append(doc)
    assert [d.id for d in docs] == ["s", "o", "c", "d", "p.txt"]
    blocks = list(input_records(paths, places, [d.id for d in docs]))
    jsonl = [b for b in blocks if isinstance(b, Lines)]  # JSONL: the lines as stored
    copies = blocks[len(jsonl) :]
    got = [line for block in jsonl for line in block.lines]
    assert got == [records[0].encode(), records[2].encode()]
    data = b"\n".join(got)  # the two lines in one block, as a chunk holds them
    lines = Lines(
        LineBlock(data, np.array([0, len(got[0]) + 1]), np.array([len(got[0]), len(data)])),
        jsonl[0].format,
    )
    assert [lines.text(r, "text") for r in range(2)] == [STORY, OTHER]
    stay, gone = lines.split([None, "s"])
    assert stay == [records[0].encode()]
    assert lines.split([None, None]) == ([data], [])  # consecutive lines: one run, not copied
    assert [json.loads(g) for g in gone] == [{"id": "o", "text": OTHER, "_duplicate_of": "s"}]
    assert [c.fields()["id"] for c in copies] == ["c", "d", "p.txt"]
    assert copies[0].doc is not None  # CSV: read again
    removed = {"id": "d", "text": STORY, "x": "3", "_duplicate_of": "c"}
    assert copies[1].fields("c") == removed
    assert [c.text("text") for c in copies] == [d.text for d in docs[2:]]


def test_parquet_rows_go_to_parquet_outputs_with_their_column_types(tmp_path, monkeypatch):
    import datetime

    import pyarrow as pa
    import pyarrow.parquet as pq

    from neardup.io.formats import parquet

    monkeypatch.setattr(parquet, "_COPY_BATCH", 2)  # rows spread over several batches
    table = pa.table(
        {
            "id": ["s", "bad", "o", "c", "x"],
            "text": [STORY, None, OTHER, STORY.upper(), "a short unrelated line of text"],
            "when": pa.array([datetime.date(2024, 1, d) for d in range(1, 6)], pa.date32()),
            "n": pa.array([1, 2, 3, 4, 5], pa.int16()),
        }
    )
    data = tmp_path / "in.parquet"
    pq.write_table(table, data)
    out = tmp_path / "out"
    summary = run_dedup(Inputs((str(data),), skip_bad=True), out, DedupConfig(), fmt="parquet")
    assert (summary["bad_records"], summary["kept"], summary["removed"]) == (1, 3, 1)
    kept = pq.read_table(out / "kept.parquet")
    assert kept.column("id").to_pylist() == ["s", "o", "x"]
    assert kept.schema.field("when").type == pa.date32()  # as read, not re-inferred
    assert kept.schema.field("n").type == pa.int16()
    removed = pq.read_table(out / "removed.parquet").to_pylist()
    assert removed == [
        {
            "id": "c",
            "text": STORY.upper(),
            "when": datetime.date(2024, 1, 4),
            "n": 4,
            "_duplicate_of": "s",
        }
    ]
    assert "blacksmith" in (out / "report.html").read_text(encoding="utf-8")  # texts shown
