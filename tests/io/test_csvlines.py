"""CSV records that survive a stray quote: resumed at the second line of a bad record."""

from __future__ import annotations

import csv
import io

from neardup.io.csvlines import csv_records


def _records(text: str) -> list[tuple[int, object, int]]:
    out = []
    for line, row, lines in csv_records(iter(io.StringIO(text, newline=""))):
        out.append((line, "error" if isinstance(row, csv.Error) else row, lines))
    return out


def test_an_unterminated_quote_running_to_the_end_is_an_error_and_the_rest_is_read():
    assert _records('a,"open\nb,1\nc,2\n') == [
        (1, "error", 3),
        (2, ["b", "1"], 1),
        (3, ["c", "2"], 1),
    ]


def test_an_unterminated_quote_costs_its_own_record_only():
    assert _records('id,text\na,"open\nb,1\nc,"two\nlines"\n') == [
        (1, ["id", "text"], 1),
        (2, "error", 3),  # ran into line 4, whose quote it took for its closing one
        (3, ["b", "1"], 1),
        (4, ["c", "two\nlines"], 2),
    ]


def test_a_quote_closed_on_a_later_line_by_another_field_is_an_error_there():
    found = _records('a,"open\nb,"x" y\nc,2\n')
    assert found[0][:2] == (1, "error")
    assert found[1:] == [(2, "error", 1), (3, ["c", "2"], 1)]


def test_a_field_over_the_size_limit_is_an_error_and_reading_goes_on():
    limit = csv.field_size_limit()
    try:
        csv.field_size_limit(20)
        found = _records('a,"' + "x\n" * 30 + "b,1\n")
    finally:
        csv.field_size_limit(limit)
    assert found[0][:2] == (1, "error")
    assert found[-1] == (31, ["b", "1"], 1)  # read on from line 2: "x" rows, then b
