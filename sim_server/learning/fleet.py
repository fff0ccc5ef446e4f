"""Robots doing a navigation task together: in copies of a world, stepped as one.

A :class:`NavigationFleet` loads ``count`` copies of a world side by side in one physics world
(:mod:`sim_server.core.physics.replicas`), with one or more learning robots in each, so that one Box2D
step moves them all, their drives run as one batch and all their lasers are cast in one compiled
call. It holds each robot's goal and distance and computes observations and rewards for all
robots at once, as arrays (robot ``k`` is robot ``k % R`` of copy ``k // R``, R robots a copy).
Every coordinate of the task (area, starts, goals) is in the world's own frame; copy ``i`` lies
at ``replica_offsets[i]``.

Episodes start as the task says (random free starts and goals, the crowds afresh) unless an
:class:`EpisodeLayout` places the robots and people itself (CrowdNav's scenarios,
:mod:`sim_server.learning.crowdnav`). Each robot's episode is measured by
:class:`~sim_server.learning.metrics.EpisodeMetrics`; the environments say how it ends
(:meth:`NavigationFleet.finish`).

Gymnasium's single environment (:class:`~sim_server.learning.navigation_env.NavigationEnv`,
one copy, one robot), its vector environment
(:class:`~sim_server.learning.vector_env.NavigationVectorEnv`, many copies) and PettingZoo's
parallel environment (:class:`~sim_server.learning.parallel_env.NavigationParallelEnv`, one
copy, many robots) are thin wrappers of this class; it imports neither Gymnasium nor ROS.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from sim_server.core import Pose2D, World
from sim_server.core import limits
from sim_server.core.format.world_file import WorldSpec
from sim_server.core.physics.body_memory import BodyBatch
from sim_server.core.physics.replicas import MAX_MARGIN, MAX_REPLICAS, Replicas
from sim_server.core.plugins.capabilities import RayCaster, ScanSource, TwistCommand, VelocityDriven
from sim_server.core.sensing.laser_scanner import scan_all
from sim_server.learning.metrics import EpisodeMetrics, PeopleNow
from sim_server.learning.people import PeopleNearby
from sim_server.learning.task import NavigationTask
from sim_plugins.velocity_command import VelocityCommand

#: Tries to find a free start and goal before giving up (the area is then too crowded).
MAX_PLACEMENT_TRIES = 1000
#: Gap between copies beyond the laser's range (m), so that no laser sees another copy.
REPLICA_GAP = 2.0
#: Most physics steps one action may be held for.
MAX_STEPS_PER_ACTION = 10_000
#: Values of an observation after the laser's beams: the goal (ahead, left) and the speeds
#: (linear, angular; then sideways, for a task with ``max_lateral``).
STATE_VALUES = 4
#: Values per observed person: present (1, else 0 and the rest 0), position (ahead, left) over
#: the laser's range, velocity (ahead, left) over the task's max_linear, in the robot's frame.
PERSON_VALUES = 5


class EpisodeLayout(Protocol):
    """Where episodes start, in place of the task's random starts and goals and the crowds'
    own restart (:class:`~sim_server.learning.crowdnav.CrowdNavEpisodes` is one)."""

    def restart_people(self, fleet: "NavigationFleet", copy: int, rng: np.random.Generator, seed: int | None) -> None:
        """Start copy ``copy``'s people afresh: from ``seed`` where given (an episode seeded so),
        else from ``rng`` (the copy's episode generator)."""

    def robot_start(self, fleet: "NavigationFleet", index: int, rng: np.random.Generator) -> tuple[tuple[float, float], tuple[float, float], float]:
        """Robot ``index``'s start and goal (m, its copy's frame) and heading (rad)."""


def load_world(world: str | Path | WorldSpec, step_size: float, replicas: Replicas | None = None) -> World:
    """The world of a file, or of a world file's spec already read (and perhaps changed)."""
    replicas = replicas or Replicas()
    if isinstance(world, WorldSpec):
        return World.from_spec(world, step_size=step_size, replicas=replicas)
    return World.from_file(world, step_size=step_size, replicas=replicas)


class NavigationFleet:
    """Robots driving to their own goals, ``robots`` of them in each of ``count`` copies of a world.

    Args:
        world_path: the world file, or a world file's spec (:class:`WorldSpec`, read and perhaps
            changed by the caller).
        task: the task (the drive and laser it names must be on every robot).
        count: copies of the world.
        step_size: the physics step (s); the task's control period must be a whole number of them.
        robots: the learning robots of each copy, by their names in the world file (default: the
            task's robot).
        layout: where episodes start (default: the task's random starts and goals).

    Raises:
        ValueError: the task does not fit the world or the step size (the message says why).
        ConfigError: the world file cannot be loaded.
    """

    def __init__(
        self,
        world_path: str | Path | WorldSpec,
        task: NavigationTask,
        count: int = 1,
        step_size: float = 0.01,
        robots: Sequence[str] | None = None,
        layout: EpisodeLayout | None = None,
    ) -> None:
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_REPLICAS:
            raise ValueError(f"count must be a whole number from 1 to {MAX_REPLICAS}, got {count!r:.100}")
        if not isinstance(task, NavigationTask):
            raise ValueError(f"task must be a NavigationTask, got {type(task).__name__}")
        if isinstance(step_size, bool) or not isinstance(step_size, (int, float)) or not limits.STEP_SIZE.contains(step_size):
            raise ValueError(f"step_size must be {limits.STEP_SIZE.describe()}, got {step_size!r:.100}")
        steps = task.control_period / step_size
        if abs(steps - round(steps)) > 1e-9 or round(steps) < 1:
            raise ValueError(
                f"the control period ({task.control_period} s) must be a whole number of steps of {step_size} s"
            )
        if steps > MAX_STEPS_PER_ACTION:
            raise ValueError(
                f"the control period ({task.control_period} s) must be at most {MAX_STEPS_PER_ACTION} steps of {step_size} s"
            )
        robots = [task.robot] if robots is None else robots
        if isinstance(robots, (str, bytes)) or not isinstance(robots, Sequence) or not all(isinstance(name, str) for name in robots):
            raise ValueError(f"robots must be a list of model names, got {robots!r:.200}")
        robots = list(robots)
        if not robots or len(set(robots)) != len(robots):
            raise ValueError(f"the robots must be one or more different names, got {robots!r:.200}")
        self.task = task
        self.layout = layout
        source = world_path
        world_path = world_path.path if isinstance(world_path, WorldSpec) else world_path
        #: Robots in all (copies times robots per copy).
        self.count = count * len(robots)
        self.steps_per_action = int(round(steps))
        world = load_world(source, step_size)
        try:
            lasers = [self._task_parts(world, name, world_path)[2] for name in robots]
            #: The world's walls in its own frame ((N, 4) segments, m): where starts and goals may be.
            self.walls = np.concatenate([layer.world_edges() for layer in world.layers] or [np.empty((0, 4))])
            longest = max(laser.scan_layout.range_max for laser in lasers)
            margin = longest + REPLICA_GAP
            if count > 1 and margin > MAX_MARGIN:
                raise ValueError(
                    f"{world_path}: a laser's range ({longest:g} m) is too long to lay copies of the world apart "
                    f"(at most {MAX_MARGIN - REPLICA_GAP:g} m with more than one copy)"
                )
        except BaseException:
            world.close()
            raise
        if count > 1:
            world.close()
            world = load_world(source, step_size, Replicas(count, margin))
        self.world = world
        try:
            names = [world.replicas.name(name, index) for index in range(count) for name in robots]
            parts = [self._task_parts(world, name, world_path) for name in names]
        except BaseException:
            world.close()
            raise
        self.names = names
        self._index = {name: index for index, name in enumerate(names)}
        self.robots = [robot for robot, _, _ in parts]
        self.drives = [drive for _, drive, _ in parts]
        self.lasers = [laser for _, _, laser in parts]
        self._commands = [drive.command for drive in self.drives]
        #: Each robot's copy, and where that copy lies (m).
        self.copies = np.repeat(np.arange(count), len(robots))
        self.offsets = np.array([(offset.x, offset.y) for offset in world.replica_offsets], dtype=np.float64)[self.copies]
        self._bodies = BodyBatch(robot.first_body.physics_body for robot in self.robots)
        self._scanners = [laser.scanner for laser in self.lasers]
        beam_counts = {scanner.beam_count for scanner in self._scanners}
        ranges = {float(laser.scan_layout.range_max) for laser in self.lasers}
        if len(beam_counts) > 1 or len(ranges) > 1:
            world.close()
            raise ValueError(f"{world_path}: the robots' lasers must have one beam count and range, got {beam_counts} and {ranges}")
        beam_count = beam_counts.pop()
        self.beam_index = np.linspace(0, beam_count - 1, min(task.beams, beam_count)).round().astype(np.int64)
        #: The lasers as the observations use them: only the observed beams are cast.
        self._observed_scanners = [scanner.beams(self.beam_index) for scanner in self._scanners]
        self.laser_range = ranges.pop()
        x_min, y_min, x_max, y_max = task.area
        #: What the goal's coordinates in observations are divided by: the area's diagonal (m).
        self.goal_scale = math.hypot(x_max - x_min, y_max - y_min)
        #: Each robot's goal (m, the world's frame) and its distance to it (m).
        self.goals = np.zeros((self.count, 2))
        self.distances = np.zeros(self.count)
        #: Which robots have been placed (by :meth:`place`) since the fleet was made.
        self.placed = np.zeros(self.count, dtype=bool)
        self._people = PeopleNearby(self, count)
        self._metrics = EpisodeMetrics(task, self.copies, self._people.robot_radii, self._people.present)

    def _task_parts(self, world: World, robot_name: str, world_path: str | Path) -> tuple:
        """The robot ``robot_name``, its drive and its laser, checked."""
        task = self.task
        try:
            robot = world.model(robot_name)
            drive = world.plugins.find(robot, task.drive)
            laser = world.plugins.find(robot, task.laser)
        except Exception as error:  # noqa: BLE001 - EntityError or KeyError: say which in one line
            raise ValueError(f"{world_path}: the task's robot, drive or laser is missing: {error}") from None
        if not (isinstance(drive, VelocityDriven) and isinstance(drive.command, TwistCommand)
                and isinstance(laser, ScanSource) and isinstance(laser, RayCaster)):
            raise ValueError(f"{world_path}: {task.drive} must be a drive (with a velocity command) and {task.laser} a laser")
        if task.max_lateral > 0.0 and not drive.command.uses_lateral:
            raise ValueError(
                f"{world_path}: the task's max_lateral asks for sideways commands, but drive {task.drive!r} of "
                f"{robot_name!r} ({type(drive).__name__}) cannot move sideways (OmniDrive can)"
            )
        return robot, drive, laser

    @property
    def observation_size(self) -> int:
        """Values in one robot's observation: its beams, :data:`STATE_VALUES` (and its sideways
        speed with the task's ``max_lateral``), then :data:`PERSON_VALUES` for each observed person."""
        lateral = 1 if self.task.max_lateral > 0.0 else 0
        return len(self.beam_index) + STATE_VALUES + lateral + PERSON_VALUES * self.task.observed_people

    @property
    def has_people(self) -> bool:
        """Whether the world has crowds (then :meth:`metrics` has the social ones)."""
        return self._people.present

    def place_people(self, copy: int, rng: np.random.Generator, seed: int | None = None) -> None:
        """Start copy ``copy``'s crowds afresh, seeded from ``rng`` (people at new starts with new
        goals), before its robots are placed; a layout may use the episode's ``seed`` instead."""
        if self.layout is not None:
            self.layout.restart_people(self, copy, rng, seed)
        else:
            self._people.restart(copy, rng)

    def metrics(self) -> dict[str, np.ndarray]:
        """The episode so far, per robot (:mod:`sim_server.learning.metrics`): path length (m)
        and time (s), and with people every social navigation metric."""
        return self._metrics.table(self._people.legacy() if self._people.present else {})

    def finish(self, robots: np.ndarray, outcomes: np.ndarray | int) -> None:
        """End the episodes of ``robots`` (an (R,) mask) with ``outcomes`` (one
        :class:`~sim_server.core.crowd.social_metrics.Outcome` each, or one for all): their
        metrics say so and stay as they are until their next episodes."""
        self._metrics.finish(np.asarray(robots, dtype=bool), np.asarray(outcomes))

    def outcomes(self) -> np.ndarray:
        """(R,) how each robot's last episode ended (the Outcome given to :meth:`finish`)."""
        return self._metrics.outcomes()

    @property
    def robot_radii(self) -> np.ndarray:
        """(R,) each robot's bounding radius (m)."""
        return self._people.robot_radii

    def people_now(self) -> PeopleNow | None:
        """Every person now (:class:`~sim_server.learning.metrics.PeopleNow`, positions in each
        copy's frame), or None in a world without crowds."""
        return self._people.now()

    # ---------------------------------------------------------------- episodes
    def place(self, index: int, rng: np.random.Generator) -> None:
        """Start robot ``index``'s episode: at rest at a free start (clear of the walls and of
        the other robots of its copy), facing a random way, with a free goal at least the task's
        ``min_goal_distance`` away (drawn from ``rng``)."""
        self.check_open()
        if self.layout is not None:
            start, goal, heading = self.layout.robot_start(self, index, rng)
        else:
            others = self._others(index)
            people = self._people.around(index)
            if len(people):
                others = np.concatenate([others, people])
            start = self._free_point(rng, None, others)
            goal = self._free_point(rng, start)
            heading = float(rng.uniform(-math.pi, math.pi))
        command = self.drives[index].command
        command.linear = command.angular = 0.0
        if command.uses_lateral:
            command.lateral = 0.0
        offset_x, offset_y = self.offsets[index]
        self.world.set_model_state(self.names[index], Pose2D(start[0] + offset_x, start[1] + offset_y, heading), 0.0, 0.0, 0.0)
        self.goals[index] = goal
        self.distances[index] = math.hypot(goal[0] - start[0], goal[1] - start[1])
        self.placed[index] = True
        self._people.start_episode(index, rng)
        self._metrics.start_episode(index, start, heading)

    def act(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Hold ``actions`` ((count, 2) in [-1, 1], finite: linear, angular; (count, 3) with the
        task's ``max_lateral``: linear, angular, lateral) for one control
        period; the rewards, whether each robot reached its goal, whether it touched anything
        at any step of the period (a robot that touched something keeps its command to the end
        of the period, alone or not: every copy runs the same steps)."""
        self.check_ready()
        task = self.task
        linear = actions[:, 0] * task.max_linear
        lateral = actions[:, 2] * task.max_lateral if task.max_lateral > 0.0 else None
        if task.max_speed > 0.0:  # forward and sideways together at most max_speed
            speed = np.hypot(linear, lateral)
            scale = np.where(speed > task.max_speed, task.max_speed / np.maximum(speed, 1e-300), 1.0)
            linear, lateral = linear * scale, lateral * scale
        VelocityCommand.set_all(
            self._commands, linear.tolist(), (actions[:, 1] * task.max_angular).tolist(),
            None if lateral is None else lateral.tolist(),
        )
        collided = np.zeros(self.count, dtype=bool)
        touched_person = np.zeros(self.count, dtype=bool)
        index = self._index
        people = self._people
        for _ in range(self.steps_per_action):
            self.world.step()
            for contact in self.world.contacts():
                for name, other in ((contact.entity_a, contact.entity_b), (contact.entity_b, contact.entity_a)):
                    if name in index:
                        collided[index[name]] = True
                        if people.present and people.is_person(other):
                            touched_person[index[name]] = True
        poses = self._bodies.poses()
        distances = np.hypot(self.goals[:, 0] - (poses[:, 0] - self.offsets[:, 0]), self.goals[:, 1] - (poses[:, 1] - self.offsets[:, 1]))
        rewards = task.progress_reward * (self.distances - distances) + task.step_reward
        self.distances = distances
        reached = distances <= task.goal_radius
        rewards += np.where(reached, task.goal_reward, 0.0) + np.where(collided, task.collision_reward, 0.0)
        discomfort, everyone = people.after_action(poses, collided, touched_person)
        rewards += np.where(reached | collided, 0.0, discomfort)  # CrowdNav's: an ending action has no discomfort
        local = poses[:, :2] - self.offsets
        self._metrics.after_action(local, self._bodies.velocities()[:, :2], poses[:, 2], self.goals, collided, touched_person,
                                   everyone)
        return rewards, reached, collided

    # ---------------------------------------------------------------- observations
    def observations(self) -> np.ndarray:
        """(count, :attr:`observation_size`) float32: each robot's ranges over the laser's range
        (0 to 1, a miss is 1), its goal in its own frame over the area's diagonal (x ahead, y
        left, -1 to 1) and its speeds over their maxima (-1 to 1)."""
        self.check_open()
        scans = scan_all(self._observed_scanners, self.lasers[0].scene, self.world.time.iterations)
        ranges = np.stack([ranges for ranges, _ in scans]).astype(np.float64)
        ranges = np.where(np.isfinite(ranges), ranges / self.laser_range, 1.0)
        poses = self._bodies.poses()
        velocities = self._bodies.velocities()
        cos, sin = np.cos(poses[:, 2]), np.sin(poses[:, 2])
        dx = self.goals[:, 0] - (poses[:, 0] - self.offsets[:, 0])
        dy = self.goals[:, 1] - (poses[:, 1] - self.offsets[:, 1])
        task = self.task
        columns = [
            (cos * dx + sin * dy) / self.goal_scale,
            (-sin * dx + cos * dy) / self.goal_scale,
            (cos * velocities[:, 0] + sin * velocities[:, 1]) / task.max_linear,
            velocities[:, 2] / task.max_angular,
        ]
        if task.max_lateral > 0.0:  # a base that slides: its sideways speed too
            columns.append((-sin * velocities[:, 0] + cos * velocities[:, 1]) / task.max_lateral)
        state = np.column_stack(columns)
        parts = [np.clip(ranges, 0.0, 1.0), np.clip(state, -1.0, 1.0)]
        if task.observed_people:
            parts.append(self._people.observed(poses, self.laser_range))
        return np.concatenate(parts, axis=1).astype(np.float32)

    # ---------------------------------------------------------------- the task's parts
    def _others(self, index: int) -> np.ndarray:
        """(M, 2) positions (m, the world's frame) of the other robots in robot ``index``'s copy."""
        same = np.flatnonzero(self.copies == self.copies[index])
        same = same[same != index]
        if len(same) == 0:
            return np.empty((0, 2))
        return self._bodies.poses()[same, :2] - self.offsets[same]

    def _free_point(
        self, rng: np.random.Generator, away_from: tuple[float, float] | None, robots: np.ndarray | None = None
    ) -> tuple[float, float]:
        """A point of the area ``clearance`` from every wall, ``min_goal_distance`` from
        ``away_from`` and twice ``clearance`` from each of ``robots`` ((M, 2), m)."""
        task = self.task
        x_min, y_min, x_max, y_max = task.area
        for _ in range(MAX_PLACEMENT_TRIES):
            x, y = (float(v) for v in rng.uniform((x_min, y_min), (x_max, y_max)))
            if self.wall_distance(x, y) < task.clearance:
                continue
            if away_from is not None and math.hypot(x - away_from[0], y - away_from[1]) < task.min_goal_distance:
                continue
            if robots is not None and len(robots) and np.hypot(robots[:, 0] - x, robots[:, 1] - y).min() < 2 * task.clearance:
                continue
            return x, y
        raise RuntimeError(
            f"no free point in the area {task.area} after {MAX_PLACEMENT_TRIES} tries "
            f"(clearance {task.clearance} m, goals {task.min_goal_distance} m away)"
        )

    def wall_distance(self, x: float, y: float) -> float:
        """Distance from (x, y) (m, the world's frame) to the nearest wall (m; inf without walls)."""
        if len(self.walls) == 0:
            return math.inf
        start, end = self.walls[:, :2], self.walls[:, 2:]
        along = end - start
        lengths = np.maximum((along * along).sum(axis=1), 1e-18)
        t = np.clip(((np.array([x, y]) - start) * along).sum(axis=1) / lengths, 0.0, 1.0)
        nearest = start + along * t[:, None]
        return float(np.hypot(nearest[:, 0] - x, nearest[:, 1] - y).min())

    def check_open(self) -> None:
        """RuntimeError once the fleet is closed."""
        if self.world is None:
            raise RuntimeError("the environment is closed")

    def check_ready(self) -> None:
        """RuntimeError once the fleet is closed, or while a robot has not been placed."""
        self.check_open()
        if not self.placed.all():
            raise RuntimeError("call reset() before step(): the robots have no goals yet")

    def close(self) -> None:
        """Remove the world (the fleet cannot be used afterwards)."""
        if self.world is not None:
            self.world.close()
            self.world = None
