"""The sort-based distinct values equal NumPy's; ragged arrays' segments gathered."""

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from neardup.util.arrays import gather_segments, release_mapped_pages, unique, unique_counts

values = st.one_of(
    arrays(np.uint64, st.integers(0, 200), elements=st.integers(0, 2**64 - 1)),
    arrays(np.int64, st.integers(0, 200), elements=st.integers(-50, 50)),
)


@given(values)
def test_unique_equals_numpy(array):
    assert np.array_equal(unique(array), np.unique(array))
    assert unique(array).dtype == array.dtype


@given(values)
def test_unique_counts_equal_numpy(array):
    got, counts = unique_counts(array)
    want, want_counts = np.unique(array, return_counts=True)
    assert np.array_equal(got, want)
    assert np.array_equal(counts, want_counts)


def test_pair_codes_round_trip_and_sort_by_left_then_right():
    from neardup.util.arrays import pair_codes, split_pair_codes

    left = np.array([3, 0, 3, 2**31], dtype=np.int64)
    right = np.array([1, 7, 0, 5], dtype=np.int64)
    codes = pair_codes(left, right)
    back = split_pair_codes(codes)
    assert back[0].tolist() == left.tolist()
    assert back[1].tolist() == right.tolist()
    order = np.argsort(codes)
    assert list(zip(left[order].tolist(), right[order].tolist(), strict=True)) == sorted(
        zip(left.tolist(), right.tolist(), strict=True)
    )


def test_released_pages_of_a_mapped_file_leave_its_values_and_resident_memory(tmp_path):
    """Pages of a memory-mapped file (viewed through slices) leave the process's resident
    memory and read back unchanged; an array in memory is left alone."""
    path = tmp_path / "values.u64"
    np.arange(1 << 21, dtype=np.uint64).tofile(path)  # 16 MiB
    mapped = np.ascontiguousarray(np.memmap(path, dtype=np.uint64, mode="r")[10:])

    def resident_file_kb() -> int:
        status = Path("/proc/self/status").read_text()
        return int(status.split("RssFile:")[1].split()[0])

    assert int(mapped.sum()) == int(np.arange(10, 1 << 21, dtype=np.uint64).sum())
    before = resident_file_kb()
    release_mapped_pages(mapped)
    assert resident_file_kb() < before - 8_000
    assert int(mapped[-1]) == (1 << 21) - 1
    release_mapped_pages(np.arange(3))  # not mapped: nothing happens


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=40), st.data())
def test_gather_segments_gives_each_document_its_sources_segment(sizes, data):
    """Any rows (entries taken one by one), and every row in order with a few repeated (a
    batch with a few copies: runs of rows copied as slices)."""
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    values = np.arange(offsets[-1], dtype=np.uint64) * 7
    rows = st.integers(0, len(sizes) - 1)
    if data.draw(st.booleans()):
        chosen = data.draw(st.lists(rows, max_size=40))
    else:
        chosen = sorted([*range(len(sizes)), *data.draw(st.lists(rows, max_size=3))])
    source = np.array(chosen, np.int64)
    gather, spread = gather_segments(offsets, source)
    gathered = gather(values)
    for d, s in enumerate(source.tolist()):
        assert (
            gathered[spread[d] : spread[d + 1]].tolist()
            == values[offsets[s] : offsets[s + 1]].tolist()
        )
    assert spread.dtype == offsets.dtype
    assert spread[-1] == gathered.size
    assert gathered.dtype == values.dtype
