"""Labels for summary keys (neardup.engines.local.labels)."""

import pytest

from neardup.engines.local.labels import human_label


@pytest.mark.parametrize(
    ("key", "label"),
    [
        ("timings_seconds", "Timings (seconds)"),
        ("empty_ids", "Empty documents (first ids)"),
        ("verified_pairs", "Verified pairs"),
        ("documents", "Documents"),
        ("size_bytes", "Size (bytes)"),
        ("seconds", "Seconds"),
        ("", ""),
    ],
)
def test_human_label(key, label):
    assert human_label(key) == label
