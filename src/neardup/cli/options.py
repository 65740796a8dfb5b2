"""Options shared by the commands that take text: canonicalization and shingles."""

from __future__ import annotations

import contextlib
import functools
import math
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from neardup.dedup.defaults import (
    DEFAULT_MAX_BUCKET,
    DEFAULT_MEASURE,
    DEFAULT_METHOD,
    DEFAULT_TEMPLATE_DF,
    DEFAULT_THRESHOLD,
    MEASURES,
)
from neardup.errors import ConfigError, InputError
from neardup.io.readers import DEFAULT_MAX_TEXT_BYTES
from neardup.methods import METHOD_NAMES, parse_params
from neardup.text.stopwords import load_stopword_file
from neardup.text.text_config import (
    DEFAULT_HAN_SIZE,
    DEFAULT_SIZES,
    HASH_NAMES,
    LANGS,
    MAX_UNITS,
    PROFILES,
    UNITS,
    CanonConfig,
    ShingleConfig,
    TextConfig,
)

if TYPE_CHECKING:
    from neardup.dedup import DedupConfig

# the largest count any option takes: larger values overflowed the compiled kernels' int64
# arithmetic (a segmentation fault) or Python's islice; far beyond any useful setting
MAX_COUNT = 2**31 - 1


def count(least: int, most: int = MAX_COUNT) -> click.IntRange:
    """An integer option in [least, most]: out-of-range values are a usage error (exit 2)."""
    return click.IntRange(least, most)


class _Fraction(click.FloatRange):
    """A number in (0, 1]: NaN (which every comparison lets through) is refused too."""

    def __init__(self) -> None:
        super().__init__(0, 1, min_open=True)

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number in (0, 1]", param, ctx)
        return number


FRACTION = _Fraction()


@contextlib.contextmanager
def bad_options() -> Iterator[None]:
    """Settings built from the options: an invalid one (ConfigError) is a usage error (exit 2),
    raised before anything is read or written."""
    try:
        yield
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None


def check_writable(path: str | None, option: str) -> None:
    """InputError unless a file can be written at ``path``: checked before any work, so an
    unwritable output fails at once rather than after the computation."""
    if path is None:
        return
    target = Path(path)
    try:
        if target.is_dir():
            raise IsADirectoryError(21, "is a directory")
        with tempfile.TemporaryFile(dir=target.parent or "."):
            pass
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot write there ({exc.strerror or exc})") from None


def _switch(name: str, help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A ``--name/--no-name`` flag whose absence means "as the profile says"."""
    return click.option(f"--{name}/--no-{name}", default=None, help=help_text)


_TEXT_OPTIONS = [
    click.option(
        "--size",
        type=count(1, MAX_UNITS),
        default=None,
        help=f"Units per shingle [default: {DEFAULT_SIZES['word']} words, "
        f"{DEFAULT_SIZES['char']} chars, {DEFAULT_SIZES['auto']} for auto].",
    ),
    click.option(
        "--han-size",
        type=count(1, MAX_UNITS),
        default=None,
        help=f"Characters per shingle of a Han clause with --unit auto [default: "
        f"{DEFAULT_HAN_SIZE}, at most --size].",
    ),
    click.option(
        "--step",
        type=count(1, MAX_UNITS),
        default=1,
        show_default=True,
        help="Units between shingle starts (1 = fully overlapping).",
    ),
    click.option(
        "--hash",
        "hash_name",
        type=click.Choice(HASH_NAMES),
        default="xxh3",
        show_default=True,
        help="Shingle fingerprint function.",
    ),
    click.option(
        "--canon",
        type=click.Choice(PROFILES),
        default="default",
        show_default=True,
        help="Canonicalization profile; 'none' leaves the text untouched.",
    ),
    click.option(
        "--lang",
        type=click.Choice(LANGS),
        default="auto",
        show_default=True,
        help="Text language; 'auto' picks it from the script of each text.",
    ),
    _switch("html", "Strip HTML tags and entities."),
    _switch("boilerplate", "Drop page menus, headers and footers before stripping HTML."),
    _switch("wiki", "Strip leftover wiki markup."),
    _switch("quotes", "Drop quoted lines ('> …' in mail replies): they are another text's words."),
    _switch("normalize", "Unicode NFKC normalization."),
    _switch("lowercase", "Case folding."),
    _switch("punctuation", "Remove punctuation and special characters."),
    _switch("stopwords", "Remove stop words (off by default: kept, they raise recall)."),
    click.option(
        "--stopwords-file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Your own stop words, one per line (turns --stopwords on).",
    ),
    _switch("segment", "Segment Chinese into words (jieba)."),
    click.option(
        "--lemmatize",
        is_flag=True,
        default=None,
        help="Bring Russian words to their normal form (pymorphy3).",
    ),
    click.option(
        "--stem",
        is_flag=True,
        default=None,
        help="Reduce English and Russian words to Snowball stems.",
    ),
    click.option(
        "--drop-adjectives",
        is_flag=True,
        default=None,
        help="Remove Russian adjectives and participles (pymorphy3).",
    ),
]
_CANON_SWITCHES = (
    "html",
    "boilerplate",
    "wiki",
    "quotes",
    "normalize",
    "lowercase",
    "punctuation",
    "stopwords",
    "segment",
    "lemmatize",
    "stem",
    "drop_adjectives",
)


def text_options(default_unit: str = "word") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the canonicalization and shingle options; pass them on as one ``config``."""
    unit_option = click.option(
        "--unit",
        type=click.Choice(UNITS),
        default=default_unit,
        show_default=True,
        help="Shingle unit: words, characters (short texts), or auto: words, and characters "
        "for Chinese.",
    )

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        return _with_text_options(func, [unit_option, *_TEXT_OPTIONS])

    return decorate


def _with_text_options(func: Callable[..., Any], options: list[Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        switches = {name: kwargs.pop(name) for name in _CANON_SWITCHES}
        extra = kwargs.pop("stopwords_file")
        if extra and switches["stopwords"] is None:
            switches["stopwords"] = True  # a list of one's own stop words asks for removal
        stops = tuple(load_stopword_file(extra)) if extra else ()
        unit = kwargs.pop("unit")
        with bad_options():
            canon = CanonConfig.profile(
                kwargs.pop("canon"), lang=kwargs.pop("lang"), extra_stopwords=stops, **switches
            )
            shingle = ShingleConfig(
                unit=unit,
                size=kwargs.pop("size") or DEFAULT_SIZES[unit],
                step=kwargs.pop("step"),
                hash=kwargs.pop("hash_name"),
                han_size=kwargs.pop("han_size"),
            )
        return func(*args, config=TextConfig(canon, shingle), **kwargs)

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


# Which DedupConfig setting (as named in config files) each dedup option sets: options given
# on the command line override the values of a --config file.
_SETTING_OF_OPTION = {
    "method_name": "method",
    "params": "params",
    "threshold": "threshold",
    "measure": "measure",
    "verify": "verify",
    "keep_text": "keep",
    "guard": "guard",
    "chain": "chain",
    "template_df": "template_df",
    "identity": "identity",
    "max_bucket": "max_bucket",
    "batch_size": "batch_size",
    "canon": "text.canon",
    "lang": "text.canon.lang",
    "stopwords_file": "text.canon.extra_stopwords",
    "unit": "text.shingle.unit",
    "size": "text.shingle.size",
    "han_size": "text.shingle.han_size",
    "step": "text.shingle.step",
    "hash_name": "text.shingle.hash",
} | {name: f"text.canon.{name}" for name in _CANON_SWITCHES}


def given(name: str) -> bool:
    """Whether the option ``name`` of the running command was given (not a default)."""
    source = click.get_current_context().get_parameter_source(name)
    return source not in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)


def explicit_settings() -> set[str]:
    """The DedupConfig settings (configfile names) given explicitly on the command line."""
    return {setting for option, setting in _SETTING_OF_OPTION.items() if given(option)}


def stack(*options: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Callable[..., Any]:
    """Several click options as one decorator (listed in the order --help shows them)."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


# What decides which documents are near-duplicates: shared by dedup and index create.
method_options = stack(
    click.option(
        "--method",
        "method_name",
        type=click.Choice(METHOD_NAMES),
        default=DEFAULT_METHOD,
        show_default=True,
        help="How candidates are found (see: neardup methods).",
    ),
    click.option(
        "--param",
        "params",
        multiple=True,
        metavar="NAME=VALUE",
        help="A parameter of --method, e.g. --param num_perm=84 (repeatable).",
    ),
    click.option(
        "--threshold",
        type=FRACTION,
        default=DEFAULT_THRESHOLD,
        show_default=True,
        help="Pairs scoring at least this are near-duplicates.",
    ),
    click.option(
        "--measure",
        type=click.Choice(MEASURES),
        default=DEFAULT_MEASURE,
        show_default=True,
        help="containment also finds a short text quoted whole in a long one.",
    ),
    click.option(
        "--max-bucket",
        type=count(2),
        default=DEFAULT_MAX_BUCKET,
        show_default=True,
        help="Keys shared by more documents pair only with the first.",
    ),
    click.option(
        "--template-df",
        type=count(0),
        default=DEFAULT_TEMPLATE_DF,
        show_default=True,
        help="Shingles held by this many groups of otherwise different documents are a "
        "shared template (footers, mastheads), not content (0: off).",
    ),
    click.option(
        "--config",
        "config_file",
        type=click.Path(exists=True, dir_okay=False),
        default=None,
        help="Settings file (JSON or TOML; neardup calibrate writes one): its values are the "
        "defaults, options given explicitly override them.",
    ),
)

# dedup only: the collection does not count words over a corpus
identity_option = click.option(
    "--identity/--no-identity",
    default=True,
    show_default=True,
    help="Never remove a document into one that does not name it: a keeper lacking most "
    "of its rare words (used by 2 or more documents, by fewer than 3 groups of copies: "
    "names, authors, hosts) keeps it, and so does a document with 3 words of its own (no "
    "other document uses them; it repeats them); never into one that translates it.",
)

# How records are read: shared by every command taking corpus INPUTS.
id_field_option = click.option(
    "--id-field", default="id", show_default=True, help="Id field of records."
)
text_field_option = click.option(
    "--text-field", default="text", show_default=True, help="Text field of records."
)


def max_text_bytes_option(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--max-text-bytes``: the longest text a record may hold (``help_text`` says so)."""
    return click.option(
        "--max-text-bytes",
        type=count(1, 2**40),
        default=DEFAULT_MAX_TEXT_BYTES,
        show_default=True,
        help=help_text,
    )


input_options = stack(
    id_field_option,
    text_field_option,
    click.option(
        "--skip-bad",
        is_flag=True,
        help="Skip malformed records (and count them) instead of stopping.",
    ),
    max_text_bytes_option(
        "Longest text (UTF-8 bytes) a record may hold; longer ones are bad records."
    ),
)


def dedup_config(
    *,
    method_name: str,
    params: tuple[str, ...],
    config_file: str | None,
    config: TextConfig,
    **settings: Any,
) -> DedupConfig:
    """The DedupConfig of the options given, over the --config file's settings if any.

    An invalid option (threshold, keep, an unknown --param) or setting of the --config file
    is a usage error naming it (exit 2); a --config file that cannot be read or parsed is
    the file's error (exit 1).
    """
    from neardup.dedup import DedupConfig
    from neardup.dedup.configfile import merge_config, read_config

    with bad_options():
        built = DedupConfig(
            text=config, method=method_name, params=tuple(parse_params(params).items()), **settings
        )
        if config_file is None:
            built.build_method()  # fail on bad parameters before reading anything
            return built
    try:  # unreadable, not JSON/TOML: InputError, the file's error (exit 1)
        built = merge_config(read_config(config_file), built, explicit_settings())
        built.build_method()
    except ConfigError as exc:  # a setting of the file of a wrong type or out of range
        raise click.UsageError(f"--config {exc}") from None
    return built


db_option = click.option(
    "--db",
    "db_url",
    required=True,
    envvar="NEARDUP_DB",
    show_envvar=True,
    help="The collection: a SQLite file (PATH or sqlite:///PATH) or postgresql://…",
)
