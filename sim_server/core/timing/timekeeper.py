"""Simulation time, kept in integer nanoseconds so that it never drifts."""

from __future__ import annotations

import math

NANOSECONDS_PER_SECOND = 1_000_000_000


def seconds_to_ns(seconds: float) -> int:
    """Convert seconds to whole nanoseconds (rounded to nearest)."""
    return int(round(seconds * NANOSECONDS_PER_SECOND))


class TimeKeeper:
    """Sim time, step size and the paused flag of one world.

    Args:
        step_size: physics step in seconds (> 0).
    """

    def __init__(self, step_size: float) -> None:
        if not (math.isfinite(step_size) and step_size > 0.0):
            raise ValueError(f"step_size must be a finite number of seconds greater than 0, got {step_size}")
        self.step_size = float(step_size)
        self.step_ns = seconds_to_ns(step_size)
        if self.step_ns <= 0:
            raise ValueError(f"step_size {step_size} s is shorter than a nanosecond")
        self.time_ns = 0
        self.iterations = 0
        self.paused = False

    @property
    def sim_time(self) -> float:
        """Sim time in seconds."""
        return self.time_ns / NANOSECONDS_PER_SECOND

    def advance(self) -> None:
        """Count one step: sim time grows by exactly ``step_size``."""
        self.time_ns += self.step_ns
        self.iterations += 1

    def reset(self) -> None:
        """Back to time 0 and iteration 0."""
        self.time_ns = 0
        self.iterations = 0
