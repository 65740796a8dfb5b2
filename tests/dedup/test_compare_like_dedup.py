"""compare measures what dedup measures: the same defaults, a --config file's or a run's
settings, and the same numbers from the command, the Python function and the web page."""

import json
import re

import pytest
from fastapi.testclient import TestClient

from clirun import neardup, run
from neardup.collection import MemoryStore
from neardup.collection.persistent import Collection
from neardup.dedup import DedupConfig
from neardup.dedup.compare import compare_texts
from neardup.dedup.configfile import write_config
from neardup.engines.local.pipeline import Inputs, run_dedup
from neardup.service.http_api import ServiceSettings, create_app
from neardup.text.text_config import ShingleConfig, TextConfig
from textgen import edit, text

FOOTER = (
    "you received this message because you are subscribed to the harbour users mailing list "
    "to unsubscribe from this list send an empty message to the list address and visit the "
    "archives at the project site for older threads and the posting guidelines"
)
ORIGINAL = (
    "The committee met on Tuesday to review the budget for the new library. Members agreed "
    "that the reading room needs better lighting, that the children's corner should move "
    "closer to the entrance, and that the archive of local newspapers must be digitised "
    "before the end of the year."
)
COPY = ORIGINAL.replace("Tuesday", "Wednesday").replace("lighting", "lamps")
KEYS = ("resemblance", "containment_a_in_b", "containment_b_in_a", "score_a_in_b", "score_b_in_a")


def cli_compare(*args: str) -> dict:
    result = run("compare", "--text-a", ORIGINAL, "--text-b", COPY, "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_compare_with_no_options_measures_what_dedup_measures(tmp_path):
    data = jsonl(tmp_path / "in.jsonl", [{"id": "a", "text": ORIGINAL}, {"id": "b", "text": COPY}])
    run_dedup(Inputs((str(data),)), tmp_path / "out", DedupConfig())
    [pair] = [json.loads(x) for x in (tmp_path / "out" / "pairs.jsonl").read_text().splitlines()]
    shown = cli_compare()
    for key in KEYS:
        assert shown[key] == pytest.approx(pair[key]), key
    assert shown["score_measure"] == "containment"
    assert shown["template_shingles"] is None  # two texts alone: no template


def test_the_command_the_function_and_the_web_page_agree_on_a_pair():
    shown = cli_compare()
    function = compare_texts(ORIGINAL, COPY).as_dict()
    settings = ServiceSettings(db="memory", token="t")
    app = create_app(settings, lambda: Collection.create(MemoryStore(), DedupConfig()))
    with TestClient(app) as http:
        page = http.post(
            "/web/compare",
            json={"a": ORIGINAL, "b": COPY},
            headers={"Authorization": "Bearer t"},
        ).text
    figures = dict(re.findall(r'data-key="(\w+)"><dt>[^<]*</dt><dd>([^<]*)</dd>', page))
    assert set(KEYS) <= set(figures)
    for key in KEYS:
        assert shown[key] == function[key], key
        assert figures[key] == f"{shown[key]:.4f}", key
    assert shown["containment_a_in_b"] < 1.0  # a pair that differs: the figures say something


def test_compare_takes_a_config_file_and_explicit_options_over_it(tmp_path):
    path = tmp_path / "settings.json"
    write_config(path, DedupConfig(text=TextConfig(shingle=ShingleConfig(unit="word", size=5))))
    from_file = cli_compare("--config", str(path))
    fives = compare_texts(ORIGINAL, COPY, TextConfig(shingle=ShingleConfig(unit="word", size=5)))
    assert from_file["containment_a_in_b"] == fives.overlap.containment_a_in_b
    assert from_file["containment_a_in_b"] != cli_compare()["containment_a_in_b"]
    over = cli_compare("--config", str(path), "--size", "3", "--unit", "auto")
    assert over["containment_a_in_b"] == cli_compare()["containment_a_in_b"]


def test_compare_with_a_run_scores_the_pair_with_the_runs_templates(tmp_path):
    records = []
    for i in range(20):
        body = text(300 + i, 30 + i)
        records.append({"id": f"m{i}", "text": body + "\n" + FOOTER})
        if i % 4 == 0:
            records.append({"id": f"m{i}-edit", "text": edit(body, i, 2) + "\n" + FOOTER})
    data = jsonl(tmp_path / "in.jsonl", records)
    out = tmp_path / "out"
    run_dedup(Inputs((str(data),)), out, DedupConfig())
    pairs = [json.loads(x) for x in (out / "pairs.jsonl").read_text().splitlines()]
    texts = {r["id"]: r["text"] for r in records}
    pair = next(p for p in pairs if p["b"] == p["a"] + "-edit" or p["a"] == p["b"] + "-edit")
    a, b = texts[pair["a"]], texts[pair["b"]]
    base = ("compare", "--text-a", a, "--text-b", b, "--json")
    with_run = json.loads(run(*base, "--run", str(out)).output)
    alone = json.loads(run(*base).output)
    for key in KEYS:
        assert with_run[key] == pytest.approx(pair[key]), key
    assert with_run["template_shingles"]["a"] > 20  # the footer
    assert with_run["score_a_in_b"] < alone["score_a_in_b"]  # the footer discounted
    assert alone["score_a_in_b"] == alone["containment_a_in_b"]
    settings = tmp_path / "settings.json"
    write_config(settings, DedupConfig())
    both = neardup(*base[:-1], "--run", str(out), "--config", str(settings))
    assert both.returncode == 2
    assert "not both" in both.stderr
    not_run = neardup("compare", "--text-a", a, "--text-b", b, "--run", str(tmp_path))
    assert not_run.returncode == 1
    assert "not the output directory" in not_run.stderr
