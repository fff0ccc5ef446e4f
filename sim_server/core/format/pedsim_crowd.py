"""A pedsim_ros scenario file as a crowd of the world file (the ``pedsim_scenario`` key).

A crowd entry ``{name: NAME, pedsim_scenario: FILE.xml}`` takes from the scenario
(:mod:`~sim_server.core.format.pedsim_scenario` reads it, strictly and with limits):

* ``<obstacle>``: walls the people avoid (:attr:`CrowdSpec.walls`); with ``pedsim_walls: true``
  also a layer of the world (``<NAME>_walls``) that robots and sensors see;
* ``<waypoint id x y r b>``: a stop reached within ``r`` (or the model's ``stop_distance`` where
  that is larger); ``b="2"`` (sink): people who reach it leave the world; ``b="1"`` (source) is
  drawn by pedsim and does nothing in its simulator, nor here;
* ``<queue>``: a waiting queue (:mod:`~sim_server.core.crowd.queues`): people line up behind
  each other and the first waits at its head;
* ``<attraction>``: a place that draws people nearby for a while
  (:mod:`~sim_server.core.crowd.attractions`);
* ``<agent x y n dx dy type>``: ``n`` people placed in the box of ``dx`` x ``dy`` m centred on
  (x, y) (pedsim lets them overlap; here, where the box is too full for that, they stand in
  rings around (x, y) instead), walking their ``<addwaypoint>``/``<addqueue>`` stops in
  order and round again (standing with none), split into groups of Poisson sizes of mean 1.1
  as pedsim splits a cluster; type 0 and 1 walk alike, type 3 (elders) at most 0.9 m/s;
* the robot agent (type 2): ignored, or with ``pedsim_robot: POSE`` the world's named pose
  ``POSE`` at its place (to spawn the robot there).

Where this differs from pedsim the crowd's load says so in one warning line (elders' halved
pull of the goal; people whose route has a queue walk alone).
"""

from __future__ import annotations

from dataclasses import dataclass

from sim_server.core.format.crowd_entries import NO_QUEUE, AgentEntry, Place, Route, Stop
from sim_server.core.format.pedsim_scenario import (
    AgentType, Attraction, PedsimScenario, Queue, Waypoint, WaypointBehaviour,
)

#: pedsim's mean group size of a cluster (its ``group_size_lambda``).
PEDSIM_GROUP_SIZE_MEAN = 1.1
#: The speed (m/s) pedsim's elders (type 3) walk at most (its ``setVmax(0.9)``).
ELDER_SPEED = 0.9
#: Half the thickness (m) of a cluster's box along a side of 0 (people are drawn in a line).
THIN_SIDE = 1.0e-3


@dataclass(frozen=True)
class ScenarioCrowd:
    """What a scenario gives a crowd.

    Attributes:
        regions: the clusters' boxes (x_min, y_min, x_max, y_max in m) by region name.
        agents: one entry per cluster of people (clusters of 0 people left out).
        walls: the obstacles (x1, y1, x2, y2 in m).
        queues: the waiting queues; the routes' stops name them by index.
        attractions: the attractions.
        robots: where the robot agents (type 2) start (x, y in m).
        differences: what is modelled otherwise than pedsim models it (for one warning line).
    """

    regions: dict[str, tuple[float, float, float, float]]
    agents: tuple[AgentEntry, ...]
    walls: tuple[tuple[float, float, float, float], ...]
    queues: tuple[Queue, ...]
    attractions: tuple[Attraction, ...]
    robots: tuple[tuple[float, float], ...]
    differences: tuple[str, ...]


def scenario_crowd(scenario: PedsimScenario, shown: str, speed: tuple[float, float]) -> ScenarioCrowd:
    """The crowd of ``scenario`` (read from the file ``shown`` names), its people walking at
    ``speed`` (m/s, the range drawn from)."""
    queue_index = {queue.id: index for index, queue in enumerate(scenario.queues)}
    regions: dict[str, tuple[float, float, float, float]] = {}
    agents: list[AgentEntry] = []
    elders = queueing = False
    for cluster in scenario.agents:
        if cluster.n == 0:
            continue
        waypoints: list[tuple[float, float]] = []
        stops: list[Stop] = []
        for name in cluster.route:
            place = scenario.place(name)
            waypoints.append((place.x, place.y))
            if isinstance(place, Waypoint):
                stops.append(Stop(radius=place.radius, sink=place.behaviour is WaypointBehaviour.SINK, queue=NO_QUEUE))
            else:
                stops.append(Stop(queue=queue_index[place.id]))
        has_queue = any(stop.queue != NO_QUEUE for stop in stops)
        queueing |= has_queue and cluster.n > 1
        if cluster.dx == 0.0 and cluster.dy == 0.0:
            start = Place(point=(cluster.x, cluster.y))
        else:
            region = f"<agent> of line {cluster.line}"
            half_x, half_y = max(cluster.dx / 2.0, THIN_SIDE), max(cluster.dy / 2.0, THIN_SIDE)
            regions[region] = (cluster.x - half_x, cluster.y - half_y, cluster.x + half_x, cluster.y + half_y)
            start = Place(point=(cluster.x, cluster.y), region=region)
        entry_speed = speed
        if cluster.type is AgentType.ELDER:
            elders = True
            entry_speed = (min(speed[0], ELDER_SPEED), min(speed[1], ELDER_SPEED))
        agents.append(AgentEntry(
            count=cluster.n, start=start, route=Route(tuple(waypoints), None, True, (0.0, 0.0), tuple(stops)),
            speed=entry_speed, group=False, location=f"{shown}:{cluster.line}: <agent>",
            group_size_mean=0.0 if has_queue else PEDSIM_GROUP_SIZE_MEAN,
        ))
    differences = []
    if elders:
        differences.append(f"elders (type 3) walk at most {ELDER_SPEED:g} m/s; pedsim's halved pull of their goal is not modelled")
    if queueing:
        differences.append("people whose route has a queue walk alone (pedsim may group them and queue each alone)")
    return ScenarioCrowd(
        regions=regions,
        agents=tuple(agents),
        walls=tuple((o.x1, o.y1, o.x2, o.y2) for o in scenario.obstacles),
        queues=scenario.queues,
        attractions=scenario.attractions,
        robots=tuple((robot.x, robot.y) for robot in scenario.robots),
        differences=tuple(differences),
    )
