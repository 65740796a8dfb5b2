"""RecordWriter: a file appears whole, flushed to disk unless its caller flushes it later."""

from __future__ import annotations

import pytest

from neardup.io.writers import RecordWriter


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize("sync", [True, False])
def test_a_written_file_is_flushed_to_disk_unless_the_caller_does_it(tmp_path, flushed, fmt, sync):
    path = tmp_path / f"out.{fmt}"
    with RecordWriter(path, fmt, sync=sync) as writer:
        writer.write({"id": "a", "text": "some words"})
    assert path.exists()
    assert len(flushed) == (1 if sync else 0)
    if sync:  # flushed under its temporary name, before the rename
        assert flushed[0].startswith(str(tmp_path / ".out."))
        assert flushed[0].endswith(".tmp")
