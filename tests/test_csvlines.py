"""The CSV line feed: lines read again after a bad record, records bounded in size."""

from __future__ import annotations

import csv
import io

import pytest

from neardup.csvlines import LineFeed, RecordTooLongError


def test_rewind_reads_every_line_of_a_bad_record_but_the_first_again():
    feed = LineFeed(io.StringIO('a,"open\nb,1\nc,2\n'), limit=1000)
    reader = csv.reader(feed, strict=True)
    assert feed.start() == 1
    with pytest.raises(csv.Error, match="unexpected end of data"):
        next(reader)
    feed.rewind()
    reader = csv.reader(feed, strict=True)
    assert feed.start() == 2
    assert next(reader) == ["b", "1"]
    assert feed.start() == 3
    assert next(reader) == ["c", "2"]


def test_a_record_over_the_limit_raises_and_the_rest_of_its_line_is_skipped():
    feed = LineFeed(io.StringIO("x" * 50 + "\nok,1\n"), limit=10)
    reader = csv.reader(feed, strict=True)
    feed.start()
    with pytest.raises(RecordTooLongError):
        next(reader)
    feed.rewind()
    reader = csv.reader(feed, strict=True)
    assert feed.start() == 2
    assert next(reader) == ["ok", "1"]
