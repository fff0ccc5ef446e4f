"""Steps requested while the world is paused, carried out by its loop in slices.

A request of a million steps must not block the loop that serves every other request: the loop
calls :meth:`StepQueue.run` with a budget of wall seconds and carries on with its other work in
between. Each request finishes once: with None when all its steps are done, or with the reason
it stopped (the world was resumed, reset or replaced, its caller gave up, the server is going).
Units: wall seconds.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Callable

from sim_server.core import limits
from sim_server.core.errors import RequestError

#: Wall seconds of stepping between two servings of the loop's other work.
STEP_SLICE = 0.05
#: What a number of steps beyond the limit may be, where it came in an unsigned field.
UNSIGNED_HINT = "a negative number sent by a client arrives as a huge unsigned one"


def check_steps(steps: int, paused: bool, unsigned: bool = False) -> None:
    """RequestError unless ``steps`` steps can be queued now: from 1 to
    :data:`~sim_server.core.limits.MAX_STEPS_PER_REQUEST`, the world ``paused``. With
    ``unsigned`` (the number came in an unsigned field, as ROS's ``steps``), a number beyond the
    limit is said to be perhaps a negative one (:data:`UNSIGNED_HINT`)."""
    if steps < 1 or steps > limits.MAX_STEPS_PER_REQUEST:
        hint = f" ({UNSIGNED_HINT})" if unsigned and steps > limits.MAX_STEPS_PER_REQUEST else ""
        raise RequestError(f"steps must be from 1 to {limits.MAX_STEPS_PER_REQUEST}, got {steps}{hint}")
    if not paused:
        raise RequestError("the world is running: pause it before stepping it")


@dataclass
class StepRequest:
    """``steps`` to do, ``done`` so far; ``finished`` is called once with None (all done) or
    the reason they stopped; ``on_step`` after each step with the number done; ``stop_reason``
    before each: a reason to stop there, or None."""

    steps: int
    finished: Callable[[str | None], None]
    done: int = 0
    on_step: Callable[[int], None] | None = None
    stop_reason: Callable[[], str | None] | None = None


class StepQueue:
    """Step requests in order, carried out with ``step_once`` (one physics step)."""

    def __init__(self, step_once: Callable[[], None]) -> None:
        self._step_once = step_once
        self._queued: deque[StepRequest] = deque()

    @property
    def stepping(self) -> bool:
        """Whether requests wait for their steps."""
        return bool(self._queued)

    def add(self, request: StepRequest) -> StepRequest:
        """Queue ``request`` (after those before it)."""
        self._queued.append(request)
        return request

    def run(self, budget: float = STEP_SLICE) -> None:
        """Carry out queued requests for about ``budget`` wall seconds."""
        end = time.monotonic() + budget
        queue = self._queued
        while queue:
            queued = queue[0]
            while queued.done < queued.steps:
                reason = queued.stop_reason() if queued.stop_reason is not None else None
                if reason is not None:
                    queue.popleft()
                    queued.finished(reason)
                    break
                self._step_once()
                queued.done += 1
                if queued.on_step is not None:
                    queued.on_step(queued.done)
                if time.monotonic() >= end and queued.done < queued.steps:
                    return
            else:
                queue.popleft()
                queued.finished(None)

    def abort(self, reason: str) -> int:
        """Finish every queued request with ``reason``; returns how many there were."""
        count = len(self._queued)
        while self._queued:
            self._queued.popleft().finished(reason)
        return count
