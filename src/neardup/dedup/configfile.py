"""Dedup settings in a file, for ``neardup dedup --config FILE`` (written by ``calibrate``).

The file is one JSON object (``.toml`` files are read too) with any of the keys ``method``,
``params`` (an object), ``threshold``, ``measure``, ``verify``, ``keep``, ``guard``,
``chain``, ``max_bucket``, ``template_df``, ``batch_size`` and
``text`` = ``{"canon": {...}, "shingle": {...}}``
(the fields of :class:`~neardup.text.text_config.CanonConfig` and
:class:`~neardup.text.text_config.ShingleConfig`).
Missing keys take the defaults; unknown keys are a ConfigError; ``calibration`` and ``comment``
are notes for people and ignored.

On the command line the file's values are defaults: options given explicitly override them
(:func:`merge_config`).
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from collections.abc import Mapping, Set
from pathlib import Path
from typing import Any

from neardup.dedup import DedupConfig
from neardup.dedup.cluster import KeepPolicy
from neardup.errors import ConfigError, InputError
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

_SCALARS = (
    "method",
    "threshold",
    "measure",
    "verify",
    "guard",
    "chain",
    "max_bucket",
    "template_df",
    "identity",
)
_SCALARS += ("batch_size",)
_NOTES = ("calibration", "comment")


def config_to_dict(config: DedupConfig) -> dict[str, Any]:
    """Every setting of ``config`` as plain JSON values."""
    out: dict[str, Any] = {key: getattr(config, key) for key in _SCALARS}
    out["params"] = dict(config.params)
    out["keep"] = str(config.keep)
    out["text"] = {
        "canon": dataclasses.asdict(config.text.canon),
        "shingle": dataclasses.asdict(config.text.shingle),
    }
    return out


def config_from_dict(data: Mapping[str, Any], source: str = "config") -> DedupConfig:
    """A DedupConfig from :func:`config_to_dict`'s form; ConfigError names what is wrong."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: the settings must be one object")
    known = {*_SCALARS, "params", "keep", "text", *_NOTES}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{source}: unknown setting(s) {', '.join(unknown)}")
    fields: dict[str, Any] = {key: data[key] for key in _SCALARS if key in data}
    for key, value in fields.items():
        if problem := _type_problem(key, value):
            raise ConfigError(f"{source}: {problem}")
    if "params" in data:
        if not isinstance(data["params"], Mapping):
            raise ConfigError(f"{source}: params must be an object")
        fields["params"] = tuple(data["params"].items())
    if "keep" in data:
        fields["keep"] = KeepPolicy.parse(data["keep"])
    if "text" in data:
        fields["text"] = _text_config(data["text"], source)
    try:
        config = DedupConfig(**fields)
        config.build_method()  # unknown method or parameter
    except TypeError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return config


def _type_problem(key: str, value: Any) -> str | None:
    """Why ``value`` cannot be setting ``key`` (of the type of its default), or None."""
    default = getattr(DedupConfig(), key)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(default, bool):
        fits, kind = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        fits, kind = isinstance(value, int) and not isinstance(value, bool), "an integer"
    elif isinstance(default, float) or default is None:  # None: an optional number
        fits, kind = number or (default is None and value is None), "a number"
    else:
        fits, kind = isinstance(value, str), "a string"
    return None if fits else f"setting {key} = {value!r} must be {kind}"


def _text_config(data: Any, source: str) -> TextConfig:
    if not isinstance(data, Mapping) or set(data) - {"canon", "shingle"}:
        raise ConfigError(f"{source}: text must be an object with canon and shingle")
    try:
        canon = dict(data.get("canon", {}))
        if "extra_stopwords" in canon:
            canon["extra_stopwords"] = tuple(canon["extra_stopwords"])
        return TextConfig(CanonConfig(**canon), ShingleConfig(**data.get("shingle", {})))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{source}: text settings: {exc}") from None


def read_config(path: str | Path) -> DedupConfig:
    """The settings of a JSON (or TOML) config file."""
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(raw) if path.suffix.lower() == ".toml" else json.loads(raw)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: not a valid config file ({exc})") from None
    return config_from_dict(data, str(path))


def write_config(
    path: str | Path, config: DedupConfig, notes: Mapping[str, Any] | None = None
) -> None:
    """Write ``config`` as JSON (with ``calibration`` notes, if given)."""
    data = config_to_dict(config)
    if notes:
        data["calibration"] = dict(notes)
    Path(path).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def merge_config(base: DedupConfig, given: DedupConfig, explicit: Set[str]) -> DedupConfig:
    """``base`` (from a file) with the settings named in ``explicit`` taken from ``given``.

    Names are DedupConfig fields (``threshold``, ``params``…), ``text.canon`` (a whole
    canonicalization profile), ``text.canon.FIELD`` or ``text.shingle.FIELD``. Parameters
    given for the file's method are added to its parameters; choosing another method drops
    the file's parameters.
    """
    fields = {key: getattr(given, key) for key in (*_SCALARS, "keep") if key in explicit}
    if "method" in explicit and given.method != base.method:
        fields["params"] = given.params
    elif "params" in explicit:
        fields["params"] = tuple((dict(base.params) | dict(given.params)).items())
    canon = given.text.canon if "text.canon" in explicit else base.text.canon
    canon = _override(canon, given.text.canon, explicit, "text.canon.")
    shingle = _override(base.text.shingle, given.text.shingle, explicit, "text.shingle.")
    return dataclasses.replace(base, text=TextConfig(canon, shingle), **fields)


def _override(base: Any, given: Any, explicit: Set[str], prefix: str) -> Any:
    names = {f.name for f in dataclasses.fields(base) if prefix + f.name in explicit}
    return dataclasses.replace(base, **{n: getattr(given, n) for n in names}) if names else base


__all__ = ["config_from_dict", "config_to_dict", "merge_config", "read_config", "write_config"]
