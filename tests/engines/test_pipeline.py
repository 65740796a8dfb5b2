"""neardup dedup on real files: every input kind, every output, bad input."""

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from neardup.dedup import DedupConfig
from neardup.dedup.cluster import KeepPolicy
from neardup.engines.local.pipeline import Inputs, run_dedup
from neardup.errors import InputError

STORY = (
    "A small museum in the valley opened a room for old farm tools. Children can try the "
    "wooden plough, turn the handle of a butter churn and weigh grain on a brass scale, while "
    "a retired blacksmith explains how each tool was made and repaired through the winter."
)
QUOTE = "a retired blacksmith explains how each tool was made and repaired through the winter"
OTHER = (
    "The choir rehearses on Thursday evenings in the school hall; new singers are welcome and "
    "no audition is needed, only a love of music and the patience to learn four-part harmony."
)
RECORDS = [
    {"id": "story", "text": STORY, "source": "museum", "year": 2021},
    {"id": "other", "text": OTHER, "source": "choir", "year": 2020},
    {"id": "copy", "text": STORY.upper(), "source": "mirror", "year": 2023},
    {"id": "quote", "text": QUOTE, "source": "blog", "year": 2022},
]


def write_jsonl(path, records, extra_lines=()):
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
        for line in extra_lines:
            fh.write(line + "\n")
    return path


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_outputs_of_a_run(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    out = tmp_path / "out"
    summary = run_dedup(Inputs((str(data),)), out, DedupConfig())
    assert summary["documents"] == 4
    assert (summary["kept"], summary["removed"], summary["clusters"]) == (2, 2, 1)
    clusters = read_jsonl(out / "clusters.jsonl")
    assert clusters == [{"cluster": 0, "ids": ["story", "copy", "quote"], "keep": "story"}]
    kept = read_jsonl(out / "kept.jsonl")
    assert kept == [RECORDS[0], RECORDS[1]]  # every field preserved
    removed = read_jsonl(out / "removed.jsonl")
    assert [r["_duplicate_of"] for r in removed] == ["story", "story"]
    assert removed[0]["source"] == "mirror"
    pairs = {(p["a"], p["b"]): p for p in read_jsonl(out / "pairs.jsonl")}
    quote = pairs[("story", "quote")]
    assert quote["contained"] == "b_in_a"  # the quote is inside the story
    assert quote["containment_b_in_a"] == 1.0
    assert quote["resemblance"] < 0.5
    assert set(quote) >= {"a", "b", "score", "resemblance", "containment_a_in_b"}
    saved = json.loads((out / "summary.json").read_text())
    assert saved["parameters"]["measure"] == "containment"
    assert set(saved["timings_seconds"]) >= {"fingerprints", "candidates", "verify", "total"}
    page = (out / "report.html").read_text()
    assert "story" in page
    assert "<svg" in page


def test_keep_by_field_and_parquet_output(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    config = DedupConfig(keep=KeepPolicy.parse("field:year:max"))
    run_dedup(Inputs((str(data),)), tmp_path / "out", config, fmt="parquet")
    clusters = pq.read_table(tmp_path / "out" / "clusters.parquet").to_pylist()
    assert clusters[0]["keep"] == "copy"  # year 2023 is the largest
    kept = pq.read_table(tmp_path / "out" / "kept.parquet").to_pylist()
    assert {r["id"] for r in kept} == {"copy", "other"}


def test_several_inputs_csv_and_a_directory(tmp_path):
    csv = tmp_path / "a.csv"
    csv.write_text(f'id,text\nstory,"{STORY}"\nother,"{OTHER}"\n', encoding="utf-8")
    docs = tmp_path / "pages"
    (docs / "sub").mkdir(parents=True)
    (docs / "sub" / "copy.html").write_text(
        f"<html><body><nav>Home News</nav><article><p>{STORY}</p></article></body></html>",
        encoding="utf-8",
    )
    (docs / "quote.txt").write_text(QUOTE, encoding="utf-8")
    out = tmp_path / "out"
    summary = run_dedup(Inputs((str(csv), str(docs))), out, DedupConfig())
    assert summary["documents"] == 4
    clusters = read_jsonl(out / "clusters.jsonl")
    assert clusters[0]["ids"] == ["story", "quote.txt", "sub/copy.html"]


def test_bad_records_stop_the_run_or_are_skipped_and_counted(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", RECORDS, ['{"id": "x", "text": 5}', "{oops"])
    with pytest.raises(InputError, match=r"in\.jsonl:5"):
        run_dedup(Inputs((str(data),)), tmp_path / "out", DedupConfig())
    summary = run_dedup(Inputs((str(data),), skip_bad=True), tmp_path / "out", DedupConfig())
    assert summary["bad_records"] == 2
    assert "in.jsonl:6" in summary["bad_examples"][1]
    assert summary["documents"] == 4


def test_duplicate_ids_across_inputs_are_an_error(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", RECORDS[:2])
    b = write_jsonl(tmp_path / "b.jsonl", RECORDS[:1])
    with pytest.raises(InputError, match="story"):
        run_dedup(Inputs((str(a), str(b))), tmp_path / "out", DedupConfig())


def test_empty_documents_are_reported_not_clustered(tmp_path):
    records = [*RECORDS, {"id": "e1", "text": ""}, {"id": "e2", "text": " ... "}]
    data = write_jsonl(tmp_path / "in.jsonl", records)
    summary = run_dedup(Inputs((str(data),)), tmp_path / "out", DedupConfig())
    assert summary["empty_documents"] == 2
    assert summary["empty_ids"] == ["e1", "e2"]
    assert all("e1" not in c["ids"] for c in read_jsonl(tmp_path / "out" / "clusters.jsonl"))


def neardup(*args):
    return subprocess.run(
        [sys.executable, "-c", "from neardup.cli import main; main()", *args],
        capture_output=True,
        text=True,
    )


def test_cli_with_no_options_and_its_errors(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    out = tmp_path / "out"
    done = neardup("dedup", str(data), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "removed" in done.stdout
    assert len(read_jsonl(out / "removed.jsonl")) == 2
    missing = neardup("dedup", str(tmp_path / "nope.jsonl"), "--out", str(out))
    assert missing.returncode == 1
    assert "nope.jsonl" in missing.stderr
    assert "Traceback" not in missing.stderr
    weird = neardup("dedup", str(data), "--out", str(out), "--keep", "tallest")
    assert weird.returncode == 2  # a bad option
    assert "tallest" in weird.stderr
    both = neardup("dedup", str(data), "--out", str(out), "--chain", "--guard", "0.6")
    assert both.returncode == 2


def test_every_stage_is_named_as_it_starts(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    stages = []
    run_dedup(Inputs((str(data),)), tmp_path / "out", DedupConfig(), stage=stages.append)
    assert stages == [
        "reading and fingerprinting",
        "sketching",
        "finding candidate pairs",
        stages[3],
        "clustering",
        "writing the outputs",
        "writing the report",
    ]
    assert stages[3].startswith("verifying ")
    assert stages[3].endswith(" candidate pairs")


def test_every_output_reaches_the_disk_before_the_run_replaces_out(tmp_path, flushed):
    """The outputs are flushed beside the report's work, then all once more with the
    directory before the swap: each file is flushed while it is still in the staging
    directory (a spy on os.fsync; the disk is flushed for real)."""
    inp = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    out = tmp_path / "out"
    run_dedup(Inputs([str(inp)]), out, DedupConfig())
    outputs = {p.name for p in out.iterdir()}
    assert {"kept.jsonl", "removed.jsonl", "pairs.jsonl", "clusters.jsonl"} < outputs
    staged = [p for p in flushed if ".out.neardup-staging-" in p]
    assert staged == flushed  # nothing flushed after the swap, nothing outside the stage
    assert {p.rsplit("/", 1)[1] for p in staged} >= outputs  # every output, report included


_PASSAGE_KERNELS = """
import sys
from neardup.engines.local.pipeline import Inputs, run_dedup
from neardup.dedup import DedupConfig
from neardup.fingerprints import shingle_kernels
run_dedup(Inputs([sys.argv[1]]), sys.argv[2], DedupConfig())
print(len(shingle_kernels.shingle_offsets.overloads))
"""


@pytest.mark.parametrize(("records", "loaded"), [(RECORDS[:2], "0"), (RECORDS, "1")])
def test_the_report_loads_the_passage_kernels_only_when_it_shows_passages(
    tmp_path, records, loaded
):
    # a fresh process: whether the kernels that mark shared passages were loaded at all
    inp = write_jsonl(tmp_path / "in.jsonl", records)
    out = subprocess.run(
        [sys.executable, "-c", _PASSAGE_KERNELS, str(inp), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split()[-1] == loaded
