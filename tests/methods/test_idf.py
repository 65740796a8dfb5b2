"""IdfModel: hand-computed frequencies, streaming == one-shot fitting, storage round-trips."""

from __future__ import annotations

import functools
import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import InputError
from neardup.fingerprints.shingles import FingerprintBatch
from neardup.methods import idf as idf_module
from neardup.methods.idf import FORMAT_VERSION, IdfModel


def make_batch(docs: list[list[int]]) -> FingerprintBatch:
    """A FingerprintBatch of documents given as feature lists (repeats become counts)."""
    values, counts, offsets = [], [], [0]
    for doc in docs:
        feats, cnt = np.unique(np.asarray(doc, dtype=np.uint64), return_counts=True)
        values.append(feats)
        counts.append(cnt)
        offsets.append(offsets[-1] + feats.size)
    return FingerprintBatch(
        np.concatenate([np.empty(0, np.uint64), *values]).astype(np.uint64),
        np.asarray(offsets, dtype=np.int64),
        np.concatenate([np.empty(0, np.uint32), *counts]).astype(np.uint32),
    )


def random_batches(seed: int, n_batches: int, docs_per_batch: int) -> list[FingerprintBatch]:
    rng = np.random.default_rng(seed)
    return [
        make_batch([list(rng.integers(0, 300, rng.integers(0, 40))) for _ in range(docs_per_batch)])
        for _ in range(n_batches)
    ]


def test_hand_computed_frequencies_and_idf():
    model = IdfModel.fit([make_batch([[1, 2, 3, 3], [2, 3], [3]])])
    assert model.n_docs == 3
    assert model.features.tolist() == [1, 2, 3]
    assert model.df.tolist() == [1, 2, 3]
    assert model.doc_freq(np.array([3, 99, 1], dtype=np.uint64)).tolist() == [3, 0, 1]
    got = model.idf(np.array([1, 2, 3, 99], dtype=np.uint64))
    want = [math.log(4 / 2) + 1, math.log(4 / 3) + 1, 1.0, math.log(4) + 1]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert model.max_idf() == pytest.approx(math.log(2) + 1)
    assert len(model) == 3


def test_documents_without_features_still_count():
    model = IdfModel.fit([make_batch([[7], [], []])])
    assert model.n_docs == 3
    assert model.df.tolist() == [1]


def test_empty_model():
    model = IdfModel.empty()
    assert model.n_docs == 0
    assert len(model) == 0
    assert model.idf(np.array([5], dtype=np.uint64)).tolist() == [1.0]
    assert model.max_idf() == 1.0
    assert IdfModel.fit([]) == model


def test_update_returns_new_model_and_leaves_old_unchanged():
    first = IdfModel.fit([make_batch([[1, 5]])])
    before = first.to_bytes()
    second = first.update(make_batch([[5, 9], [0]]))
    assert first.to_bytes() == before
    assert second.n_docs == 3
    assert second.features.tolist() == [0, 1, 5, 9]
    assert second.df.tolist() == [1, 1, 2, 1]


def test_streaming_fit_equals_one_shot_fit_and_updates(monkeypatch):
    batches = random_batches(seed=7, n_batches=12, docs_per_batch=25)
    everything = make_batch([batch[d].tolist() for batch in batches for d in range(len(batch))])
    one_shot = IdfModel.fit([everything])
    assert IdfModel.fit(iter(batches)) == one_shot
    assert functools.reduce(IdfModel.update, batches, IdfModel.empty()) == one_shot
    monkeypatch.setattr(idf_module, "_PENDING_MERGE", 50)  # force many pooled merges
    assert IdfModel.fit(iter(batches)) == one_shot
    halves = IdfModel.fit(batches[:5]).merge(IdfModel.fit(batches[5:]))
    assert halves == one_shot
    brute: dict[int, int] = {}
    for batch in batches:
        for d in range(len(batch)):
            for f in batch[d].tolist():
                brute[f] = brute.get(f, 0) + 1
    assert one_shot.features.tolist() == sorted(brute)
    assert one_shot.df.tolist() == [brute[f] for f in sorted(brute)]


def test_to_bytes_layout():
    model = IdfModel.fit([make_batch([[1, 2], [2]])])
    blob = model.to_bytes()
    assert blob[:4] == b"NDIF"
    assert struct.unpack_from("<HHQQ", blob, 4) == (FORMAT_VERSION, 0, 2, 2)
    assert struct.unpack_from("<2Q2I", blob, 24) == (1, 2, 1, 2)
    assert len(blob) == 24 + 12 * 2


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.lists(st.integers(0, 2**64 - 1), max_size=12), max_size=6),
        max_size=4,
    )
)
def test_round_trip(batches):
    model = IdfModel.fit(make_batch(docs) for docs in batches)
    again = IdfModel.from_bytes(model.to_bytes())
    assert again == model
    assert again.fingerprint == model.fingerprint
    assert again.to_bytes() == model.to_bytes()


def test_fingerprint_tracks_content():
    a = IdfModel.fit([make_batch([[1, 2]])])
    b = a.update(make_batch([[]]))  # one more document, no new features
    assert len(a.fingerprint) == 16
    assert a.fingerprint == IdfModel.fit([make_batch([[2, 1]])]).fingerprint
    assert a.fingerprint != b.fingerprint


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (b"ND", "bytes"),
        (b"XXXX" + bytes(20), "magic"),
        (b"NDIF" + struct.pack("<HHQQ", 99, 0, 0, 0), "version 99"),
        (b"NDIF" + struct.pack("<HHQQ", FORMAT_VERSION, 0, 1, 1) + bytes(8), "truncated"),
        (
            b"NDIF" + struct.pack("<HHQQ2Q2I", FORMAT_VERSION, 0, 5, 2, 9, 3, 1, 1),
            "sorted",
        ),
        (b"NDIF" + struct.pack("<HHQQQI", FORMAT_VERSION, 0, 1, 1, 4, 2), "frequencies"),
    ],
)
def test_from_bytes_rejects_bad_input(blob, message):
    with pytest.raises(InputError, match=message):
        IdfModel.from_bytes(blob)


def test_constructor_validates():
    with pytest.raises(InputError, match="n_docs"):
        IdfModel(np.array([1], np.uint64), np.array([1], np.uint32), -1)
    with pytest.raises(InputError, match="one length"):
        IdfModel(np.array([1, 2], np.uint64), np.array([1], np.uint32), 3)
