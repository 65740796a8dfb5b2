"""Peak memory of dedup on huge input: a file of NUL bytes with no newline, one valid JSON
line with a huge text, and a document of a given size (among a few small ones) that is read
and processed (the defaults but ``--max-text-bytes``).

Each case is a real ``neardup dedup`` process; its peak resident memory is that process's own
(``os.wait4``), beside the baseline of a run on a 3-document file. Files are made in a
temporary directory (``--dir``; a few GiB free are needed for the default sizes).

    python benchmarks/bench_huge_input.py [--gib 2] [--doc-mb 200] [--dir /tmp] [--doc-only]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHUNK = 2**20


def _write(path: Path, head: bytes, fill: bytes, size: int, tail: bytes) -> Path:
    with open(path, "wb") as out:
        out.write(head)
        block = fill * (_CHUNK // len(fill))
        for _ in range(size // len(block)):
            out.write(block)
        out.write(tail)
    return path


def _records(start: int, stop: int) -> bytes:
    """Ordinary small JSONL records ``start``..``stop - 1``."""
    return "".join(
        json.dumps({"id": f"s{i}", "text": f"an ordinary small text, number {i} of a few"}) + "\n"
        for i in range(start, stop)
    ).encode()


def _run(path: Path, out: Path, *args: str) -> tuple[int, float, float, str]:
    """Exit code, peak RSS (MiB), seconds and the last stderr line of ``neardup dedup``."""
    command = [sys.executable, "-c", "from neardup.cli import run; run()", "dedup"]
    started = time.perf_counter()
    proc = subprocess.Popen(
        [*command, str(path), "--out", str(out), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    last = (err.strip().splitlines() or [""])[-1][:110]
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024, seconds, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=2.0, help="size of the huge lines")
    parser.add_argument("--doc-mb", type=int, default=200, help="size of the processed document")
    parser.add_argument("--dir", default=None, help="where to write the files")
    parser.add_argument(
        "--doc-only", action="store_true", help="the processed document (and the baseline) only"
    )
    opts = parser.parse_args()
    size = int(opts.gib * 2**30)
    with tempfile.TemporaryDirectory(dir=opts.dir, prefix="neardup-huge-") as tmp:
        work = Path(tmp)
        words = b"lorem ipsum dolor sit amet consectetur adipiscing elit sed do "
        cases = {
            "3 small documents (baseline)": (
                work / "small.jsonl",
                lambda p: p.write_text(
                    "".join(json.dumps({"id": i, "text": f"text {i}"}) + "\n" for i in range(3))
                ),
                (),
            ),
            f"{opts.gib:g} GiB of NUL bytes, no newline": (
                work / "nul.jsonl",
                lambda p: _write(p, b"", b"\x00", size, b""),
                ("--skip-bad",),
            ),
            f"one valid {opts.gib:g} GiB JSON line": (
                work / "line.jsonl",
                lambda p: _write(p, b'{"id": "big", "text": "', words, size, b'"}\n'),
                ("--skip-bad",),
            ),
            f"a {opts.doc_mb} MB document among 4 small ones, processed": (
                work / "doc.jsonl",
                lambda p: _write(
                    p,
                    _records(0, 3) + b'{"id": "doc", "text": "',
                    words,
                    opts.doc_mb * 10**6,
                    b'"}\n' + _records(3, 4),
                ),
                ("--max-text-bytes", str(2 * opts.doc_mb * 10**6)),
            ),
        }
        if opts.doc_only:  # and the baseline
            cases = {k: v for k, v in cases.items() if "processed" in k or "baseline" in k}
        print(f"{'case':<52} {'exit':>4} {'peak RSS MiB':>12} {'seconds':>8}  last line")
        for name, (path, make, args) in cases.items():
            make(path)
            code, peak, seconds, last = _run(path, work / "out", *args)
            print(f"{name:<52} {code:>4} {peak:>12.0f} {seconds:>8.1f}  {last}")
            path.unlink()


if __name__ == "__main__":
    main()
