"""Conformance of every signature method to the Method protocol (neardup.methods.base).

One suite, parametrized over ``METHOD_NAMES``: each method is built by name, fed real
fingerprints of English texts, and must sketch, key, score, serialize and refuse foreign
signatures in the same way, so that one index, store and evaluation serve them all.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from neardup.errors import ConfigError, SignatureError, WeakSignatureWarning
from neardup.fingerprints.shingles import FingerprintBatch, fingerprint_batch
from neardup.methods import (
    METHOD_NAMES,
    REGISTRY,
    Keys,
    Method,
    Signatures,
    get_method,
    method_classes,
)
from neardup.methods.base import deserialize, serialize
from neardup.text.text_config import ShingleConfig, TextConfig

FERRY = (
    "The morning ferry left the harbour on Tuesday for the first time in a week, after a storm "
    "that had closed the port, flooded the lower streets of the old town and torn the roof off "
    "the fish market. Captain Ellen Moor said the crossing was calm and that the passengers "
    "applauded when the island came into view through the thinning fog. Shopkeepers on the "
    "island had been waiting for fresh bread, newspapers, medicine and spare parts for the "
    "generators, which ran day and night while the power lines were down. The harbour master "
    "warned that the timetable would remain reduced until engineers inspected the damaged "
    "pier, and that cars would be carried only on the afternoon sailing. Volunteers from the "
    "lifeboat station cleared driftwood from the slipway, while children collected shells "
    "thrown high onto the promenade by the waves. The mayor thanked the crews, promised money "
    "to repair the market roof before the summer festival, and asked residents to report "
    "cracked walls, blocked drains and fallen cables to the council office by Friday evening. "
    "Fishermen, who had kept their boats tied up in the inner basin for eight days, counted "
    "broken nets and lost lobster pots, and several said the season would now start late. The "
    "insurance assessor arrived on the second sailing with a clipboard and a borrowed bicycle, "
    "and spent the afternoon photographing roofs, sheds and the flooded cellar of the bakery. "
    "At the school, teachers dried books on radiators and moved lessons into the church hall, "
    "where the organist played between classes to keep the children cheerful. By the evening "
    "the lights of the lighthouse were burning again, and the first supply lorry rolled off "
    "the ramp carrying diesel, tinned food, bottled water and a crate of oranges for the "
    "hospital ward, where nurses had worked double shifts since the weekend."
)
FERRY_EDITED = (
    FERRY.replace("Tuesday", "Wednesday")
    .replace("Ellen Moor", "Ellen Moore")
    .replace("by Friday evening", "before the weekend")
)
ORCHARD = (
    "Growing apples in a cold valley demands patience, careful pruning and a good eye for "
    "frost. Old growers plant their orchards on gentle slopes, because cold air flows downhill "
    "like water and settles in hollows, where it kills blossoms in late spring. Each winter "
    "the trees are pruned to an open centre so that sunlight reaches every branch and the "
    "fruit ripens evenly; dead wood is removed, crossing limbs are cut, and vigorous upright "
    "shoots are bent down to encourage flowering spurs. Bees from neighbouring farms pollinate "
    "the flowers, and many orchards keep a few crab apple trees among the rows because they "
    "bloom for weeks and provide pollen for several varieties. In autumn the harvest is picked "
    "by hand, sorted by size and colour, and stored in cool barns where the temperature stays "
    "just above freezing. A well kept tree can bear fruit for more than fifty years, and some "
    "families still pick from trees planted by their great grandparents a century ago. "
    "Diseases such as scab and canker spread quickly in wet summers, so growers walk the rows "
    "after every storm, remove infected leaves and paint fresh wounds on the bark. Some farms "
    "have returned to old methods, letting sheep graze between the trees to keep the grass "
    "short and to eat fallen fruit that would otherwise shelter pests through the winter. "
    "Grafting remains the only way to keep a variety true: a twig from a favourite tree is "
    "joined to a hardy rootstock, wrapped with tape and waxed, and after a few seasons it "
    "bears exactly the same apples as its parent. Cider makers prize bitter sharp varieties "
    "that nobody would eat from the hand, pressing them in October and leaving the juice to "
    "ferment slowly in oak barrels until the blossoms return in May."
)
TELESCOPE = (
    "Astronomers using a new radio telescope in the southern desert have mapped faint hydrogen "
    "clouds between distant galaxies, tracing filaments of gas that stretch across millions of "
    "light years. The instrument combines signals from hundreds of small dishes spread over "
    "many kilometres of dry plateau, where the air is thin and interference from phones and "
    "television transmitters is rare. Computers in a nearby building correlate the signals in "
    "real time, producing several petabytes of data each year that are shipped to research "
    "centres around the world. The team said the filaments confirm predictions that most of "
    "the ordinary matter in the universe lies outside galaxies, in a diffuse web heated by "
    "shock waves. Further observations will measure how magnetic fields thread the web and "
    "whether the gas slowly falls into clusters, feeding the formation of new stars. Students "
    "from local schools visited the site last month, and several asked to join the engineers "
    "who maintain the antennas during the long winter nights. "
    "Building the array took nine years, because every cable trench had to avoid fragile "
    "archaeological sites and the nesting grounds of a rare desert lark. Power comes from a "
    "field of solar panels and a bank of batteries, so that no diesel generator disturbs the "
    "quiet radio sky at night. Engineers cool the receivers with liquid helium, and a small "
    "workshop on site repairs amplifiers that are damaged by dust storms each spring. The "
    "observatory publishes its catalogues openly, and amateur groups have already found "
    "unusual pulsars hidden in the archived recordings. Next year a second phase will add "
    "dishes on the neighbouring ridge, doubling the resolution and allowing the first maps "
    "of individual star forming regions inside nearby dwarf galaxies."
)
RECIPE = (
    "To bake a rye loaf with a crisp crust, start the sourdough the evening before: mix a "
    "spoonful of mature starter with warm water and dark rye flour, cover the bowl and leave "
    "it in a warm corner of the kitchen overnight. In the morning the sponge should be bubbly "
    "and smell pleasantly sour. Add the remaining flour, salt, caraway seeds and a little "
    "honey, then knead briefly with wet hands, because rye dough is sticky and never becomes "
    "elastic like wheat dough. Shape the loaf on a floured board, place it in a proofing "
    "basket dusted with bran and let it rise until cracks appear on the surface. Bake in a "
    "very hot oven with a tray of boiling water on the bottom shelf for the first fifteen "
    "minutes, then lower the heat and bake for another hour. Cool the bread on a rack and "
    "wait a full day before slicing it, since the crumb continues to set as the loaf rests "
    "and the flavour deepens overnight. "
    "If the crust comes out too pale, brush the loaf with salted water ten minutes before the "
    "end of baking, or add a spoonful of malt syrup to the dough next time. A heavy cast iron "
    "pot with a lid gives a similar effect to a professional steam oven, trapping moisture "
    "around the bread while it expands. Many bakers keep their starter in the refrigerator "
    "during the week and feed it only on Friday, which slows the yeasts and makes the flavour "
    "sharper. Old recipes from the northern villages add grated potato, fennel or a handful "
    "of cracked wheat, and the bread was traditionally baked once a fortnight in a communal "
    "oven heated with birch logs. Wrapped in linen, a rye loaf stays fresh for a week and "
    "tastes best with butter, smoked fish, pickled cucumbers or strong cheese."
)
# documents 0 and 1 are identical, 2 is a light rewrite of them, 3 and 5 are identical
TEXTS = [FERRY, FERRY, FERRY_EDITED, ORCHARD, TELESCOPE, ORCHARD, RECIPE]
IDENTICAL = [(0, 1), (3, 5)]
IDENTICAL_SCORE = {"resemblance": 1.0, "containment": 1.0, "equality": 1.0, "hamming": 0.0}
OTHER_TEXT = TextConfig(shingle=ShingleConfig(size=3))

pytestmark = pytest.mark.filterwarnings("ignore::neardup.errors.WeakSignatureWarning")


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def prints() -> FingerprintBatch:
    return fingerprint_batch(TEXTS)


@pytest.fixture(scope="module")
def other_prints() -> FingerprintBatch:
    return fingerprint_batch(TEXTS, OTHER_TEXT)


def build(name: str, batch: FingerprintBatch, text: TextConfig | None = None, **params) -> Method:
    """A method by name, fitted on ``batch`` first when it needs collection statistics."""
    method = get_method(name, text, **params)
    if hasattr(method, "fit"):
        method.fit([batch])
    return method


@pytest.fixture(scope="module", params=METHOD_NAMES)
def name(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def method(name, prints) -> Method:
    return build(name, prints)


@pytest.fixture(scope="module")
def sigs(method, prints) -> Signatures:
    return method.sketch(prints)


# ---------------------------------------------------------------- the protocol


def test_is_a_method(name, method):
    cls, config_cls = method_classes(name)
    assert isinstance(method, Method)
    assert isinstance(method, cls)
    assert method.name == name
    assert method.estimate in IDENTICAL_SCORE
    assert isinstance(method.code, int)
    assert 1 <= method.code <= 255
    assert dataclasses.is_dataclass(config_cls)
    assert config_cls.__dataclass_params__.frozen


def test_summary_is_one_line(method):
    summary = type(method).summary
    assert isinstance(summary, str)
    assert summary.strip()
    assert "\n" not in summary


def test_codes_are_unique(name, method):
    """Another loadable method must not claim this one's header byte."""
    for other in METHOD_NAMES:
        if other == name:
            continue
        try:
            other_cls, _ = method_classes(other)
        except ImportError:  # not written yet: nothing to collide with
            continue
        assert other_cls.code != method.code, f"{name} and {other} share code {method.code}"


def test_one_signature_per_document(method, sigs):
    assert isinstance(sigs, Signatures)
    assert len(sigs) == len(TEXTS)
    assert sigs.config_id == method.config_id
    assert sigs.values.dtype == np.uint64
    assert sigs.offsets.dtype == np.int64
    assert sigs.offsets[0] == 0
    assert sigs.offsets[-1] == sigs.values.size
    assert np.all(np.diff(sigs.offsets) >= 0)
    assert all(sigs[d].size > 0 for d in range(len(TEXTS))), "texts long enough for any method"


def test_sketch_is_deterministic_and_batch_independent(name, method, sigs):
    """A document's signature does not depend on the batch it came in (incremental adds)."""
    again = method.sketch(fingerprint_batch(TEXTS))
    np.testing.assert_array_equal(again.values, sigs.values)
    np.testing.assert_array_equal(again.offsets, sigs.offsets)
    alone = method.sketch(fingerprint_batch([TEXTS[4]]))
    np.testing.assert_array_equal(alone[0], sigs[4])


def test_identical_texts_score_identical(method, sigs):
    expected = IDENTICAL_SCORE[method.estimate]
    for i, j in IDENTICAL:
        assert method.score(sigs[i], sigs[j]) == pytest.approx(expected)
        assert method.score(sigs[i], sigs[i]) == pytest.approx(expected)
        if hasattr(method, "containment"):
            assert method.containment(sigs[i], sigs[j]) == pytest.approx(1.0)
    left, right = np.array(IDENTICAL).T
    np.testing.assert_allclose(method.score_pairs(sigs, left, right), expected)


def test_different_texts_do_not_score_identical(method, sigs):
    identical = IDENTICAL_SCORE[method.estimate]
    assert method.score(sigs[0], sigs[6]) != pytest.approx(identical)
    assert method.score(sigs[3], sigs[4]) != pytest.approx(identical)


def test_score_pairs_agrees_with_score(method, sigs):
    left, right = (a.astype(np.int64) for a in np.triu_indices(len(TEXTS)))
    got = method.score_pairs(sigs, left, right)
    assert isinstance(got, np.ndarray)
    assert got.dtype == np.float64
    assert got.shape == left.shape
    expected = [method.score(sigs[i], sigs[j]) for i, j in zip(left, right, strict=True)]
    np.testing.assert_allclose(got, expected)


def test_keys_of_identical_texts_intersect(method, sigs):
    keys = method.keys(sigs)
    assert isinstance(keys, Keys)
    assert keys.keys.dtype == np.uint64
    assert keys.docs.dtype == np.int64
    assert keys.docs.shape == keys.keys.shape
    assert keys.docs.size == 0 or 0 <= keys.docs.min() <= keys.docs.max() < len(TEXTS)
    for i, j in IDENTICAL:
        shared = np.intersect1d(keys.keys[keys.docs == i], keys.keys[keys.docs == j])
        assert shared.size > 0


def test_batch_keys_are_the_keys_of_the_sketch(method, sigs, prints):
    # MinHash computes only the minima its bands use: the same keys, in the same order
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakSignatureWarning)
        direct = method.batch_keys(prints)
    expected = method.keys(sigs)
    np.testing.assert_array_equal(direct.docs, expected.docs)
    np.testing.assert_array_equal(direct.keys, expected.keys)


@pytest.mark.parametrize("threshold", [0.5, 0.8, 0.95])
@pytest.mark.parametrize("measure", ["resemblance", "containment"])
def test_minhash_batch_keys_for_every_banding(prints, threshold, measure):
    method = get_method("minhash", threshold=threshold, measure=measure)
    assert method.bands * method.rows < method.config.num_perm  # fewer minima computed
    direct = method.batch_keys(prints)
    expected = method.keys(method.sketch(prints))
    np.testing.assert_array_equal(direct.docs, expected.docs)
    np.testing.assert_array_equal(direct.keys, expected.keys)


def test_every_signature_round_trips_through_bytes(method, sigs):
    for d in range(len(sigs)):
        blob = serialize(method.code, method.config_id, sigs[d])
        code, config_id, values = deserialize(blob)
        assert (code, config_id) == (method.code, method.config_id)
        assert values.dtype == np.uint64
        np.testing.assert_array_equal(values, sigs[d])
    i, j = IDENTICAL[0]
    back = deserialize(serialize(method.code, method.config_id, sigs[i]))[2]
    assert method.score(back, sigs[j]) == pytest.approx(IDENTICAL_SCORE[method.estimate])


@given(values=arrays(np.uint64, st.integers(0, 200)))
@settings(max_examples=50, deadline=None)
def test_any_values_round_trip_through_bytes(method, values):
    code, config_id, back = deserialize(serialize(method.code, method.config_id, values))
    assert (code, config_id) == (method.code, method.config_id)
    np.testing.assert_array_equal(back, values)


def test_other_text_config_signatures_are_refused(name, method, sigs, other_prints):
    other = build(name, other_prints, OTHER_TEXT)
    assert other.config_id != method.config_id
    foreign = other.sketch(other_prints)
    assert foreign.config_id == other.config_id
    with pytest.raises(SignatureError):
        method.score_pairs(foreign, np.array([0]), np.array([1]))
    with pytest.raises(SignatureError):
        method.keys(foreign)
    with pytest.raises(SignatureError):
        sigs.require_same_config(foreign)


def test_other_parameter_signatures_are_refused(name, method, prints):
    for params in parameter_variants(name):
        other = build(name, prints, **params)
        foreign = other.sketch(prints)
        with pytest.raises(SignatureError):
            method.score_pairs(foreign, np.array([0]), np.array([1]))


def test_config_id_changes_with_every_parameter(name, method):
    variants = parameter_variants(name)
    _, config_cls = method_classes(name)
    if dataclasses.fields(config_cls):
        assert variants, f"no parameter of {config_cls.__name__} could be changed"
    for params in variants:
        assert get_method(name, **params).config_id != method.config_id, params
    assert get_method(name, OTHER_TEXT).config_id != get_method(name).config_id


def test_config_id_is_stable(name, method, config_ids_in_a_subprocess):
    assert len(method.config_id) == 16
    int(method.config_id, 16)
    assert get_method(name).config_id == get_method(name).config_id
    assert config_ids_in_a_subprocess[name] == get_method(name).config_id


def test_unknown_parameter_is_a_config_error(name):
    with pytest.raises(ConfigError, match="bogus"):
        get_method(name, bogus=1)


def test_registry_names_its_class(name):
    module, cls_name, config_name = REGISTRY[name]
    cls, config_cls = method_classes(name)
    assert (cls.__module__, cls.__name__, config_cls.__name__) == (module, cls_name, config_name)


# ---------------------------------------------------------------- helpers


def parameter_variants(name: str) -> list[dict]:
    """Valid one-parameter changes of a method's defaults (ints, floats, bools, strings).

    Changes the method rejects (ConfigError) are skipped: a change that is allowed must
    change the config id, which is what the tests check.
    """
    _, config_cls = method_classes(name)
    default = config_cls()
    variants = []
    for field in dataclasses.fields(config_cls):
        for candidate in _changed_values(getattr(default, field.name)):
            try:
                config_cls(**{field.name: candidate})
            except ConfigError:
                continue
            variants.append({field.name: candidate})
            break
    return variants


def _changed_values(value: object) -> list[object]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value * 2, value // 2, value - 1]
    if isinstance(value, float):
        return [value / 2, value * 0.9, value + 0.05, value - 0.05]
    return []


@pytest.fixture(scope="session")
def config_ids_in_a_subprocess() -> dict[str, str | None]:
    """Default config ids computed in a fresh interpreter with another hash seed."""
    script = (
        "import json\n"
        "from neardup.methods import METHOD_NAMES, get_method\n"
        "ids = {}\n"
        "for name in METHOD_NAMES:\n"
        "    try:\n"
        "        ids[name] = get_method(name).config_id\n"
        "    except Exception as exc:\n"
        "        ids[name] = repr(exc)\n"
        "print(json.dumps(ids))\n"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


# Methods fitted on collection statistics are left out: on a collection of seven texts most
# features are rare, so a weak signature there says nothing about the texts.
UNFITTED = [n for n in METHOD_NAMES if not hasattr(get_method(n), "fit")]


@pytest.mark.parametrize("method_name", UNFITTED)
def test_texts_are_not_weak_for_unfitted_methods(method_name, prints):
    """The suite's texts are long enough that no method should warn about them."""
    method = get_method(method_name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeakSignatureWarning)
        method.sketch(prints)
