"""The lines of the outputs the Spark driver writes itself (the writing: test_engine_spark)."""

from __future__ import annotations

import pyarrow as pa

from neardup.engines.spark.driver_files import json_lines


def test_json_lines_are_the_rows_in_column_order_with_nulls():
    table = pa.table({"b": ["x", None], "a": [1.5, 2.0], "ids": [["p", "q"], []]})
    assert json_lines(table) == (
        b'{"b":"x","a":1.5,"ids":["p","q"]}\n{"b":null,"a":2.0,"ids":[]}\n'
    )
    assert json_lines(table.slice(0, 0)) == b""
