"""A world's crowds as one collection: the pedestrians' side of the world (``world.crowds``).

Iterating gives each :class:`~sim_server.core.crowd.crowd.Crowd` (one per crowd of the world file
and copy of the world); besides, the collection finds, adds and removes people by name, counts
them, steps them and gives their bodies as sensors and pictures see them. Names are unique among
models and people: :meth:`Crowds.spawn` asks the world whether one is taken.

Units: metres, seconds; positions in the world frame unless said.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator, Sequence

import numpy as np

from sim_server.core import limits
from sim_server.core.errors import EntityError, RequestError
from sim_server.core.format.entity_names import model_name_problem

if TYPE_CHECKING:  # a world without people never imports the crowd models
    from sim_server.core.crowd.crowd import Crowd


class Crowds:
    """The crowds of a world (see the module's docstring); empty for a world without people."""

    def __init__(self) -> None:
        self._crowds: list[Crowd] = []

    def add(self, crowd: Crowd) -> None:
        """Take ``crowd`` in (the world does, as it loads)."""
        self._crowds.append(crowd)

    def __iter__(self) -> Iterator[Crowd]:
        return iter(self._crowds)

    def __len__(self) -> int:
        return len(self._crowds)

    def __getitem__(self, index: int) -> Crowd:
        return self._crowds[index]

    def __bool__(self) -> bool:
        return bool(self._crowds)

    @property
    def count(self) -> int:
        """People in the world now, every crowd's."""
        return sum(crowd.people.count for crowd in self._crowds)

    def names(self) -> list[str]:
        """The crowds' names, in order."""
        return [crowd.name for crowd in self._crowds]

    def named(self, name: str) -> Crowd:
        """The crowd called ``name`` (:class:`EntityError` when there is none)."""
        for crowd in self._crowds:
            if crowd.name == name:
                return crowd
        raise EntityError(f'crowd with name "{name}" does not exist')

    def has(self, name: str) -> bool:
        """Whether a person is called ``name``."""
        return any(crowd.has(name) for crowd in self._crowds)

    def find(self, name: str) -> tuple[Crowd, int] | None:
        """The crowd and row of the person called ``name`` (None when there is none)."""
        for crowd in self._crowds:
            if crowd.has(name):
                return crowd, crowd.row_of(name)
        return None

    def spawn(self, crowd: str, position: tuple[float, float], goals: Sequence[tuple[float, float]] = (),
              speed: float | None = None, name: str = "", taken: Callable[[str], bool] = lambda name: False) -> str:
        """Add a person to crowd ``crowd`` (see :meth:`Crowd.add
        <sim_server.core.crowd.crowd.Crowd.add>`); ``name`` must be free (``taken(name)`` false,
        no person called so; empty: ``<crowd>_<number>``). Returns its name.

        Raises:
            EntityError: no such crowd, or the name is taken.
            RequestError: a bad name, place, goal or speed; the world holds as many people as it may.
        """
        chosen = self.named(crowd)
        if name:
            problem = model_name_problem(name)
            if problem is not None:
                raise RequestError(problem)
            if taken(name) or self.has(name):
                raise EntityError(f'an entity named "{name}" exists already')
        people = self.count
        if people >= limits.MAX_PEDESTRIANS:
            raise RequestError(f"the world holds {people} pedestrians, the limit")
        return chosen.add(position, goals, speed, name)

    def remove(self, name: str) -> None:
        """Remove the person called ``name`` (:class:`EntityError` when there is none)."""
        found = self.find(name)
        if found is None:
            raise EntityError(f'pedestrian with name "{name}" does not exist')
        found[0].remove(name)

    def before_step(self, iterations: int, now: float) -> None:
        """A physics step is about to run (``iterations`` done, sim time ``now`` s): every crowd
        updates its people when due."""
        for crowd in self._crowds:
            crowd.before_step(iterations, now)

    def circles(self) -> tuple[np.ndarray, np.ndarray]:
        """Every person's body: (N, 3) centre x, y and radius (m, world frame) and (N,) int64
        collision bits."""
        if not self._crowds:
            return np.zeros((0, 3)), np.zeros(0, dtype=np.int64)
        circles = [crowd.circles() for crowd in self._crowds]
        bits = [np.full(len(c), crowd.bits, dtype=np.int64) for crowd, c in zip(self._crowds, circles)]
        if len(circles) == 1:
            return circles[0], bits[0]
        return np.concatenate(circles), np.concatenate(bits)

    def reset(self) -> None:
        """Every crowd as loaded."""
        for crowd in self._crowds:
            crowd.reset()

    def remove_added(self) -> None:
        """Remove the people that requests added (the file's and the spawners' stay)."""
        for crowd in self._crowds:
            crowd.remove_added()

    def restore(self) -> None:
        """Every person back where it entered, at rest, keeping its goals."""
        for crowd in self._crowds:
            crowd.restore()

    def close(self) -> list[Crowd]:
        """Remove every person; returns the crowds that were (the world stops listening to them)."""
        closed, self._crowds = self._crowds, []
        for crowd in closed:
            crowd.close()
        return closed
