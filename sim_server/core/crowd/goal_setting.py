"""What waiting queues and attractions need of the goals of a crowd's people
(:class:`~sim_server.core.crowd.goals.Goals` provides it): to set a person's goal, to send it on
along its route, who decides for a group, and the copies' random generators."""

from __future__ import annotations

from typing import Protocol

import numpy as np


class GoalSetter(Protocol):
    """Sets the goals of a crowd's people."""

    @property
    def rngs(self) -> list[np.random.Generator]:
        """Each copy's random generator."""

    def set_goal(self, row: int, goal: tuple[float, float], reach: float | None = None, straight: bool = False) -> None:
        """The person at ``row`` walks to ``goal`` (m, crowd frame), by the walking grid unless
        ``straight``; ``reach`` (m) replaces the goal's reach when given."""

    def next_goal(self, row: int, now: float, first: bool = False) -> bool:
        """The person at ``row`` goes on to its route's next stop at sim time ``now`` (s);
        False where it leaves the world."""

    def deciders(self) -> np.ndarray:
        """(N,) bool: people alone and the first of each group (who decide for it)."""
