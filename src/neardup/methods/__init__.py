"""Signature methods behind one protocol (see :mod:`neardup.methods.base`).

``get_method(name, text_config, **params)`` builds any of them by name; each lives in its own
module and registers itself in ``REGISTRY`` as ``name -> (module, class, config class)``.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from neardup.errors import ConfigError
from neardup.methods.base import Keys, Method, Signatures
from neardup.text.text_config import TextConfig

# name -> (module, method class, config class); modules are imported on first use
REGISTRY: dict[str, tuple[str, str, str]] = {
    "full": ("neardup.methods.sample", "Full", "FullConfig"),
    "modm": ("neardup.methods.sample", "ModM", "ModMConfig"),
    "bottomn": ("neardup.methods.sample", "BottomN", "BottomNConfig"),
    "minhash": ("neardup.methods.minhash", "MinHash", "MinHashConfig"),
    "megashingle": ("neardup.methods.megashingle", "MegaShingle", "MegaShingleConfig"),
    "simhash": ("neardup.methods.simhash", "SimHash", "SimHashConfig"),
    "imatch": ("neardup.methods.imatch", "IMatch", "IMatchConfig"),
}
METHOD_NAMES: tuple[str, ...] = tuple(REGISTRY)


def method_classes(name: str) -> tuple[type, type]:
    """``(method class, config class)`` of a method name."""
    if name not in REGISTRY:
        raise ConfigError(f"method={name!r} is not one of {', '.join(METHOD_NAMES)}")
    module_name, cls_name, config_name = REGISTRY[name]
    module = importlib.import_module(module_name)
    return getattr(module, cls_name), getattr(module, config_name)


@dataclass(frozen=True, slots=True)
class MethodInfo:
    """What ``neardup methods`` shows of a method."""

    name: str
    summary: str
    estimate: str
    params: dict[str, Any]  # parameter name -> default

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "summary": self.summary,
            "estimate": self.estimate,
            "params": self.params,
        }


def describe_methods() -> list[MethodInfo]:
    """Every method with its parameters' defaults and what it is good for."""
    infos = []
    for name in METHOD_NAMES:
        cls, config_cls = method_classes(name)
        defaults = config_cls()
        params = {f.name: getattr(defaults, f.name) for f in dataclasses.fields(config_cls)}
        infos.append(MethodInfo(name, cls.summary, cls.estimate, params))
    return infos


def parse_params(items: Sequence[str]) -> dict[str, Any]:
    """``["k=v", ...]`` → ``{k: v}``; values are JSON literals (numbers, true, null) or text."""
    params: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"method parameter {item!r} is not of the form name=value")
        try:
            params[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            params[key.strip()] = raw
    return params


def get_method(name: str, text: TextConfig | None = None, **params: Any) -> Method:
    """A method by name, with its parameters (unknown parameters are a ConfigError)."""
    cls, config_cls = method_classes(name)
    known = {f.name for f in dataclasses.fields(config_cls)}
    unknown = set(params) - known
    if unknown:
        raise ConfigError(
            f"method {name!r} has no parameter(s) {', '.join(sorted(unknown))}; "
            f"it takes: {', '.join(sorted(known)) or 'none'}"
        )
    return cls(config_cls(**params), text or TextConfig())


__all__ = [
    "METHOD_NAMES",
    "REGISTRY",
    "Keys",
    "Method",
    "Signatures",
    "get_method",
    "method_classes",
]
