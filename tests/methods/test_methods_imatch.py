"""I-Match: the IDF band (hand-checked), signatures of real texts, streaming == one-shot fit."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import xxhash

from neardup.errors import ConfigError, InputError, SignatureError, WeakSignatureWarning
from neardup.fingerprints.shingles import (
    FingerprintBatch,
    fingerprint_batch,
    iter_fingerprint_batches,
)
from neardup.methods import get_method
from neardup.methods.base import Method, Signatures
from neardup.methods.idf import IdfModel
from neardup.methods.imatch import IMatch, IMatchConfig
from neardup.text.text_config import ShingleConfig, TextConfig

WORDS = TextConfig(shingle=ShingleConfig(size=1))

TEXT = (
    "The old harbour of the town is busy every morning. Fishing boats return with their "
    "catch, traders weigh the fish on the quay, and the market opens before the church bell "
    "rings. In winter the harbour freezes near the shore and the boats stay in the river."
)
PUNCTUATION_COPY = (
    "The old harbour of the town is busy every morning; fishing boats return with their "
    "catch — traders weigh the fish on the quay, and the market opens before the church "
    "bell rings! In the winter, the harbour freezes near the shore and the boats stay in "
    "the river."
)
UNRELATED = (
    "A compiler reads the source code of a program, checks its types and translates it into "
    "machine code. The optimizer removes dead code and the linker joins the object files "
    "into one program that the operating system can load and run."
)
COLLECTION = [
    TEXT,
    UNRELATED,
    "Every morning the market in the town square opens early; traders sell bread, fish and "
    "cheese, and the church bell rings at noon.",
    "In winter the river freezes and the boats of the fishing village stay on the shore "
    "until the ice melts in spring.",
    "The harbour master weighs every catch on the quay and writes the weight of the fish in "
    "his old book.",
    "The program reads its input, and the operating system loads the code of the compiler "
    "from the disk.",
    "Types help a compiler find errors in the source code before a program is run; the "
    "linker then joins the machine code of every object file.",
    "The town council met in the church to discuss the market, the harbour and the new road "
    "to the river.",
]


def make_batch(docs: list[list[int]]) -> FingerprintBatch:
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    values = np.array([f for d in docs for f in sorted(d)], dtype=np.uint64)
    return FingerprintBatch(values, offsets, np.ones(values.size, dtype=np.uint32))


def fitted(config: IMatchConfig | None = None) -> IMatch:
    return IMatch(config, WORDS).fit([fingerprint_batch(COLLECTION, WORDS)])


def signatures(method: IMatch, texts: list[str]) -> np.ndarray:
    return method.sketch(fingerprint_batch(texts, WORDS)).matrix()[:, 0]


# -- config and errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"low": 0.9, "high": 0.2}, "must not exceed"),
        ({"low": -0.1}, "low"),
        ({"high": 1.5}, "high"),
        ({"low": True}, "low"),
        ({"high": "0.9"}, "high"),
    ],
)
def test_config_validation(params, message):
    with pytest.raises(ConfigError, match=message):
        IMatchConfig(**params)


def test_registry_builds_imatch():
    method = get_method("imatch", text=WORDS, low=0.1)
    assert isinstance(method, IMatch)
    assert isinstance(method, Method)
    assert (method.name, method.code, method.estimate) == ("imatch", 7, "equality")
    assert method.config_id != get_method("imatch", text=WORDS).config_id
    assert method.config_id != get_method("imatch", low=0.1).config_id


def test_signatures_of_another_config_are_refused():
    method = IMatch(text=WORDS, idf=tiny_model())
    foreign = Signatures.fixed(np.array([[1], [1]], dtype=np.uint64), IMatch().config_id)
    with pytest.raises(SignatureError, match="config"):
        method.keys(foreign)
    with pytest.raises(SignatureError, match="config"):
        method.score_pairs(foreign, np.array([0]), np.array([1]))


def test_sketch_without_model_is_a_config_error():
    with pytest.raises(ConfigError, match="IdfModel"):
        IMatch(text=WORDS).sketch(fingerprint_batch([TEXT], WORDS))


def test_fitting_without_documents_is_an_error():
    with pytest.raises(InputError, match="no documents"):
        IMatch(text=WORDS).fit([])
    with pytest.raises(InputError, match="no documents"):
        IMatch(text=WORDS, idf=IdfModel.empty()).sketch(make_batch([[1]]))


# -- the band -----------------------------------------------------------------------------


def tiny_model() -> IdfModel:
    """Features 101..110 with df 1..10 in a collection of 10 documents."""
    return IdfModel(np.arange(101, 111, dtype=np.uint64), np.arange(1, 11, dtype=np.uint32), 10)


def test_band_selection_by_hand():
    # idf(df) = ln(11 / (1 + df)) + 1: df 1 → 2.705 (= M), 2 → 2.299, 3 → 2.012, 4 → 1.788,
    # 5 → 1.606, 6 → 1.452, 7 → 1.318, ..., unseen (df 0) → 3.398.
    # Band [0.5 M, 0.9 M] = [1.352, 2.434] keeps df 2..6, i.e. features 102..106.
    method = IMatch(IMatchConfig(low=0.5, high=0.9), idf=tiny_model())
    top = math.log(11 / 2) + 1
    assert method.band() == pytest.approx((0.5 * top, 0.9 * top))
    features = np.array([999, *range(101, 111)], dtype=np.uint64)
    kept = features[method.in_band(features)]
    assert kept.tolist() == [102, 103, 104, 105, 106]

    sig = method.sketch(make_batch([features.tolist()])).matrix()[0, 0]
    want = xxhash.xxh3_64_intdigest(np.array(kept, dtype="<u8").tobytes())
    assert int(sig) == want


def test_full_band_keeps_every_seen_feature_and_no_unseen_one():
    method = IMatch(IMatchConfig(low=0.0, high=1.0), idf=tiny_model())
    features = np.array([5, 101, 110, 2**63], dtype=np.uint64)
    assert method.in_band(features).tolist() == [False, True, True, False]


def test_empty_batch_and_all_empty_documents():
    method = IMatch(idf=tiny_model())
    assert len(method.sketch(make_batch([]))) == 0
    with pytest.warns(WeakSignatureWarning, match="2 of 2"):
        sigs = method.sketch(make_batch([[], [999]]))
    assert sigs.matrix()[:, 0].tolist() == [0, 0]
    assert method.keys(sigs).docs.size == 0


def test_document_without_band_features_gets_zero_and_no_key():
    method = IMatch(IMatchConfig(low=0.5, high=0.9), idf=tiny_model())
    batch = make_batch([[101, 110, 999], [102], [], [103, 104]])
    with pytest.warns(WeakSignatureWarning, match="2 of 4 documents") as record:
        sigs = method.sketch(batch)
    assert len(record) == 1
    values = sigs.matrix()[:, 0]
    assert values[0] == 0
    assert values[2] == 0
    assert np.all(values[[1, 3]] != 0)
    keys = method.keys(sigs)
    assert keys.docs.tolist() == [1, 3]
    assert keys.keys.tolist() == values[[1, 3]].tolist()
    assert method.score(sigs[0], sigs[2]) == 0.0  # two empty signatures match nothing
    assert method.score(sigs[1], sigs[1]) == 1.0
    got = method.score_pairs(sigs, np.array([0, 1, 1]), np.array([2, 1, 3]))
    assert got.tolist() == [0.0, 1.0, 0.0]


# -- real texts ---------------------------------------------------------------------------


def test_copy_with_other_punctuation_and_stop_words_matches():
    method = fitted()
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeakSignatureWarning)
        text, copy, unrelated = signatures(method, [TEXT, PUNCTUATION_COPY, UNRELATED])
    assert text == copy != 0
    assert unrelated not in (0, text)
    sigs = Signatures.fixed(np.array([[text], [copy], [unrelated]], np.uint64), method.config_id)
    assert method.score_pairs(sigs, np.array([0, 0]), np.array([1, 2])).tolist() == [1.0, 0.0]
    keys = method.keys(sigs)
    assert keys.keys[0] == keys.keys[1] != keys.keys[2]


def test_a_changed_band_word_changes_the_signature():
    method = fitted()
    edited = TEXT.replace("market", "bakery")  # "market" is in the band: df 3 of 8
    assert method.in_band(fingerprint_batch(["market"], WORDS).values).all()
    text, other = signatures(method, [TEXT, edited])
    assert text != other


def test_streaming_fit_gives_the_same_signatures():
    at_once = IMatch(text=WORDS).fit([fingerprint_batch(COLLECTION, WORDS)])
    streamed = IMatch(text=WORDS).fit(iter_fingerprint_batches(iter(COLLECTION), WORDS, 3))
    assert streamed.idf == at_once.idf
    texts = [*COLLECTION, PUNCTUATION_COPY]
    assert signatures(streamed, texts).tolist() == signatures(at_once, texts).tolist()


def test_default_four_word_shingles_keep_little():
    """With 4-shingles almost every feature is rare, so the band is nearly empty."""
    method = IMatch().fit([fingerprint_batch(COLLECTION)])
    prints = fingerprint_batch([TEXT])
    kept = method.in_band(prints.values).sum()
    assert kept < 0.2 * prints.values.size
