import pytest

from neardup.dedup.compare import compare_texts
from neardup.errors import EmptyTextError
from neardup.methods import METHOD_NAMES, get_method
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

ORIGINAL = (
    "The committee met on Tuesday to review the budget for the new library. Members agreed "
    "that the reading room needs better lighting, that the children's corner should move "
    "closer to the entrance, and that the archive of local newspapers must be digitised "
    "before the end of the year. The chair thanked the volunteers who had catalogued the "
    "donated books over the summer and asked the treasurer to publish the accounts online."
)
COPY = ORIGINAL.replace("Tuesday", "Wednesday").replace("online", "on the website")
OTHER = (
    "Heavy snow closed the mountain pass for the third time this winter, and the ferry "
    "company added an evening crossing so that lorries could reach the port before dawn."
)
WORDS = TextConfig(CanonConfig(stopwords=False), ShingleConfig(size=3))
STOP_WORDS = TextConfig(CanonConfig(stopwords=True))


def test_exact_measures_and_passages():
    result = compare_texts(ORIGINAL, COPY, WORDS)
    assert 0.6 < result.overlap.resemblance < 1.0
    assert result.estimate is None
    assert any("reading room needs better lighting" in p for p in result.passages_a.passages())
    assert result.as_dict()["method"] == "full"


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_every_method_gives_an_estimate_that_tells_copy_from_other(name):
    method = get_method(name, WORDS)
    near = compare_texts(ORIGINAL, COPY, WORDS, method=method).estimate
    far = compare_texts(ORIGINAL, OTHER, WORDS, method=get_method(name, WORDS)).estimate
    assert near.method == name
    if near.kind == "hamming":
        assert near.estimate < far.estimate
        assert near.as_dict()["hamming"] == int(near.estimate)
    elif near.kind == "equality":
        assert far.estimate == 0.0
    else:
        assert near.estimate > far.estimate
        assert far.estimate < 0.1


def test_full_method_estimate_is_the_exact_value():
    result = compare_texts(ORIGINAL, COPY, WORDS, method=get_method("full", WORDS))
    assert result.estimate.estimate == pytest.approx(result.overlap.resemblance)
    assert result.estimate.shares_key
    assert result.estimate.containment_a_in_b == pytest.approx(result.overlap.containment_a_in_b)


def test_idf_methods_say_they_were_fitted_on_the_pair():
    result = compare_texts(ORIGINAL, COPY, WORDS, method=get_method("imatch", WORDS))
    assert result.estimate.fitted_on_pair
    assert result.as_dict()["idf_fitted_on"] == "these two texts only"
    counted = compare_texts(ORIGINAL, COPY, WORDS, method=get_method("simhash", WORDS))
    assert not counted.estimate.fitted_on_pair


def test_empty_texts_are_named():
    with pytest.raises(EmptyTextError, match="B: the text is empty"):
        compare_texts("some words here", "  ", labels=("A", "B"))
    with pytest.raises(EmptyTextError, match="first: no words left"):
        compare_texts("the of and", "words", labels=("first", "second"), config=STOP_WORDS)
