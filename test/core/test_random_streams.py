"""Streams of normal numbers: each stream gives the same numbers alone, in a batch, in any order
and in chunks of any size; seeded keys repeat, owners differ; the numbers are standard normal
and independent within and across streams (checked on fixed seeds: no test depends on luck)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from sim_server.core.random_streams import NormalStream, draw_normals, gather, stream_key


def test_a_stream_gives_the_same_numbers_alone_in_chunks_and_in_any_batch() -> None:
    keys = [stream_key(11, f"robot{i}/imu") for i in range(30)]
    alone = [NormalStream(key).normals(12) for key in keys]
    streams = [NormalStream(key) for key in keys]
    batch_keys, counters = gather(streams)
    rng = np.random.default_rng(0)
    got = [[] for _ in keys]
    for chunk in (1, 3, 2, 6):  # every stream in a shuffled subset each time, then the rest
        order = rng.permutation(len(keys))
        for part in (order[:10], order[10:]):
            out = np.empty((len(part), chunk))
            draw_normals(batch_keys, counters, part.astype(np.int64), out)
            for row, stream in zip(out, part):
                got[stream].extend(row.tolist())
    assert all(np.array_equal(np.array(numbers), expected) for numbers, expected in zip(got, alone))
    # The streams re-pointed at the batch's rows go on where the batch left them.
    assert all(stream.drawn == 12 for stream in streams)
    assert np.array_equal(streams[4].normals(3), NormalStream(keys[4]).normals(15)[12:])
    assert counters[4] == 15


def test_seeded_keys_repeat_and_owners_and_seeds_differ() -> None:
    assert stream_key(3, "a/imu") == stream_key(3, "a/imu")
    assert len({stream_key(3, "a/imu"), stream_key(3, "b/imu"), stream_key(4, "a/imu"), stream_key(3, "a/odom")}) == 4
    assert stream_key(None, "a/imu") != stream_key(None, "a/imu")  # no seed: fresh each time
    assert np.array_equal(NormalStream(stream_key(3, "a")).normals(50), NormalStream(stream_key(3, "a")).normals(50))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_numbers_are_standard_normal(seed: int) -> None:
    numbers = NormalStream(stream_key(seed, "x")).normals(200_000)
    assert abs(numbers.mean()) < 0.01 and abs(numbers.std() - 1.0) < 0.01
    assert abs(stats.skew(numbers)) < 0.03 and abs(stats.kurtosis(numbers)) < 0.05
    assert stats.kstest(numbers, "norm").pvalue > 1e-3
    assert np.isfinite(numbers).all() and np.abs(numbers).max() < 7.0


def test_numbers_are_independent_within_and_across_streams() -> None:
    numbers = NormalStream(stream_key(5, "y")).normals(100_000)
    for lag in (1, 2, 3, 7):
        assert abs(np.corrcoef(numbers[:-lag], numbers[lag:])[0, 1]) < 0.015
    many = np.array([NormalStream(stream_key(5, f"r{i}")).normals(5_000) for i in range(40)])
    across = np.corrcoef(many)[~np.eye(40, dtype=bool)]
    assert np.abs(across).max() < 0.06 and abs(across.mean()) < 0.005
    # Streams of neighbouring keys (owners r1, r2, ... of one seed) are not shifted copies.
    assert abs(np.corrcoef(many[0][1:], many[1][:-1])[0, 1]) < 0.05
