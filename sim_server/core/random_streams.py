"""Reproducible streams of normal random numbers, one per owner, drawn for many owners at once.

A noisy sensor or drive needs its own stream of random numbers: reproducible when the world has
a seed, and independent of the others (adding a robot must not change another robot's noise).
One ``numpy.random.Generator`` per plugin gives that, but a batch of plugins then draws in a
Python loop, one call per plugin (about 2 us each). Here a stream is a 64-bit *key* (from the
world's seed and the owner's name) and a *counter* of the numbers drawn so far: number ``n`` of
stream ``key`` is a function of (key, n) alone (a counter-based generator: SplitMix64's mixing
function over the pair gives 53-bit uniforms, and Marsaglia's polar method numbers 2k and 2k + 1
from them), so :func:`draw_normals` fills the draws
of a thousand streams in one compiled call, and each stream's numbers are the same whether it is
drawn alone or in any batch, in any order.

Units: none (standard normal numbers, mean 0 and standard deviation 1); callers scale them.
"""

from __future__ import annotations

import hashlib
import math
import secrets

import numpy as np

from sim_server.core.compiled import jit

#: SplitMix64's constants (Steele, Lea and Flood, 2014).
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_SHIFT_30, _SHIFT_27, _SHIFT_31, _SHIFT_11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_ONE, _TWO = np.uint64(1), np.uint64(2)
#: Attempts of the polar method before giving up (each succeeds with probability pi / 4).
_ATTEMPTS = 64
#: 2^-52: a 53-bit integer times this, less 1, is a uniform number in [-1, 1).
_TWO_UNITS = 2.0 / 9007199254740992.0


def stream_key(seed: int | None, owner: str) -> np.uint64:
    """The key of ``owner``'s stream (say ``"robot3/imu"``): derived from the world's ``seed`` and
    the name, so that a seeded world repeats itself and owners differ; a fresh random key when
    there is no seed."""
    if seed is None:
        return np.uint64(secrets.randbits(64))
    digest = hashlib.blake2b(f"{seed}\x00{owner}".encode(), digest_size=8).digest()
    return np.uint64(int.from_bytes(digest, "little"))


@jit
def _mix(value):
    """SplitMix64's finalizer: a bijection of 64-bit integers that scrambles every bit."""
    value = (value ^ (value >> _SHIFT_30)) * _MIX_1
    value = (value ^ (value >> _SHIFT_27)) * _MIX_2
    return value ^ (value >> _SHIFT_31)


@jit
def normal_pair(key, pair):
    """Numbers 2 pair and 2 pair + 1 of stream ``key`` (``pair`` a uint64) (Marsaglia's polar method: a point drawn
    uniformly in the square [-1, 1]^2, again until it falls inside the unit circle, attempt ``a``
    from uniforms 2 (pair * ATTEMPTS + a) and 2 (pair * ATTEMPTS + a) + 1 of the stream's key)."""
    for attempt in range(_ATTEMPTS):
        base = (pair * np.uint64(_ATTEMPTS) + np.uint64(attempt)) * _TWO
        first = _mix(key ^ _mix(base * _GOLDEN + _GOLDEN))
        second = _mix(key ^ _mix((base + _ONE) * _GOLDEN + _GOLDEN))
        u = np.float64(first >> _SHIFT_11) * _TWO_UNITS - 1.0
        v = np.float64(second >> _SHIFT_11) * _TWO_UNITS - 1.0
        radius_squared = u * u + v * v
        if 0.0 < radius_squared < 1.0:
            factor = math.sqrt(-2.0 * math.log(radius_squared) / radius_squared)
            return u * factor, v * factor
    return 0.0, 0.0  # (every attempt outside the circle: probability 0.215^64, about 1e-43)


@jit
def _draw_normals(keys, counters, rows, out):
    for row in range(rows.shape[0]):
        stream = rows[row]
        key, start = keys[stream], counters[stream]
        even, odd_value = 0.0, 0.0
        for column in range(out.shape[1]):
            index = start + np.uint64(column)
            odd = (index & _ONE) == _ONE
            if column == 0 or not odd:
                even, odd_value = normal_pair(key, index >> _ONE)
            out[row, column] = odd_value if odd else even
        counters[stream] = start + np.uint64(out.shape[1])


def draw_normals(keys: np.ndarray, counters: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """Draw the next ``out.shape[1]`` numbers of streams ``rows`` into ``out``, one row each.

    Args:
        keys: (S,) uint64: every stream's key (:func:`stream_key`).
        counters: (S,) uint64, updated: how many numbers each stream has given.
        rows: (N,) int64: the streams to draw from (indices into ``keys``), each once.
        out: (N, K) float64, filled: row ``i`` holds the next K numbers of stream ``rows[i]``.
    """
    _draw_normals(keys, counters, rows, out)


class NormalStream:
    """One owner's stream, drawn alone (the same numbers a batch would draw for it).

    Args:
        key: the stream's key (:func:`stream_key`).
    """

    def __init__(self, key: np.uint64) -> None:
        self.keys = np.array([key], dtype=np.uint64)
        self.counters = np.zeros(1, dtype=np.uint64)
        self._rows = np.zeros(1, dtype=np.int64)

    @property
    def key(self) -> np.uint64:
        """The stream's key."""
        return self.keys[0]

    @property
    def drawn(self) -> int:
        """How many numbers the stream has given."""
        return int(self.counters[0])

    def skip_to(self, drawn: int) -> None:
        """Continue from number ``drawn`` (a batch drew the ones before)."""
        self.counters[0] = np.uint64(drawn)

    def normals(self, count: int) -> np.ndarray:
        """The next ``count`` numbers, (count,) float64."""
        out = np.empty((1, count))
        _draw_normals(self.keys, self.counters, self._rows, out)
        return out[0]


def gather(streams: "list[NormalStream]") -> tuple[np.ndarray, np.ndarray]:
    """The keys and counters (S,) of ``streams`` as a batch's arrays, each stream re-pointed at
    its row (views): drawing alone or in the batch continues the same stream."""
    keys = np.array([stream.key for stream in streams], dtype=np.uint64)
    counters = np.array([stream.drawn for stream in streams], dtype=np.uint64)
    for row, stream in enumerate(streams):
        stream.keys, stream.counters = keys[row:row + 1], counters[row:row + 1]
    return keys, counters


def warm_up() -> None:
    """Compile (or load) the drawing kernel."""
    NormalStream(np.uint64(1)).normals(2)
