"""Input files as bytes: lines across chunks of any size, and lines picked again as stored."""

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import InputError
from neardup.io import files
from neardup.io.files import jsonl_line_blocks


@given(
    lines=st.lists(st.text(alphabet="ab{} ", max_size=12), max_size=30),
    picks=st.data(),
    chunk=st.sampled_from([1, 2, 3, 7, 1 << 20]),  # lines across chunks, or all in one
    huge=st.sampled_from([4, files._HUGE_LINE]),  # lines over it grown in one buffer
)
@settings(max_examples=200, deadline=None)
@pytest.mark.filterwarnings("ignore:line buffering")  # a 1-byte buffer: Python's own warning
def test_jsonl_line_blocks_give_the_wanted_lines_as_stored(lines, picks, chunk, huge):
    # the output copy's reader: lines split across chunks of any size, a BOM on line 1,
    # trailing whitespace off; the same lines as a plain split
    data = ("\ufeff" + "\n".join(f"{line}  " for line in lines)).encode()
    wanted = sorted(picks.draw(st.sets(st.integers(1, len(lines)))) if lines else [])
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(files, "IO_BUFFER", chunk)  # chunks of a few bytes
        patch.setattr(files, "_HUGE_LINE", huge)
        path = Path(tmp) / "a.jsonl"
        path.write_bytes(data)
        blocks = list(jsonl_line_blocks(path, np.array(wanted)))
    got = [line for block in blocks for line in block]
    assert got == [lines[w - 1].encode().rstrip() for w in wanted]
    for block in blocks:  # any rows of a block as runs: the same lines, fewer pieces
        rows = np.flatnonzero(
            picks.draw(st.lists(st.booleans(), min_size=len(block), max_size=len(block)))
        )
        runs = block.runs(rows)
        assert b"\n".join(runs) == b"\n".join(block[r] for r in rows.tolist())
        assert len(runs) <= rows.size


def test_jsonl_line_blocks_say_when_the_file_lost_lines(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"id": 1}\n{"id": 2}\n')
    assert [list(b) for b in jsonl_line_blocks(path, np.array([2]))] == [[b'{"id": 2}']]
    with pytest.raises(InputError, match="line 3 is gone"):
        list(jsonl_line_blocks(path, np.array([1, 3])))
