"""Crowds in the world file: who walks where, and the crowd models' parameters, read and checked
(the ``pedestrians`` key of ours; :mod:`sim_server.core.crowd` makes them walk).

The reference's world format has no people; this key of ours sits beside its keys (the
reference does not read it). A world file lists crowds::

    pedestrians:
      - name: visitors            # its people are visitors_0, visitors_1, ...
        model: social_force       # or orca
        radius: 0.3               # m, each body
        speed: [1.08, 1.6]        # m/s, preferred walking speed (drawn per person) or one number
        update_rate: 20           # Hz of the crowd model (0: every physics step)
        layers: [2d]              # walls they avoid and layers that sense them (default: all)
        seed: 7                   # optional: else the world's seed decides
        robot_visible: true       # false: people ignore robots when they decide (still collide)
        parameters: {social_factor: 5.1}   # the model's parameters by name
        regions: {hall: [0, 0, 10, 8]}     # x_min, y_min, x_max, y_max (m)
        agents:
          - count: 10
            start: hall           # a point [x, y] or a region (free places drawn in it)
            goals: hall           # random goals in a region, or
            waypoints: [[5, 3], [5, 6]]    # visited in order
            loop: true            # after the last waypoint, the first again (else stand there)
            wait: [0, 2]          # s at each goal (one number or a range)
            group: true           # the entry's people walk together
        spawners:
          - at: [1, 1]            # a point or a region
            rate: 0.5             # people a second (a Poisson process, seeded)
            limit: 20             # most of its people at once
            total: 100            # most it ever makes (default: no end)
            size: 2               # people per arrival, walking together
            waypoints: [[9, 1]]   # a spawned person leaves the world at its last waypoint
      - name: station             # a pedsim_ros scenario file: its walls, stops, queues,
        pedsim_scenario: station.xml   # attractions and people (see pedsim_crowd)
        pedsim_walls: true        # its walls also a layer robots and sensors see
        pedsim_robot: robot_start # its robot agent (type 2) as a named pose

Everything here is checked against the limits (:mod:`sim_server.core.limits`); where the walls
come in (goals inside walls, goals out of reach) the crowd checks as the world loads.
"""

from __future__ import annotations

import logging
import math
from dataclasses import astuple, dataclass, fields, replace
from typing import Any

import numpy as np

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format.bounded_read import shown_path
from sim_server.core.format.crowd_entries import AgentEntry, Place, Route, SpawnerEntry
from sim_server.core.format.pedsim_crowd import ScenarioCrowd, scenario_crowd
from sim_server.core.format.pedsim_scenario import Attraction, Queue, read_pedsim_scenario
from sim_server.core.format.yaml_parsing import resolve_path
from sim_server.core.format.yaml_reader import YamlReader, describe

LOGGER = logging.getLogger("sim_server")


#: The cutoff exponent that skips nothing (finite: the kernel is compiled with fastmath).
NO_CUTOFF = 1.0e300


@dataclass(frozen=True)
class SocialForceParameters:
    """The social force model's parameters (:mod:`sim_server.core.crowd.social_force`); the
    defaults are pedsim's.

    Attributes:
        relaxation_time: tau of the desired force (s).
        desired_factor: weight of the desired force.
        goal_threshold: within it (m) of the goal the desired force only brakes.
        social_factor: weight of the social force (m/s^2).
        lambda_importance: weight of the relative velocity in the interaction vector (s).
        gamma: ``B = gamma |D|`` (m).
        n: angular range of the sideways part.
        n_prime: angular range of the slowing part.
        neighbor_range: other agents within it (m) interact (pedsim's neighbourhood).
        obstacle_factor: weight of the wall force (m/s^2).
        obstacle_sigma: decay length of the wall force (m).
        obstacle_threshold: walls farther than it (m) from the body push nothing.
        coherence_factor, group_repulsion_factor, gaze_factor: weights of the group forces.
        group_repulsion_threshold: members nearer than it (m) push each other apart.
        stop_distance: within it (m) of its goal an agent stands (pysocialforce's 0.5 m).
        max_speed_multiplier: the speed cap is this times the preferred speed: pysocialforce's
            1.3 (its ``max_speed_multiplier``), the default; pedsim caps at the preferred speed
            itself (its ``vmax``): 1.
        wrap_angle: theta wrapped to (-pi, pi] as pedsim (False only to compare with pysocialforce).
        force_cutoff: pairs whose social force is surely below it (m/s^2, before
            ``social_factor``) are skipped without computing it; 0 computes every pair.
        robot_distance_scaling: a robot's distance (from its footprint) is divided by it in the
            social force, so that people give robots room from farther away (pedsim's
            ``robotPosDiffScalingFactor``, 5).
        random_factor: weight of pedsim_ros's random force (its ``force_random``, 0.1; m/s^2
            per unit of deviation; 0: off), :mod:`~sim_server.core.crowd.pedsim_forces`.
        random_fading: the random force fades from one deviation to the next over this (s;
            pedsim_ros's fading duration, 1 s).
        along_wall_factor: weight of pedsim_ros's along-wall force (its ``force_wall``, 2.0;
            m/s^2; 0: off), which slides people stuck against a wall along it.
    """

    relaxation_time: float = 0.5
    desired_factor: float = 1.0
    goal_threshold: float = 0.2
    social_factor: float = 5.1
    lambda_importance: float = 2.0
    gamma: float = 0.35
    n: float = 2.0
    n_prime: float = 3.0
    neighbor_range: float = 10.0
    obstacle_factor: float = 10.0
    obstacle_sigma: float = 0.2
    obstacle_threshold: float = 3.0
    coherence_factor: float = 2.0
    group_repulsion_factor: float = 1.0
    group_repulsion_threshold: float = 0.55
    gaze_factor: float = 3.0
    stop_distance: float = 0.5
    max_speed_multiplier: float = 1.3
    wrap_angle: bool = True
    force_cutoff: float = 1.0e-6
    robot_distance_scaling: float = 5.0
    random_factor: float = 0.1
    random_fading: float = 1.0
    along_wall_factor: float = 2.0

    def array(self) -> np.ndarray:
        """The parameters in field order, as the compiled step takes them (the cutoff as the
        exponent beyond which ``exp(-x)`` is below it)."""
        values = [float(value) for value in astuple(self)]
        cutoff = [field.name for field in fields(self)].index("force_cutoff")
        values[cutoff] = -math.log(self.force_cutoff) if self.force_cutoff > 0.0 else NO_CUTOFF
        return np.array(values, dtype=np.float64)


@dataclass(frozen=True)
class OrcaParameters:
    """ORCA's parameters (:mod:`sim_server.core.crowd.orca`); the defaults are CrowdNav's ORCA
    policy's (the social navigation benchmarks').

    Attributes:
        neighbor_distance: other agents within it (m) are considered.
        max_neighbors: at most this many of them, the nearest.
        time_horizon: how far ahead (s) agents avoid each other.
        time_horizon_obstacles: how far ahead (s) agents avoid walls.
        max_speed_multiplier: the speed limit is this times the preferred speed.
        stop_distance: within it (m) of its goal an agent stands.
    """

    neighbor_distance: float = 10.0
    max_neighbors: int = 10
    time_horizon: float = 5.0
    time_horizon_obstacles: float = 5.0
    max_speed_multiplier: float = 1.0
    stop_distance: float = 0.2

    def array(self) -> np.ndarray:
        """The parameters in field order, as the compiled step takes them."""
        return np.array([float(value) for value in astuple(self)], dtype=np.float64)


#: The crowd models by the name the world file gives them.
MODELS = {"social_force": SocialForceParameters, "orca": OrcaParameters}
#: Default radius of a pedestrian's body (m).
DEFAULT_RADIUS = 0.3
#: Default preferred walking speeds (m/s): pedsim's 1.34 +- 0.26, drawn uniformly.
DEFAULT_SPEED = (1.08, 1.60)
#: Default crowd update rate (Hz): pedsim's simulator runs its agents at 25 Hz.
DEFAULT_UPDATE_RATE = 25.0
#: Default side of the walking grid's cells (m).
DEFAULT_NAVIGATION_CELL = 0.2
#: Default candidate goals drawn in each region.
DEFAULT_GOALS_PER_REGION = 16

#: The range of each model parameter read as a number, by field name (those listed neither here
#: nor in :data:`WHOLE_PARAMETER_RANGES` are not read from files).
PARAMETER_RANGES: dict[str, limits.Range] = {
    "relaxation_time": limits.CROWD_TIME,
    "time_horizon": limits.CROWD_TIME,
    "time_horizon_obstacles": limits.CROWD_TIME,
    "goal_threshold": limits.CROWD_LENGTH,
    "neighbor_range": limits.CROWD_LENGTH,
    "neighbor_distance": limits.CROWD_LENGTH,
    "gamma": limits.CROWD_DIVISOR_LENGTH,
    "obstacle_sigma": limits.CROWD_DIVISOR_LENGTH,
    "obstacle_threshold": limits.CROWD_LENGTH,
    "group_repulsion_threshold": limits.CROWD_LENGTH,
    "stop_distance": limits.CROWD_LENGTH,
    "lambda_importance": limits.CROWD_FACTOR,
    "desired_factor": limits.CROWD_FACTOR,
    "social_factor": limits.CROWD_FACTOR,
    "n": limits.CROWD_FACTOR,
    "n_prime": limits.CROWD_FACTOR,
    "obstacle_factor": limits.CROWD_FACTOR,
    "coherence_factor": limits.CROWD_FACTOR,
    "group_repulsion_factor": limits.CROWD_FACTOR,
    "gaze_factor": limits.CROWD_FACTOR,
    "force_cutoff": limits.CROWD_FACTOR,
    "max_speed_multiplier": limits.SPEED_CAP_MULTIPLIER,
    "robot_distance_scaling": limits.ROBOT_DISTANCE_SCALING,
    "random_factor": limits.CROWD_FACTOR,
    "random_fading": limits.CROWD_TIME,
    "along_wall_factor": limits.CROWD_FACTOR,
}
#: The range of each model parameter read as a whole number, by field name.
WHOLE_PARAMETER_RANGES: dict[str, limits.Range] = {"max_neighbors": limits.ORCA_NEIGHBORS}


@dataclass(frozen=True)
class CrowdSpec:
    """A validated crowd of the world file.

    The attributes are its keys; beyond them:

    Attributes:
        walls: wall segments x1, y1, x2, y2 (m, world frame) the people avoid besides those of
            their layers (a pedsim scenario's obstacles).
        queues: waiting queues (pedsim's), which stops of the routes name by index.
        attractions: places that draw people nearby for a while (pedsim's).
        walls_layer: the layer the world adds for :attr:`walls` (``pedsim_walls``), or None.
        robot_poses: named poses (name, x, y in m) the world adds (``pedsim_robot``).
    """

    name: str
    model: str
    parameters: SocialForceParameters | OrcaParameters
    radius: float
    speed: tuple[float, float]
    update_rate: float
    layers: tuple[str, ...]
    seed: int | None
    robot_visible: bool
    regions: dict[str, tuple[float, float, float, float]]
    goals_per_region: int
    navigation_cell: float
    agents: tuple[AgentEntry, ...]
    spawners: tuple[SpawnerEntry, ...]
    location: str
    walls: tuple[tuple[float, float, float, float], ...] = ()
    queues: tuple[Queue, ...] = ()
    attractions: tuple[Attraction, ...] = ()
    walls_layer: str | None = None
    robot_poses: tuple[tuple[str, float, float], ...] = ()

    @property
    def initial_count(self) -> int:
        """People placed as the world loads."""
        return sum(entry.count for entry in self.agents)


def parse_crowds(reader: YamlReader, layer_names: set[str]) -> tuple[CrowdSpec, ...]:
    """The world file's ``pedestrians`` list (empty without one).

    Raises:
        ConfigError: naming the file, the crowd and the key at fault.
    """
    entries = reader.get_map_list("pedestrians", [])
    if len(entries) > limits.MAX_CROWDS:
        raise reader.error(f"must list at most {limits.MAX_CROWDS} crowds, got {len(entries)}", "pedestrians")
    crowds: list[CrowdSpec] = []
    for entry in entries:
        crowd = _parse_crowd(entry, layer_names)
        if any(other.name == crowd.name for other in crowds):
            raise entry.error(f'names a crowd "{crowd.name}" that exists already', "name")
        crowds.append(crowd)
    people = sum(crowd.initial_count for crowd in crowds)
    if people > limits.MAX_PEDESTRIANS:
        raise reader.error(f"places {people} pedestrians, more than the limit of {limits.MAX_PEDESTRIANS}", "pedestrians")
    spawners = sum(len(crowd.spawners) for crowd in crowds)
    if spawners > limits.MAX_SPAWNERS:
        raise reader.error(
            f"lists {spawners} spawners, more than the limit of {limits.MAX_SPAWNERS} (each is checked on every "
            "crowd update): one spawner with a region as its place covers many doors",
            "pedestrians",
        )
    return tuple(crowds)


def _parse_crowd(entry: YamlReader, layer_names: set[str]) -> CrowdSpec:
    name = entry.get_name("name")
    if not name:
        raise entry.error("must not be empty", "name")
    entry.rename(f'{entry.location} ("{name}")')
    model = entry.get_str("model", "social_force")
    if model not in MODELS:
        raise entry.error(f"must be one of {', '.join(MODELS)}, got {describe(model)}", "model")
    parameters = _parse_parameters(entry, MODELS[model]())
    radius = entry.get_float("radius", DEFAULT_RADIUS, within=limits.PEDESTRIAN_RADIUS)
    speed = _speed(entry, "speed", DEFAULT_SPEED)
    update_rate = entry.get_float("update_rate", DEFAULT_UPDATE_RATE, within=limits.CROWD_UPDATE_RATE)
    if 0.0 < update_rate < limits.MIN_CROWD_UPDATE_RATE:
        raise entry.error(
            f"must be 0 (every physics step) or at least {limits.MIN_CROWD_UPDATE_RATE:g} Hz, got {update_rate:g}", "update_rate"
        )
    layers = tuple(dict.fromkeys(entry.get_name_list("layers", [], scalar_ok=True)))
    for layer in layers:
        if layer not in layer_names:
            known = ", ".join(sorted(layer_names)) or "none"
            raise entry.error(f'names layer "{layer}", which the world does not have (its layers: {known})', "layers")
    seed = entry.get_int("seed", None, within=limits.SEED) if entry.has("seed") else None
    entry.ignore("seed")
    robot_visible = entry.get_bool("robot_visible", True)
    regions = _parse_regions(entry)
    goals_per_region = entry.get_int("goals_per_region", DEFAULT_GOALS_PER_REGION, within=limits.GOALS_PER_REGION)
    cell = entry.get_float("navigation_cell", DEFAULT_NAVIGATION_CELL, within=limits.NAVIGATION_CELL)
    agents = tuple(_parse_agents(item, regions, speed) for item in entry.get_map_list("agents", []))
    spawners = tuple(_parse_spawner(item, regions, speed) for item in entry.get_map_list("spawners", []))
    scenario = _parse_scenario(entry, name, speed)
    walls_layer = None
    robot_poses: tuple[tuple[str, float, float], ...] = ()
    if scenario is not None:
        regions = {**regions, **scenario.regions}
        agents = scenario.agents + agents
        if entry.get_bool("pedsim_walls", False):
            walls_layer = f"{name}_walls"
            if walls_layer in layer_names:
                raise entry.error(f'makes layer "{walls_layer}" of the scenario\'s walls, but the world has one of that name', "pedsim_walls")
            if layers:
                layers = (*layers, walls_layer)
        if entry.has("pedsim_robot"):
            pose = entry.get_name("pedsim_robot")
            if len(scenario.robots) != 1:
                raise entry.error(
                    f"names a pose for the scenario's robot agent (type 2), but it has {len(scenario.robots)} of them "
                    "(pedsim drives one)", "pedsim_robot")
            robot_poses = ((pose, *scenario.robots[0]),)
    else:
        for key in ("pedsim_walls", "pedsim_robot"):
            if entry.has(key):
                raise entry.error("needs a pedsim_scenario", key)
    entry.ensure_all_keys_used()
    return CrowdSpec(
        name=name, model=model, parameters=parameters, radius=radius, speed=speed, update_rate=update_rate, layers=layers,
        seed=seed, robot_visible=robot_visible, regions=regions, goals_per_region=goals_per_region, navigation_cell=cell, agents=agents,
        spawners=spawners, location=entry.location,
        walls=scenario.walls if scenario is not None else (),
        queues=scenario.queues if scenario is not None else (),
        attractions=scenario.attractions if scenario is not None else (),
        walls_layer=walls_layer, robot_poses=robot_poses,
    )


def _parse_scenario(entry: YamlReader, name: str, speed: tuple[float, float]) -> ScenarioCrowd | None:
    """The crowd of the entry's ``pedsim_scenario`` file (None without one); what is modelled
    otherwise than pedsim models it goes to the log in one line."""
    if not entry.has("pedsim_scenario"):
        return None
    path = resolve_path(entry.get_str("pedsim_scenario"), entry.file)
    try:
        scenario = read_pedsim_scenario(path)
    except ConfigError as exc:  # the scenario's own line, after the world file's
        raise ConfigError(f"{str(entry.error('', 'pedsim_scenario')).rstrip()}: {exc}") from None
    for kind, count, most in (("queues", len(scenario.queues), limits.MAX_QUEUES),
                              ("attractions", len(scenario.attractions), limits.MAX_ATTRACTIONS)):
        if count > most:
            raise entry.error(f"{shown_path(path)} has {count} {kind}, more than the limit of {most} of a crowd", "pedsim_scenario")
    crowd = scenario_crowd(scenario, shown_path(path), speed)
    if crowd.differences:
        LOGGER.warning("%s: crowd \"%s\": modelled otherwise than pedsim: %s", shown_path(path), name, "; ".join(crowd.differences))
    return crowd


def _parse_parameters(entry: YamlReader, defaults: Any) -> Any:
    reader = entry.get_map("parameters", {})
    values: dict[str, Any] = {}
    for field in fields(defaults):
        if field.name in WHOLE_PARAMETER_RANGES and reader.has(field.name):
            values[field.name] = reader.get_int(field.name, within=WHOLE_PARAMETER_RANGES[field.name])
        elif field.name in PARAMETER_RANGES and reader.has(field.name):
            values[field.name] = reader.get_float(field.name, within=PARAMETER_RANGES[field.name])
    reader.ensure_all_keys_used()
    return replace(defaults, **values)


def _speed(entry: YamlReader, key: str, default: tuple[float, float]) -> tuple[float, float]:
    """A speed (m/s) or a range [low, high] of them."""
    value = entry.get_any(key, default)
    if entry.has(key) and isinstance(value, (int, float)) and not isinstance(value, bool):
        speed = entry.get_float(key, within=limits.WALKING_SPEED)
        return speed, speed
    low, high = entry.get_floats(key, 2, default, within=limits.WALKING_SPEED)
    if low > high:
        raise entry.error(f"must be [low, high] with low <= high, got {describe(value)}", key)
    return low, high


def _wait(entry: YamlReader) -> tuple[float, float]:
    if not entry.has("wait"):
        return 0.0, 0.0
    value = entry.get_any("wait")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        wait = entry.get_float("wait", within=limits.WAIT)
        return wait, wait
    low, high = entry.get_floats("wait", 2, within=limits.WAIT)
    if low > high:
        raise entry.error(f"must be [low, high] with low <= high, got {describe(value)}", "wait")
    return low, high


def _point(entry: YamlReader, key: str, value: Any, what: str) -> tuple[float, float]:
    if not isinstance(value, list) or len(value) != 2:
        raise entry.error(f"{what} must be a point [x, y] (m), got {describe(value)}", key)
    point = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (int, float)) or not limits.COORDINATE.contains(float(item)):
            raise entry.error(f"{what} must be a point [x, y] of {limits.COORDINATE.describe()}, got {describe(value)}", key)
        point.append(float(item))
    return point[0], point[1]


def _parse_regions(entry: YamlReader) -> dict[str, tuple[float, float, float, float]]:
    reader = entry.get_map("regions", {})
    names = reader.keys()
    if len(names) > limits.MAX_REGIONS:
        raise entry.error(f"must name at most {limits.MAX_REGIONS} regions, got {len(names)}", "regions")
    regions = {}
    for name in names:
        x0, y0, x1, y1 = reader.get_floats(name, 4, within=limits.COORDINATE)
        if not (x0 < x1 and y0 < y1):
            raise reader.error(f"must be [x_min, y_min, x_max, y_max] with min < max, got {[x0, y0, x1, y1]}", name)
        regions[name] = (x0, y0, x1, y1)
    return regions


def _place(entry: YamlReader, key: str, regions: dict[str, Any], default: Any = None) -> Place:
    value = entry.get_any(key) if default is None else entry.get_any(key, default)
    if isinstance(value, str):
        if value not in regions:
            known = ", ".join(sorted(regions)) or "none"
            raise entry.error(f'names region "{value}", which the crowd does not have (its regions: {known})', key)
        return Place(region=value)
    return Place(point=_point(entry, key, value, "a place"))


def _route(entry: YamlReader, regions: dict[str, Any], loop_default: bool) -> Route:
    waypoints: tuple[tuple[float, float], ...] = ()
    if entry.has("waypoints"):
        raw = entry.get_any("waypoints")
        if not isinstance(raw, list) or not raw:
            raise entry.error(f"must be a non-empty list of points [x, y], got {describe(raw)}", "waypoints")
        if len(raw) > limits.MAX_WAYPOINTS:
            raise entry.error(f"must list at most {limits.MAX_WAYPOINTS} points, got {len(raw)}", "waypoints")
        waypoints = tuple(_point(entry, "waypoints", item, f"waypoint {index}") for index, item in enumerate(raw))
    goals = None
    if entry.has("goals"):
        goals = entry.get_str("goals")
        if goals not in regions:
            known = ", ".join(sorted(regions)) or "none"
            raise entry.error(f'names region "{goals}", which the crowd does not have (its regions: {known})', "goals")
        if waypoints:
            raise entry.error("and waypoints exclude each other: people walk either", "goals")
    loop = entry.get_bool("loop", loop_default)
    return Route(waypoints, goals, loop, _wait(entry))


def _parse_agents(entry: YamlReader, regions: dict[str, Any], speed: tuple[float, float]) -> AgentEntry:
    count = entry.get_int("count", 1, within=limits.PEOPLE_OF_ENTRY)
    start = _place(entry, "start", regions)
    route = _route(entry, regions, True)
    group = entry.get_bool("group", False)
    entry_speed = _speed(entry, "speed", speed)
    entry.ensure_all_keys_used()
    return AgentEntry(count, start, route, entry_speed, group, entry.location)


def _parse_spawner(entry: YamlReader, regions: dict[str, Any], speed: tuple[float, float]) -> SpawnerEntry:
    at = _place(entry, "at", regions)
    rate = entry.get_float("rate", within=limits.SPAWN_RATE)
    limit = entry.get_int("limit", within=limits.SPAWNER_LIMIT)
    total = entry.get_int("total", None, within=limits.SPAWNER_TOTAL) if entry.has("total") else None
    entry.ignore("total")
    size = entry.get_int("size", 1, within=limits.ARRIVAL_SIZE)
    route = _route(entry, regions, False)
    if route.idle:
        raise entry.error("gives its people nowhere to go: waypoints or goals are needed (they would pile up at the door)")
    entry_speed = _speed(entry, "speed", speed)
    entry.ensure_all_keys_used()
    if math.isfinite(rate) and size > limit:
        raise entry.error(f"must be at most the limit ({limit}), got {size}", "size")
    return SpawnerEntry(at, rate, limit, total, size, route, entry_speed, entry.location)
