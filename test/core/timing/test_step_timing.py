"""Tests of the loop pacer and step statistics (with a fake clock: no wall-clock timing)."""

from __future__ import annotations

import pytest

from sim_server.core.timing.step_timing import Pacer, StepStatistics


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_deadlines_advance_by_exact_periods_without_drift() -> None:
    clock = FakeClock()
    pacer = Pacer(200.0, clock=clock)
    deadlines = []
    for _ in range(1000):
        deadline = pacer.next_deadline()
        deadlines.append(deadline)
        clock.now = deadline + 0.0001  # the loop always wakes a little late
    assert deadlines[-1] == pytest.approx(100.0 + 1000 * 0.005)
    assert pacer.overruns == 0


def test_overruns_are_counted_not_caught_up() -> None:
    clock = FakeClock()
    pacer = Pacer(100.0, clock=clock)
    clock.now += 0.05  # a tick that took five periods
    deadline = pacer.next_deadline()
    assert pacer.overruns == 1
    assert deadline == clock.now  # restarts from now instead of bursting
    assert pacer.next_deadline() == pytest.approx(clock.now + 0.01)


def test_unpaced_rate_zero() -> None:
    clock = FakeClock()
    pacer = Pacer(0.0, clock=clock)
    assert not pacer.paced
    assert pacer.next_deadline() == clock.now


def test_negative_rate_rejected() -> None:
    with pytest.raises(ValueError):
        Pacer(-1.0)


def test_statistics() -> None:
    stats = StepStatistics()
    for duration in (0.001, 0.003, 0.002):
        stats.record(duration)
    assert stats.count == 3 and stats.mean == pytest.approx(0.002) and stats.maximum == 0.003
    stats.reset()
    assert stats.count == 0 and stats.mean == 0.0
