"""CrowdNav's benchmark: circle crossing and square crossing, as learning environments.

CrowdNav (Chen, Liu, Kreiss and Alahi, "Crowd-Robot Interaction: Crowd-aware Robot Navigation
with Attention-based Deep Reinforcement Learning", ICRA 2019; github.com/vita-epfl/CrowdNav) is
the protocol crowd-navigation papers compare on. Its defaults (``crowd_nav/configs/env.config``)
are kept here:

* **the robot** starts at rest at (0, -4) facing +y and must come within its radius (0.3 m) of
  (0, 4); preferred speed 1 m/s; holonomic (an ``OmniDrive``: it moves at up to 1 m/s in any
  direction, forward and sideways together) or unicycle (a ``DiffDrive``: forward up to 1 m/s
  and turns of up to pi/4 per 0.25 s step, CrowdNav's rotation samples).
* **five people** of radius 0.3 m walk at 1 m/s by ORCA (CrowdNav's humans; RVO2's defaults
  of its ORCA policy) to their goals and stand there. ``circle_crossing``: each starts on a
  circle of radius 4 m, moved by up to +-0.5 m in x and in y, and heads for the opposite point;
  ``square_crossing``: each starts at a random point of one half of a 10 m square (x on one
  side of 0) and heads for a random point of the other half. A draw too near (the two radii and
  the 0.2 m discomfort distance) to the robot's start or goal or to an earlier person's start
  (or goal) is drawn again, exactly as ``crowd_sim.py``'s ``generate_circle_crossing_human``
  and ``generate_square_crossing_human`` do, with NumPy's legacy generator seeded by the
  episode's seed: the episode of seed ``1000 + k`` is CrowdNav's test case ``k`` (its test phase
  seeds ``np.random.seed(1000 + k)``).
* **robot visible or not** (CrowdNav's ``robot.visible``; its default configuration and the
  paper's tables: invisible): people avoid the robot, or walk as if it were not there (they
  still stop rather than step into it: people never push robots here).
* **the step** is 0.25 s: an action is held for 0.25 s and the people decide every 0.25 s; an
  episode ends on reaching the goal, on touching a person (at any physics step), or after 25 s
  (100 actions).
* **the reward** is CrowdNav's: 1 for the goal, -0.25 for a collision, and while a person is
  within 0.2 m (gap between the discs) ``(gap - 0.2) * 0.5 * 0.25``.

The worlds are ``config/worlds/crowdnav/circle_crossing.yaml`` and ``square_crossing.yaml``: an
open square of 20 m (its walls only bound the copies; nobody comes near them) with the robot and
five people walking CrowdNav's test case 0, to run in the server as they are. The environments
read those files, take the people out and put each episode's in (:class:`CrowdNavEpisodes`), and
change the robot's model (kinematics), the people's visibility and model as asked.

Made by :func:`crowdnav_env` (Gymnasium's single environment), :func:`crowdnav_vector_env` (many
worlds in one process), or ``gymnasium.make("sim_server.learning:sim_server/CircleCrossing-v0",
robot_visible=False)`` and ``SquareCrossing-v0``. Observations, actions and ``info`` are those of
:class:`~sim_server.learning.navigation_env.NavigationEnv` with :func:`crowdnav_task`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from sim_server.core.format.crowd_file import CrowdSpec, OrcaParameters, SocialForceParameters
from sim_server.core.format.world_file import WorldSpec, load_world_file
from sim_server.learning.navigation_env import NavigationEnv
from sim_server.learning.task import LEARNING_WORLDS, NavigationTask
from sim_server.learning.vector_env import NavigationVectorEnv

#: The scenarios' world files.
CROWDNAV_WORLDS = LEARNING_WORLDS.parent / "crowdnav"
#: The scenarios, by name (their world files are ``<name>.yaml``).
SCENARIOS = ("circle_crossing", "square_crossing")
#: The robot's kinematics and its model file (in :data:`CROWDNAV_WORLDS`).
KINEMATICS = {"holonomic": "holonomic.model.yaml", "unicycle": "unicycle.model.yaml"}
#: The people's crowd models: CrowdNav's ORCA, or the social force instead.
PEOPLE_MODELS = {"orca": OrcaParameters, "social_force": SocialForceParameters}
#: CrowdNav's circle radius and square width (m) (``[sim]`` of env.config).
CIRCLE_RADIUS = 4.0
SQUARE_WIDTH = 10.0
#: The robot's start and goal (m) and heading (rad): (0, -circle radius) to (0, +circle radius),
#: facing the goal (crowd_sim.py's reset).
ROBOT_START = (0.0, -CIRCLE_RADIUS)
ROBOT_GOAL = (0.0, CIRCLE_RADIUS)
ROBOT_HEADING = math.pi / 2.0
#: CrowdNav's robot: preferred speed (m/s) and radius (m), also the goal's radius (it succeeds
#: within its radius of the goal). The model files give the body this radius.
ROBOT_SPEED = 1.0
ROBOT_RADIUS = 0.3
#: The time step (s) and limit (s): actions of 0.25 s, 100 of them at most.
TIME_STEP = 0.25
TIME_LIMIT = 25.0
#: Actions of an episode at most (the time limit over the step).
CROWDNAV_STEPS = int(round(TIME_LIMIT / TIME_STEP))
#: CrowdNav's rewards (``[reward]`` of env.config): goal, collision, and the discomfort distance
#: (m) and factor.
SUCCESS_REWARD = 1.0
COLLISION_REWARD = -0.25
DISCOMFORT_DISTANCE = 0.2
DISCOMFORT_FACTOR = 0.5
#: The unicycle's largest turn rate (rad/s): CrowdNav's unicycle actions rotate by at most
#: pi/4 in a 0.25 s step.
UNICYCLE_TURN_RATE = (math.pi / 4.0) / TIME_STEP
#: The holonomic robot's turn rate command for an action of 1 (rad/s; it need not turn).
HOLONOMIC_TURN_RATE = 2.0
#: The area whose diagonal scales the goal in observations (m): the crossings' square.
AREA = (-SQUARE_WIDTH / 2.0, -SQUARE_WIDTH / 2.0, SQUARE_WIDTH / 2.0, SQUARE_WIDTH / 2.0)
#: People observed (CrowdNav's five).
OBSERVED_PEOPLE = 5
#: Draws of one person's place before giving up (CrowdNav draws until one fits).
MAX_DRAWS = 10_000
#: Seeds NumPy's legacy generator takes as one number (larger ones are split into two words).
LEGACY_SEED_LIMIT = 2**32


def crowdnav_task(kinematics: str = "holonomic") -> NavigationTask:
    """The navigation task of CrowdNav's scenarios for a robot of ``kinematics``."""
    holonomic = _checked(kinematics, KINEMATICS, "kinematics") == "holonomic"
    return NavigationTask(
        area=AREA, clearance=ROBOT_RADIUS, min_goal_distance=0.0, goal_radius=ROBOT_RADIUS, max_linear=ROBOT_SPEED,
        max_angular=HOLONOMIC_TURN_RATE if holonomic else UNICYCLE_TURN_RATE, max_lateral=ROBOT_SPEED if holonomic else 0.0,
        max_speed=ROBOT_SPEED if holonomic else 0.0, control_period=TIME_STEP, progress_reward=0.0,
        goal_reward=SUCCESS_REWARD, collision_reward=COLLISION_REWARD, step_reward=0.0,
        max_episode_steps=CROWDNAV_STEPS, discomfort_distance=DISCOMFORT_DISTANCE,
        discomfort_penalty=DISCOMFORT_FACTOR, observed_people=OBSERVED_PEOPLE,
    )


def _checked(value: Any, known: Any, what: str) -> str:
    if not isinstance(value, str) or value not in known:
        raise ValueError(f"{what} must be one of {', '.join(known)}, got {value!r:.100}")
    return value


def legacy_random(seed: int) -> np.random.RandomState:
    """NumPy's legacy generator as ``np.random.seed(seed)`` sets it (CrowdNav's); seeds of
    :data:`LEGACY_SEED_LIMIT` or more as their two 32-bit words."""
    if seed < LEGACY_SEED_LIMIT:
        return np.random.RandomState(seed)
    return np.random.RandomState([seed % LEGACY_SEED_LIMIT, seed // LEGACY_SEED_LIMIT])


def draw_people(scenario: str, count: int, seed: int, radius: float, speed: float,
                robot_radius: float = ROBOT_RADIUS) -> tuple[np.ndarray, np.ndarray]:
    """The starts and goals ((count, 2) each, m) of ``count`` people of ``radius`` (m) and
    preferred ``speed`` (m/s), drawn as CrowdNav's ``scenario`` draws them from
    ``np.random.seed(seed)`` (the module's docstring); the robot (of ``robot_radius``) at
    :data:`ROBOT_START` heading for :data:`ROBOT_GOAL`.

    Raises:
        RuntimeError: no place found in :data:`MAX_DRAWS` draws (too many or too large people).
    """
    rng = legacy_random(seed)
    # (x, y, goal x, goal y, radius) of the robot and each person drawn so far
    agents = [(*ROBOT_START, *ROBOT_GOAL, robot_radius)]
    for _ in range(count):
        if _checked(scenario, SCENARIOS, "scenario") == "circle_crossing":
            x, y = _circle_start(rng, agents, radius, speed)
            agents.append((x, y, -x, -y, radius))
        else:
            agents.append(_square_person(rng, agents, radius))
    people = np.array(agents[1:], dtype=np.float64).reshape(-1, 5)
    return people[:, 0:2].copy(), people[:, 2:4].copy()


def _too_near(x: float, y: float, agents: list[tuple], radius: float, at_goals: bool, at_starts: bool) -> bool:
    """Whether (x, y) lies within the radii and the discomfort distance of an agent's start
    (``at_starts``) or goal (``at_goals``)."""
    for ax, ay, gx, gy, other in agents:
        reach = radius + other + DISCOMFORT_DISTANCE
        if at_starts and math.hypot(x - ax, y - ay) < reach:
            return True
        if at_goals and math.hypot(x - gx, y - gy) < reach:
            return True
    return False


def _circle_start(rng: np.random.RandomState, agents: list[tuple], radius: float, speed: float) -> tuple[float, float]:
    """A start on the circle, moved by noise of up to half the preferred speed in x and y, clear
    of the others' starts and goals (its goal, the opposite point, is not checked: CrowdNav's)."""
    for _ in range(MAX_DRAWS):
        angle = rng.random_sample() * math.pi * 2.0
        noise_x = (rng.random_sample() - 0.5) * speed
        noise_y = (rng.random_sample() - 0.5) * speed
        x, y = CIRCLE_RADIUS * math.cos(angle) + noise_x, CIRCLE_RADIUS * math.sin(angle) + noise_y
        if not _too_near(x, y, agents, radius, at_goals=True, at_starts=True):
            return x, y
    raise RuntimeError(f"no free start on the circle after {MAX_DRAWS} draws")


def _square_person(rng: np.random.RandomState, agents: list[tuple], radius: float) -> tuple:
    """A start in one half of the square clear of the others' starts, and a goal in the other
    half clear of their goals."""
    sign = -1.0 if rng.random_sample() > 0.5 else 1.0
    half = SQUARE_WIDTH * 0.5
    found = []
    for side, at_starts in ((sign, True), (-sign, False)):
        for _ in range(MAX_DRAWS):
            x = rng.random_sample() * half * side
            y = (rng.random_sample() - 0.5) * SQUARE_WIDTH
            if not _too_near(x, y, agents, radius, at_goals=not at_starts, at_starts=at_starts):
                found += [x, y]
                break
        else:
            raise RuntimeError(f"no free {'start' if at_starts else 'goal'} in the square after {MAX_DRAWS} draws")
    return (*found, radius)


def crowdnav_world(scenario: str = "circle_crossing", kinematics: str = "holonomic", robot_visible: bool = True,
                   people: str = "orca", keep_people: bool = False) -> WorldSpec:
    """The world file of ``scenario`` as the environments load it: the robot of ``kinematics``,
    people who see it or not (``robot_visible``), walking by the ``people`` crowd model, and
    without the file's own people (each episode brings its own) unless ``keep_people``."""
    spec = load_world_file(CROWDNAV_WORLDS / f"{_checked(scenario, SCENARIOS, 'scenario')}.yaml")
    return _variant(spec, kinematics, robot_visible, people, keep_people)


def _variant(spec: WorldSpec, kinematics: str, robot_visible: bool, people: str, keep_people: bool) -> WorldSpec:
    """``spec`` with its models' files for ``kinematics`` and its crowds changed as
    :func:`crowdnav_world` says."""
    model = _checked(kinematics, KINEMATICS, "kinematics")
    _checked(people, PEOPLE_MODELS, "people")
    if not isinstance(robot_visible, bool):
        raise ValueError(f"robot_visible must be True or False, got {robot_visible!r:.100}")
    models = tuple(replace(entry, model_path=entry.model_path.with_name(KINEMATICS[model])) for entry in spec.models)
    crowds = []
    for crowd in spec.crowds:
        changed = replace(crowd, robot_visible=robot_visible, agents=crowd.agents if keep_people else ())
        if changed.model != people:
            changed = replace(changed, model=people, parameters=PEOPLE_MODELS[people]())
        crowds.append(changed)
    return replace(spec, models=models, crowds=tuple(crowds))


class CrowdNavEpisodes:
    """CrowdNav's episodes for a fleet (an :class:`~sim_server.learning.fleet.EpisodeLayout`):
    the robot at :data:`ROBOT_START` facing :data:`ROBOT_GOAL`, and people drawn as
    :func:`draw_people` draws them, as many, as large and as fast as the world file's crowd.

    Args:
        scenario: one of :data:`SCENARIOS`.
        crowd: the world file's crowd (its people's count, radius and speed).
    """

    def __init__(self, scenario: str, crowd: CrowdSpec) -> None:
        self.scenario = _checked(scenario, SCENARIOS, "scenario")
        self.count = crowd.initial_count
        self.radius = crowd.radius
        self.speed = crowd.speed[0]

    def seed_of(self, rng: np.random.Generator, seed: int | None) -> int:
        """The episode's seed: ``seed`` where given, else one drawn from ``rng``."""
        return int(rng.integers(0, 2**63, dtype=np.int64)) if seed is None else int(seed)

    def restart_people(self, fleet: Any, copy: int, rng: np.random.Generator, seed: int | None) -> None:
        """Copy ``copy``'s people leave, and the episode's walk in (drawn from ``seed``, or from
        ``rng`` without one)."""
        episode = self.seed_of(rng, seed)
        robots = np.flatnonzero(fleet.copies == copy)
        robot_radius = float(fleet.robot_radii[robots].max()) if len(robots) else ROBOT_RADIUS
        starts, goals = draw_people(self.scenario, self.count, episode, self.radius, self.speed, robot_radius)
        offset = fleet.world.replica_offsets[copy]
        for crowd in fleet.world.crowds:
            crowd.restart(copy, episode)
        crowd = fleet.world.crowds[0]
        for (x, y), (gx, gy) in zip(starts.tolist(), goals.tolist()):
            crowd.add((x + offset.x, y + offset.y), goals=[(gx + offset.x, gy + offset.y)], speed=self.speed)

    def robot_start(self, fleet: Any, index: int, rng: np.random.Generator) -> tuple[tuple[float, float], tuple[float, float], float]:
        """CrowdNav's robot: from :data:`ROBOT_START` to :data:`ROBOT_GOAL`, facing it."""
        return ROBOT_START, ROBOT_GOAL, ROBOT_HEADING


def crowdnav_parts(scenario: str = "circle_crossing", kinematics: str = "holonomic", robot_visible: bool = True,
                   people: str = "orca") -> tuple[WorldSpec, NavigationTask, CrowdNavEpisodes]:
    """What a fleet of CrowdNav's ``scenario`` is made of: the world (:func:`crowdnav_world`),
    the task (:func:`crowdnav_task`) and the episodes (:class:`CrowdNavEpisodes`).

    Raises:
        ValueError: an unknown scenario, kinematics or people model (the message names it).
    """
    file_spec = load_world_file(CROWDNAV_WORLDS / f"{_checked(scenario, SCENARIOS, 'scenario')}.yaml")
    if not file_spec.crowds:
        raise ValueError(f"{file_spec.path}: a CrowdNav world needs a crowd")
    spec = _variant(file_spec, kinematics, robot_visible, people, keep_people=False)
    return spec, crowdnav_task(kinematics), CrowdNavEpisodes(scenario, file_spec.crowds[0])


def crowdnav_env(scenario: str = "circle_crossing", kinematics: str = "holonomic", robot_visible: bool = True,
                 people: str = "orca", **options: Any) -> NavigationEnv:
    """A :class:`~sim_server.learning.navigation_env.NavigationEnv` of CrowdNav's ``scenario``
    (the module's docstring); ``options`` go to it (render_mode, step_size, pixels)."""
    spec, task, layout = crowdnav_parts(scenario, kinematics, robot_visible, people)
    return NavigationEnv(spec, task, layout=layout, **options)


def crowdnav_vector_env(num_envs: int = 64, scenario: str = "circle_crossing", kinematics: str = "holonomic",
                        robot_visible: bool = True, people: str = "orca", **options: Any) -> NavigationVectorEnv:
    """A :class:`~sim_server.learning.vector_env.NavigationVectorEnv` of ``num_envs`` copies of
    CrowdNav's ``scenario``; ``options`` go to it (render_mode, step_size, pixels,
    max_episode_steps)."""
    spec, task, layout = crowdnav_parts(scenario, kinematics, robot_visible, people)
    return NavigationVectorEnv(num_envs, spec, task, layout=layout, **options)
