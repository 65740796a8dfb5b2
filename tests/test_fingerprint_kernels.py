"""The fast fingerprint kernels pinned to simple reference implementations.

``unique_per_doc`` (bucket sort of uniform hashes, quicksort fallback) against a per-document
``arrays.unique_counts``, for uniform, clustered, duplicated and crc-like (32-bit) values.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._kernels.shingle import unique_per_doc
from neardup.arrays import unique_counts

# Values as the hashes are (uniform 64-bit), as crc32 gives them (32 bits), clustered (a few
# high bits only: every value in one bucket, the fallback), and tiny (many repeats).
_VALUES = st.one_of(
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**32 - 1),
    st.integers(0, 255).map(lambda x: x << 56),
    st.integers(0, 3),
)
_DOCS = st.lists(st.lists(_VALUES, max_size=120), max_size=8)


def _reference(docs: list[list[int]]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    pairs = [unique_counts(np.array(doc, dtype=np.uint64)) for doc in docs]
    return [v for v, _ in pairs], [c for _, c in pairs]


def _layout(docs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    flat = np.array([v for doc in docs for v in doc], dtype=np.uint64)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(doc) for doc in docs])
    return flat, offsets


@settings(max_examples=300, deadline=None)
@given(_DOCS, st.booleans())
def test_unique_per_doc_equals_sorted_distinct_values_with_counts(docs, overwrite):
    flat, offsets = _layout(docs)
    before = flat.copy()
    values, new_offsets, counts = unique_per_doc(flat, offsets, overwrite)
    want_values, want_counts = _reference(docs)
    assert values.dtype == np.uint64
    assert counts.dtype == np.uint32
    assert new_offsets.tolist() == [0, *np.cumsum([v.size for v in want_values]).tolist()]
    for d in range(len(docs)):
        lo, hi = new_offsets[d], new_offsets[d + 1]
        assert values[lo:hi].tolist() == want_values[d].tolist()
        assert counts[lo:hi].tolist() == want_counts[d].tolist()
    if not overwrite:
        assert np.array_equal(flat, before)  # the input is left alone unless allowed


def test_unique_per_doc_on_long_uniform_and_clustered_documents():
    """Long segments take the bucket path (uniform) and the quicksort fallback (clustered)."""
    rng = np.random.default_rng(7)
    uniform = rng.integers(0, 2**64, size=5000, dtype=np.uint64)
    repeated = np.concatenate([uniform[:3000], uniform[:2000]])
    clustered = rng.integers(0, 2**40, size=4000, dtype=np.uint64)
    clustered[:5] = np.uint64(2**64 - 1)  # outliers stretch the range: the rest in bucket 0
    docs = [uniform, repeated, clustered, uniform[:1], uniform[:0]]
    flat = np.concatenate(docs)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([d.size for d in docs])
    values, new_offsets, counts = unique_per_doc(flat, offsets)
    for d, doc in enumerate(docs):
        want, times = unique_counts(doc)
        lo, hi = new_offsets[d], new_offsets[d + 1]
        assert np.array_equal(values[lo:hi], want)
        assert np.array_equal(counts[lo:hi], times)
