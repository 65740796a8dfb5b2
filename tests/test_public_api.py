"""The public API: the names exported at the package root, their docs, and the verbs' answers."""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
from pathlib import Path

import pytest

import neardup
import neardup.api
from clirun import neardup as neardup_process
from neardup.io.sample_corpus import sample_path

# Changing this list changes what users may import: update it on purpose, and the changelog.
PUBLIC = [
    "CanonConfig",
    "Cluster",
    "Collection",
    "Comparison",
    "ConfigError",
    "DedupConfig",
    "DedupResult",
    "Deduplication",
    "DuplicatePair",
    "EmptyTextError",
    "Evaluation",
    "InputError",
    "KeepPolicy",
    "MissingDependencyError",
    "NearDupError",
    "ShingleConfig",
    "SignatureError",
    "TextConfig",
    "WeakSignatureWarning",
    "__version__",
    "compare_texts",
    "deduplicate",
    "deduplicate_files",
    "evaluate",
    "open_collection",
]

HEAVY = ("numpy", "numba", "pyarrow", "fastapi", "pyspark", "neardup.dedup")


def test_exported_names_are_the_written_list() -> None:
    assert sorted(neardup.__all__) == PUBLIC


@pytest.mark.parametrize("name", [n for n in PUBLIC if n != "__version__"])
def test_every_name_resolves_and_is_documented(name: str) -> None:
    value = getattr(neardup, name)
    assert value.__module__.startswith("neardup.")
    assert (value.__doc__ or "").strip(), f"{name} has no docstring"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        neardup.no_such_name  # noqa: B018


def test_package_is_typed() -> None:
    assert (Path(neardup.__file__).parent / "py.typed").is_file()


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_import_loads_nothing_heavy() -> None:
    loaded = _modules_after("import neardup")
    assert not {m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY}


def test_version_option_prints_the_package_version() -> None:
    done = neardup_process("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"neardup, version {neardup.__version__}"


def test_api_docstring_examples_run() -> None:
    failed, attempted = doctest.testmod(neardup.api)
    assert attempted >= 1
    assert failed == 0


def test_deduplicate_records_by_id() -> None:
    same = "The old harbour of the town was rebuilt last spring by the council."
    records = [
        {"id": "a", "text": same},
        {"id": "b", "text": "An unrelated note about bread, honey and the weather in May."},
        {"id": "c", "text": same + " Boats share the quay."},
    ]
    found = neardup.deduplicate(records)
    assert found.removed == {"a": "c"}  # c holds all of a: the container is kept
    assert found.kept == ["b", "c"]
    assert [(c.ids, c.keep) for c in found.clusters] == [(["a", "c"], "c")]
    (pair,) = found.pairs
    assert (pair.a, pair.b, pair.contained) == ("a", "c", "a_in_b")
    assert pair.containment_a_in_b == 1.0


def test_deduplicate_names_a_record_without_text() -> None:
    with pytest.raises(neardup.InputError, match="record 2: no 'text' field"):
        neardup.deduplicate([{"id": "a", "text": "x y z"}, {"id": "b"}])


def test_deduplicate_files_writes_the_outputs(tmp_path: Path) -> None:
    with sample_path() as path:
        summary = neardup.deduplicate_files([path], tmp_path / "out")
    assert (tmp_path / "out" / "removed.jsonl").is_file()
    removed = (tmp_path / "out" / "removed.jsonl").read_text(encoding="utf-8").splitlines()
    assert summary["removed"] == len(removed) > 0


def test_open_collection_creates_then_opens(tmp_path: Path) -> None:
    db = str(tmp_path / "docs.db")
    with pytest.raises(neardup.ConfigError, match="no such file"):
        neardup.open_collection(db)
    neardup.open_collection(db, create=True).add([("a", "the cat sat on the mat today", None)])
    results = neardup.open_collection(db).query(["the cat sat on the mat today"])
    assert [d.id for d in results[0].duplicates] == ["a"]


def test_evaluate_scores_a_labelled_corpus(tmp_path: Path) -> None:
    text = "The old harbour of the town was rebuilt last spring by the council and the port."
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"id": "a", "text": text},
                {"id": "b", "text": text + " Boats share the quay."},
                {"id": "c", "text": "A note on bread, honey and the weather in the month of May."},
            ]
        ),
        encoding="utf-8",
    )
    truth = tmp_path / "truth.jsonl"
    truth.write_text(
        '{"id": "a", "cluster": 1}\n{"id": "b", "cluster": 1}\n{"id": "c", "cluster": 2}\n',
        encoding="utf-8",
    )
    ev = neardup.evaluate([corpus], truth, thresholds=[0.6])
    (row,) = ev.methods[0].rows
    assert (row.scores.precision, row.scores.recall) == (1.0, 1.0)


def test_all_lists_every_lazily_imported_name() -> None:
    assert set(neardup.__all__) == {"__version__", *neardup._EXPORTS}


def test_python_m_neardup_is_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "neardup", "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"neardup, version {neardup.__version__}"
