"""The parts of a crowd's entry in the world file that say who starts where and walks which
way: places, routes and their stops, agent entries and spawners (read by
:mod:`~sim_server.core.format.crowd_file` and :mod:`~sim_server.core.format.pedsim_crowd`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Place:
    """Where people start or spawn: a point (x, y in m) or a named region; both (a pedsim
    cluster's box and its centre): drawn in the region, or in rings around the point where
    the region is too full."""

    point: tuple[float, float] | None = None
    region: str | None = None


#: A stop that is no queue (:attr:`Stop.queue`).
NO_QUEUE = -1


@dataclass(frozen=True)
class Stop:
    """What a waypoint of a route is besides a point (pedsim's waypoints and queues).

    Attributes:
        radius: a person has reached it within this (m) of the point, or within the model's
            ``stop_distance`` where that is larger.
        sink: people who reach it leave the world (pedsim's ``b="2"``).
        queue: the index in :attr:`CrowdSpec.queues` of the waiting queue it is
            (:data:`NO_QUEUE`: none); the waypoint is the queue's head.
    """

    radius: float = 0.0
    sink: bool = False
    queue: int = NO_QUEUE


#: A waypoint that is only a point.
PLAIN_STOP = Stop()


@dataclass(frozen=True)
class Route:
    """Where people go.

    Attributes:
        waypoints: points (m) visited in order.
        goals: a region in which goals are drawn at random (instead of waypoints).
        loop: after the last waypoint comes the first again; otherwise people stand at the last
            (spawned people leave the world there).
        wait: the range (s) of the time spent at each goal.
        stops: what each waypoint is beyond a point, one per waypoint (empty: points all).
    """

    waypoints: tuple[tuple[float, float], ...] = ()
    goals: str | None = None
    loop: bool = True
    wait: tuple[float, float] = (0.0, 0.0)
    stops: tuple[Stop, ...] = ()

    def stop(self, index: int) -> Stop:
        """What waypoint ``index`` is (a plain point where :attr:`stops` is empty)."""
        return self.stops[index] if self.stops else PLAIN_STOP

    @property
    def idle(self) -> bool:
        """Whether people of this route stand where they are."""
        return not self.waypoints and self.goals is None


@dataclass(frozen=True)
class AgentEntry:
    """People placed when the world loads: ``count`` of them at ``start``, walking ``route``.

    Attributes:
        group: the entry's people walk together.
        group_size_mean: where > 0, the people are split into groups of Poisson sizes of this
            mean (sizes of 0 drawn again), as pedsim divides an agent cluster; ``group`` is then
            False.
    """

    count: int
    start: Place
    route: Route
    speed: tuple[float, float]
    group: bool
    location: str
    group_size_mean: float = 0.0


@dataclass(frozen=True)
class SpawnerEntry:
    """People arriving while the world runs.

    Attributes:
        at: where they appear.
        rate: arrivals a second (mean of a Poisson process).
        limit: most of this spawner's people in the world at once.
        total: most arrivals ever (None: no end).
        size: people per arrival (more than one walk as a group).
    """

    at: Place
    rate: float
    limit: int
    total: int | None
    size: int
    route: Route
    speed: tuple[float, float]
    location: str
