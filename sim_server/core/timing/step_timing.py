"""Wall-clock pacing of the step loop and step-time statistics.

:class:`Pacer` gives the deadlines of a loop running at a fixed rate. Deadlines advance by
exactly one period each tick, so the rate does not drift; when a tick ends after its deadline
the overrun is counted and the schedule restarts from now instead of catching up with a burst
of steps.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass


class Pacer:
    """Deadlines for a loop at ``rate_hz`` (0 or infinity: no pacing, every deadline is now).

    Args:
        rate_hz: ticks per second of wall time.
        clock: a monotonic clock in seconds (injectable for tests).
    """

    def __init__(self, rate_hz: float, clock=time.monotonic) -> None:
        if rate_hz < 0.0 or math.isnan(rate_hz):
            raise ValueError(f"rate must be >= 0 Hz, got {rate_hz}")
        self.period = 0.0 if rate_hz == 0.0 or math.isinf(rate_hz) else 1.0 / rate_hz
        self._clock = clock
        self._deadline = clock()
        self.overruns = 0

    @property
    def paced(self) -> bool:
        """Whether the loop runs at a fixed rate at all."""
        return self.period > 0.0

    def next_deadline(self) -> float:
        """Advance to the next tick and return its deadline (monotonic seconds).

        When the previous tick already ran past this deadline, the overrun is counted and the
        schedule restarts from now (no catching up).
        """
        now = self._clock()
        if not self.paced:
            self._deadline = now
            return now
        self._deadline += self.period
        if now > self._deadline:
            self.overruns += 1
            self._deadline = now
        return self._deadline

    def restart(self) -> None:
        """Start a new schedule from now (after a pause, say)."""
        self._deadline = self._clock()


@dataclass
class StepStatistics:
    """Step durations (wall seconds) accumulated over a reporting window."""

    count: int = 0
    total: float = 0.0
    maximum: float = 0.0

    def record(self, duration: float) -> None:
        """Add one step that took ``duration`` seconds."""
        self.count += 1
        self.total += duration
        if duration > self.maximum:
            self.maximum = duration

    def add(self, count: int, total: float, maximum: float) -> None:
        """Add ``count`` steps that took ``total`` seconds together, the longest ``maximum``."""
        self.count += count
        self.total += total
        if maximum > self.maximum:
            self.maximum = maximum

    @property
    def mean(self) -> float:
        """Mean step duration in seconds (0 without steps)."""
        return self.total / self.count if self.count else 0.0

    def reset(self) -> None:
        """Start a new window."""
        self.count = 0
        self.total = 0.0
        self.maximum = 0.0
