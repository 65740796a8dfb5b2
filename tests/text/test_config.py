import subprocess
import sys

import pytest

from neardup.errors import ConfigError
from neardup.text.text_config import (
    CanonConfig,
    ShingleConfig,
    TextConfig,
    config_fingerprint,
)


def test_default_profile_switches_every_step_on_but_stop_words_and_word_forms():
    c = CanonConfig.profile("default")
    assert (c.html, c.quotes, c.normalize, c.lowercase, c.punctuation, c.segment) == (
        True,
        True,
        True,
        True,
        True,
        True,
    )
    assert not c.stopwords  # kept: measured to raise recall (README, defaults)
    assert not (c.lemmatize)
    assert not (c.stem)
    assert not (c.drop_adjectives)


def test_none_profile_leaves_text_untouched_and_lowercase_can_be_added():
    c = CanonConfig.profile("none")
    assert not any((c.html, c.wiki, c.normalize, c.lowercase, c.punctuation, c.stopwords))
    assert CanonConfig.profile("none", lowercase=True).lowercase


def test_profile_ignores_unset_overrides_and_rejects_unknown_ones():
    assert CanonConfig.profile("default", stopwords=None) == CanonConfig()
    with pytest.raises(ConfigError, match="colour"):
        CanonConfig.profile("default", colour=True)
    with pytest.raises(ConfigError, match="'loud'"):
        CanonConfig.profile("loud")


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"unit": "line"}, "unit"),
        ({"size": 0}, "size"),
        ({"step": -1}, "step"),
        ({"hash": "md5"}, "hash"),
        ({"size": True}, "size"),
        ({"seed": -1}, "seed"),
    ],
)
def test_shingle_config_names_the_bad_value(kwargs, name):
    with pytest.raises(ConfigError, match=name):
        ShingleConfig(**kwargs)


def test_canon_config_validation():
    with pytest.raises(ConfigError, match="lang"):
        CanonConfig(lang="fr")
    with pytest.raises(ConfigError, match="lemmatize and stem"):
        CanonConfig(lemmatize=True, stem=True)
    with pytest.raises(ConfigError, match="sequence"):
        CanonConfig(extra_stopwords="the")
    assert CanonConfig(extra_stopwords=("b", "a", "b")).extra_stopwords == ("a", "b")


def test_fingerprint_is_stable_and_sensitive():
    base = TextConfig()
    assert config_fingerprint(base) == config_fingerprint(TextConfig())
    assert config_fingerprint(base) != config_fingerprint(TextConfig(shingle=ShingleConfig(size=5)))
    assert config_fingerprint(base) != config_fingerprint(base, ShingleConfig())
    assert len(config_fingerprint(base)) == 16
    with pytest.raises(ConfigError):
        config_fingerprint({"size": 4})


def test_fingerprint_is_the_same_in_another_process():
    code = "from neardup.text.text_config import *; print(config_fingerprint(TextConfig()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == config_fingerprint(TextConfig())
