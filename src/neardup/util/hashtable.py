"""Open-addressing hash tables of 64-bit keys for the compiled kernels.

A key's home slot is the top bits of its product with :data:`SLOT_MIX` (multiplicative
hashing), so keys that use fewer than 64 bits (CRC32 fingerprints, small integers) spread over
the table too; collisions probe the next slots. The multiplier is not :data:`GOLDEN`: the Han
mark of the shingle fingerprints sets the top bits of their product with that one, and every
Han fingerprint would share one home slot in 4,096. A table maps a slot to an index into the keys
plus one (0: empty) and has about two slots a key: small enough to stay in cache.
"""

from __future__ import annotations

import numpy as np
from numba import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / the golden ratio; odd: a bijection mod 2**64
SLOT_MIX = np.uint64(0xBF58476D1CE4E5B9)  # odd; spreads CRC32, XXH3 and Han-marked values


@njit(cache=True, inline="always")
def home_slot(key: np.uint64, shift: np.uint64) -> int:
    """The first slot of ``key`` in a table of ``2 ** (64 - shift)`` slots."""
    return np.int64((key * SLOT_MIX) >> shift)


@njit(cache=True, inline="always")
def slot_of(table: np.ndarray, keys: np.ndarray, key: np.uint64, shift: np.uint64) -> int:
    """Where ``key`` is in ``table`` (slot → index of ``keys`` + 1; 0: empty), or the empty
    slot where it would go."""
    mask = np.int64(table.size - 1)
    slot = home_slot(key, shift)
    while table[slot] != 0 and keys[table[slot] - 1] != key:
        slot = (slot + 1) & mask
    return slot


@njit(cache=True)
def table_bits(keys: int) -> int:
    """Bits (log2 of the slots) of a table for ``keys`` keys: more than two slots a key."""
    bits = 4
    while (1 << bits) < 2 * keys + 1:
        bits += 1
    return bits


@njit(cache=True)
def key_table(keys: np.ndarray) -> tuple[np.ndarray, np.uint64]:
    """The table of ``keys`` (an equal key later in ``keys`` takes the slot) and its shift."""
    bits = table_bits(keys.size)
    shift = np.uint64(64 - bits)
    table = np.zeros(1 << bits, dtype=np.int64)
    for i in range(keys.size):
        table[slot_of(table, keys, keys[i], shift)] = i + 1
    return table, shift


@njit(cache=True)
def absent(values: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Which of ``values`` are not among ``others``: one probe each into the table of
    ``others``, linear however many there are."""
    table, shift = key_table(others)
    out = np.empty(values.size, dtype=np.bool_)
    for j in range(values.size):
        out[j] = table[slot_of(table, others, values[j], shift)] == 0
    return out


@njit(cache=True)
def count_keys(
    values: np.ndarray, table: np.ndarray, keys: np.ndarray, shift: np.uint64, counts: np.ndarray
) -> None:
    """Add to ``counts[i]`` how many of ``values`` equal ``keys[i]`` (``table``, ``shift``:
    :func:`key_table` of ``keys``, distinct): one probe a value, however many keys."""
    for j in range(values.size):
        at = table[slot_of(table, keys, values[j], shift)]
        if at != 0:
            counts[at - 1] += 1
