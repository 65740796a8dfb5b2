"""The command line as a user runs it: a real subprocess for the error paths, CliRunner else."""

import json
import os
import subprocess
import sys

import pytest
import xxhash

from clirun import neardup, run
from neardup.cli import cli

QUOTE = "the old lighthouse keeper climbed the stairs every night to light the lamp"
ESSAY = (
    "Everyone in the village knew the story. The old lighthouse keeper climbed the stairs "
    "every night to light the lamp, even in winter storms, and nobody ever saw him tired."
)


@pytest.fixture
def texts(tmp_path):
    a, b = tmp_path / "quote.txt", tmp_path / "essay.txt"
    a.write_text(QUOTE, encoding="utf-8")
    b.write_text(ESSAY, encoding="utf-8")
    return a, b


def test_compare_json_has_the_documented_keys_and_finds_the_quotation(texts):
    a, b = texts
    result = run("compare", str(a), str(b), "--json", "--no-stopwords", "--size", "3")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    for key in (
        "resemblance",
        "containment_a_in_b",
        "containment_b_in_a",
        "dice",
        "shingles_a",
        "shingles_b",
        "shared",
        "method",
    ):
        assert key in data
    assert data["containment_a_in_b"] == 1.0
    assert data["resemblance"] < 0.5
    assert data["method"] == "full"
    assert data["shared"] == data["shingles_a"]
    assert "lighthouse keeper climbed" in " ".join(data["passages_b"])


def test_compare_inline_texts_and_stdin(texts):
    a, _ = texts
    inline = run(
        "compare",
        "--text-a",
        "one two three four",
        "--text-b",
        "one two three four",
        "--json",
        "--canon",
        "none",
    )
    assert json.loads(inline.output)["resemblance"] == 1.0
    piped = run("compare", "-", str(a), "--json", input=QUOTE)
    assert json.loads(piped.output)["resemblance"] == 1.0


def test_compare_options_change_the_result(texts):
    a, b = texts
    words = json.loads(run("compare", str(a), str(b), "--json").output)
    chars = json.loads(run("compare", str(a), str(b), "--json", "--unit", "char").output)
    assert chars["shingles_a"] > words["shingles_a"]
    crc = json.loads(run("compare", str(a), str(b), "--json", "--hash", "crc32").output)
    assert crc["containment_a_in_b"] == pytest.approx(words["containment_a_in_b"])


def test_canon_none_with_lowercase():
    args = [
        "compare",
        "--text-a",
        "Hello World",
        "--text-b",
        "hello world",
        "--json",
        "--canon",
        "none",
        "--size",
        "1",
    ]
    assert json.loads(run(*args).output)["resemblance"] == 0.0
    assert json.loads(run(*args, "--lowercase").output)["resemblance"] == 1.0


def test_compare_human_output_shows_measures_and_passages(texts):
    a, b = texts
    result = run("compare", str(a), str(b))
    assert result.exit_code == 0
    assert "resemblance" in result.output
    assert "containment of A in B" in result.output
    assert "lighthouse" in result.output


def test_shingles_command_prints_distinct_shingles_with_hashes(tmp_path):
    f = tmp_path / "rose.txt"
    f.write_text("A rose is a rose is a rose", encoding="utf-8")
    result = run("shingles", str(f), "--canon", "none", "--lowercase", "--hashes")
    lines = result.output.strip().splitlines()
    assert [line.split("\t")[1] for line in lines] == [
        "a rose is a",
        "rose is a rose",
        "is a rose is",
    ]
    for line in lines:
        digest, shingle = line.split("\t")
        assert int(digest, 16) == xxhash.xxh3_64_intdigest(shingle.encode())


def test_demo_deduplicates_the_bundled_sample(tmp_path):
    result = run("demo", "--out", str(tmp_path / "demo"))
    assert result.exit_code == 0
    assert "en-harbour-rewrite" in result.output
    assert "zh-tea-rewrite" in result.output
    removed = (tmp_path / "demo" / "removed.jsonl").read_text(encoding="utf-8")
    assert "en-harbour-page" in removed
    assert "en-garden" not in removed


@pytest.mark.parametrize("command", ["demo", "dedup"])
def test_a_fresh_install_says_it_compiles_before_the_first_run(tmp_path, monkeypatch, command):
    import neardup.util.kernels

    monkeypatch.setattr(neardup.util.kernels, "kernels_compiled", lambda: False)  # a fresh install
    args = ["--out", str(tmp_path / "out")]
    if command == "dedup":
        data = tmp_path / "in.jsonl"
        data.write_text('{"id": "a", "text": "one short text"}\n', encoding="utf-8")
        args.insert(0, str(data))
    result = run(command, *args)
    assert result.exit_code == 0
    assert "first run: compiling the kernels" in result.output


def test_every_command_has_help():
    for command in cli.commands.values():
        assert command.help, command.name
        assert run(command.name, "--help").exit_code == 0


# --- error paths, in a real subprocess: clear message, non-zero exit, no traceback ----------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary"),
        (b"caf\xe9 au lait", "invalid UTF-8 at byte 3 (line 1)"),
        (b"", "empty"),
        (b"  \n\t ", "empty"),
    ],
)
def test_bad_files_are_named_in_a_clear_error(tmp_path, content, message):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    good = tmp_path / "good.txt"
    good.write_text("a perfectly fine text with words", encoding="utf-8")
    out = neardup("compare", str(bad), str(good))
    assert out.returncode == 1
    assert message in out.stderr
    assert "bad.txt" in out.stderr
    assert "Traceback" not in out.stderr


def test_missing_file_and_missing_argument(tmp_path):
    out = neardup("compare", str(tmp_path / "nope.txt"), "--text-b", "x")
    assert out.returncode == 1
    assert "nope.txt: no such file" in out.stderr
    usage = neardup("compare", "--text-a", "only one")
    assert usage.returncode == 2
    assert "text B is missing" in usage.stderr


def test_bad_option_value_is_a_usage_error():
    out = neardup("compare", "--text-a", "x", "--text-b", "y", "--size", "0")
    assert out.returncode == 2
    assert "--size" in out.stderr


def test_compare_with_a_method_prints_its_estimate_beside_the_exact_value(texts):
    a, b = texts
    data = json.loads(
        run(
            "compare", str(a), str(b), "--json", "--method", "minhash", "--param", "num_perm=64"
        ).output
    )
    assert data["method"] == "minhash"
    assert 0.0 <= data["estimate"] <= 1.0
    assert "resemblance" in data
    human = run("compare", str(a), str(b), "--method", "bottomn")
    assert "bottomn: estimated resemblance" in human.output
    assert "exact resemblance" in human.output


def test_compare_simhash_reports_hamming(texts):
    a, b = texts
    data = json.loads(run("compare", str(a), str(b), "--json", "--method", "simhash").output)
    assert data["hamming"] == int(data["estimate"])


def test_bad_method_parameter_is_a_clear_error(texts):
    a, b = texts
    out = neardup("compare", str(a), str(b), "--method", "minhash", "--param", "colour=5")
    assert out.returncode == 2  # a bad option
    assert "colour" in out.stderr
    assert "Traceback" not in out.stderr
    assert neardup("compare", str(a), str(b), "--param", "num_perm=5").returncode == 2


def test_weak_signature_warning_is_one_plain_line():
    out = neardup(
        "compare",
        "--text-a",
        "short text here",
        "--text-b",
        "short text there",
        "--method",
        "modm",
        "--json",
    )
    assert out.returncode == 0
    assert "neardup: warning: mod-m sample" in out.stderr
    assert "compare.py" not in out.stderr


def test_methods_lists_every_method_with_parameters():
    lines = [json.loads(x) for x in run("methods", "--json").output.splitlines()]
    assert [m["name"] for m in lines] == [
        "full",
        "modm",
        "bottomn",
        "minhash",
        "megashingle",
        "simhash",
        "imatch",
    ]
    by_name = {m["name"]: m for m in lines}
    assert by_name["modm"]["params"] == {"m": 25}
    # keys tuned for the default threshold 0.8 (a run tunes them to its own)
    mega = by_name["megashingle"]["params"]
    assert (mega["num_perm"], mega["groups"], mega["group_size"], mega["threshold"]) == (
        40,
        10,
        4,
        0.8,
    )
    assert by_name["simhash"]["params"]["fingerprints"] == 16
    assert all(m["summary"] for m in lines)
    assert "minhash" in run("methods").output


def test_dedup_discounts_a_shared_footer_unless_told_not_to(tmp_path):
    footer = (
        "you received this message because you are subscribed to the harbour users list to "
        "unsubscribe send an empty message to the list address or visit the archives online"
    )
    rows = [
        {
            "id": f"m{i}",
            "text": " ".join(f"w{i}x{j}" for j in range(3 + 2 * (i % 20))) + " " + footer,
        }
        for i in range(40)
    ]
    corpus = tmp_path / "mail.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    summaries = {}
    for df in ("10", "0"):
        out = tmp_path / f"out{df}"
        assert run("dedup", str(corpus), "--out", str(out), "--template-df", df).exit_code == 0
        summaries[df] = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert (summaries["10"]["removed"], summaries["0"]["template_shingles"]) == (0, 0)
    assert summaries["10"]["template_shingles"] > 10
    assert summaries["0"]["removed"] > 5
    assert "templates" in summaries["10"]["guarantee"]
    assert "templates" not in summaries["0"]["guarantee"]


def test_a_command_loads_only_its_own_module():
    import subprocess
    import sys

    code = (
        "import sys; from neardup.cli import cli; from click.testing import CliRunner; "
        "r = CliRunner().invoke(cli, ['dedup', '--help']); assert r.exit_code == 0, r.output; "
        "print(sorted(m for m in ('neardup.cli.judge', 'neardup.cli.serve', 'neardup.cli.index', "
        "'neardup.cli.corpus', 'neardup.judge', 'neardup.collection') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "['neardup.cli.corpus']", done.stderr


@pytest.mark.parametrize(("argv", "code"), [(["methods"], 0), (["compare", "--bogus"], 2)])
def test_the_command_leaves_at_once_but_flushes_and_runs_exit_handlers(argv, code):
    # run() skips the interpreter's teardown (os._exit): output still buffered in stdout and
    # the exit handlers must not be lost with it, and the exit code is main()'s
    script = (
        "import atexit, sys; atexit.register(lambda: sys.stdout.write(' handler ran')); "
        f"sys.stdout.write('buffered'); sys.argv = ['neardup', *{argv!r}]; "
        "from neardup.cli import run; run(); print('not reached')"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # a pipe: buffered
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert proc.returncode == code, proc.stderr
    assert proc.stdout.startswith("buffered")
    assert proc.stdout.endswith(" handler ran")
    assert "not reached" not in proc.stdout


@pytest.mark.parametrize("terminal", [False, True])
def test_the_progress_bar_counts_the_input_lines_only_when_it_is_shown(
    tmp_path, monkeypatch, terminal
):
    # counting reads up to 8 MiB of every input: a run whose stderr is a log or a pipe
    # shows no bar and must not pay for it
    from neardup.io import readers

    data = tmp_path / "in.jsonl"
    data.write_text('{"id": "a", "text": "one two three four"}\n')
    counted = []
    monkeypatch.setattr(readers, "count_lines", lambda p: counted.append(p) or 1)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    if terminal:
        monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich: stderr is a terminal
    result = run("dedup", str(data), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert counted == ([str(data)] if terminal else [])


@pytest.mark.parametrize(("given", "threads"), [(None, 1), ("2", 2)])
def test_numpy_under_the_command_starts_no_blas_threads_unless_asked(given, threads):
    """The commands do no linear algebra: NumPy's OpenBLAS starts no threads to spin beside
    neardup's workers (one process thread in all), unless the user set their number."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    code = "import os, neardup.cli, numpy; print(len(os.listdir('/proc/self/task')))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.stdout.strip() == str(threads), done.stderr
