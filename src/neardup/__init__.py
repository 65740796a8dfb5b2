"""neardup: find near-duplicate texts.

The public API is the names in ``__all__``, importable from the package root::

    import neardup

    found = neardup.deduplicate(records)       # pairs, clusters, kept, removed
    neardup.compare_texts(text_a, text_b)      # resemblance, containment, shared passages
    collection = neardup.open_collection("docs.db", create=True)

Every other module is internal and may move. Names are imported on first use (a module-level
``__getattr__``), so ``import neardup`` loads neither NumPy nor the compiled kernels.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

# numba's OpenMP workers spin while they wait; on a machine whose other cores are busy a
# spinning worker holds up every parallel region (2 threads ran twice as slow as one).
# Sleeping workers cost a little on an idle machine and keep the speed under load. Set before
# numba loads OpenMP; a value the user set wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"

# public name -> the module that defines it (imported when the name is first used)
_EXPORTS: dict[str, str] = {
    # verbs
    "deduplicate": "neardup.api",
    "deduplicate_files": "neardup.api",
    "compare_texts": "neardup.dedup.compare",  # not "compare": that is a module of the package
    # "explain": a pair's explanation, exported here once the explain feature lands
    "open_collection": "neardup.api",
    "evaluate": "neardup.api",
    # configs
    "DedupConfig": "neardup.dedup.config",
    "KeepPolicy": "neardup.dedup.cluster",
    "TextConfig": "neardup.text.text_config",
    "CanonConfig": "neardup.text.text_config",
    "ShingleConfig": "neardup.text.text_config",
    # results
    "Deduplication": "neardup.api",
    "DuplicatePair": "neardup.api",
    "Cluster": "neardup.api",
    "DedupResult": "neardup.dedup.config",
    "Comparison": "neardup.dedup.compare",
    "Collection": "neardup.collection.persistent",
    "Evaluation": "neardup.judge.evaluate",
    # errors and warnings
    "NearDupError": "neardup.errors",
    "ConfigError": "neardup.errors",
    "InputError": "neardup.errors",
    "EmptyTextError": "neardup.errors",
    "MissingDependencyError": "neardup.errors",
    "SignatureError": "neardup.errors",
    "WeakSignatureWarning": "neardup.errors",
}

__all__ = [  # the public names: every key of _EXPORTS, and __version__
    "CanonConfig",
    "Cluster",
    "Collection",
    "Comparison",
    "ConfigError",
    "DedupConfig",
    "DedupResult",
    "Deduplication",
    "DuplicatePair",
    "EmptyTextError",
    "Evaluation",
    "InputError",
    "KeepPolicy",
    "MissingDependencyError",
    "NearDupError",
    "ShingleConfig",
    "SignatureError",
    "TextConfig",
    "WeakSignatureWarning",
    "__version__",
    "compare_texts",
    "deduplicate",
    "deduplicate_files",
    "evaluate",
    "open_collection",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use and cache the name here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'neardup' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # the same names, for type checkers and editors
    from neardup.api import (
        Cluster,
        Deduplication,
        DuplicatePair,
        deduplicate,
        deduplicate_files,
        evaluate,
        open_collection,
    )
    from neardup.collection.persistent import Collection
    from neardup.dedup.cluster import KeepPolicy
    from neardup.dedup.compare import Comparison, compare_texts
    from neardup.dedup.config import DedupConfig, DedupResult
    from neardup.errors import (
        ConfigError,
        EmptyTextError,
        InputError,
        MissingDependencyError,
        NearDupError,
        SignatureError,
        WeakSignatureWarning,
    )
    from neardup.judge.evaluate import Evaluation
    from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig
