"""A navigation task: which robot, where starts and goals may be, the rewards and the limits.

Pure data (no Gymnasium, no ROS): :class:`sim_server.learning.navigation_env.NavigationEnv`
turns it into an environment. Units are metres, seconds and radians. :data:`CROWD_NAVIGATION` is
the task among people (``sim_server/CrowdNavigation-v0``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path

from sim_server.core import limits

#: The bundled learning worlds.
LEARNING_WORLDS = Path(__file__).resolve().parent.parent.parent / "config" / "worlds" / "learning"
#: The bundled room with one robot (config/worlds/learning/world.yaml).
DEFAULT_WORLD = LEARNING_WORLDS / "world.yaml"
#: The bundled room with four robots (config/worlds/learning/crowd.yaml).
CROWD_WORLD = LEARNING_WORLDS / "crowd.yaml"
#: The bundled room with one robot and ten people walking (config/worlds/learning/people.yaml).
PEOPLE_WORLD = LEARNING_WORLDS / "people.yaml"
#: Most people an observation may hold.
MAX_OBSERVED_PEOPLE = 100


#: Longest an action may be held (s of sim time).
MAX_CONTROL_PERIOD = 60.0


@dataclass(frozen=True)
class NavigationTask:
    """Drive ``robot`` from a random start to a random goal without touching anything.

    Attributes:
        robot: the model that learns (it needs a drive with a velocity command and a laser).
        drive: its drive plugin's name (DiffDrive: m/s and rad/s).
        laser: its laser plugin's name.
        area: (x_min, y_min, x_max, y_max) where starts and goals are drawn (m).
        clearance: least distance of a start or goal from any wall (m).
        min_goal_distance: least distance from the start to the goal (m).
        goal_radius: the goal is reached within this distance of the robot's centre (m).
        max_linear, max_angular: the commands an action of 1 stands for (m/s, rad/s; an
            AckermannDrive's angular command is its steering angle, rad).
        max_lateral: the sideways command (m/s) a third action value of 1 stands for; 0 (the
            default): actions are (linear, angular); above: (linear, angular, lateral), for a
            drive that slides (OmniDrive), whose sideways speed is then observed too.
        control_period: sim seconds an action is held (a whole number of physics steps).
        beams: laser ranges in the observation (the scan's beams, evenly picked).
        progress_reward: reward per metre the robot gets closer to the goal.
        goal_reward: reward for reaching the goal (the episode ends).
        collision_reward: reward for touching anything (the episode ends).
        step_reward: reward of every action (a small cost of time).
        max_episode_steps: actions until the episode is cut short (Gymnasium's TimeLimit).
        discomfort_distance: a person nearer than this (m, between the robot's bounding circle
            and the person's body) intrudes on personal space (CrowdNav's 0.2 m).
        discomfort_penalty: while a person intrudes, ``(gap - discomfort_distance) *
            discomfort_penalty * control_period`` is added to the reward of an action that does
            not end the episode (CrowdNav's 0.5).
        observed_people: the nearest people of the robot's world in its observation (0: none).
        max_speed: with ``max_lateral``, the most the planar speed (forward and sideways
            together, m/s) may be: a command asking more is scaled down, its direction kept
            (CrowdNav's holonomic robot moves at most at its preferred speed); 0 (the default):
            each axis on its own.
        people_range: only people whose centre lies within this distance (m) of the robot's
            are observed (a sensor's range); 0 (the default): every person of its world.
        people_line_of_sight: only people whose centre the robot's centre sees past the world's
            walls (every wall segment of its layers occludes; people do not) are observed.
            Off by default.
        people_noise: the standard deviation (m) of the Gaussian noise added to each observed
            person's position (ahead and left, each on its own), drawn anew every action and
            seeded by the episode; 0 (the default): exact positions.
    """

    robot: str = "robot"
    drive: str = "drive"
    laser: str = "laser"
    area: tuple[float, float, float, float] = (-4.5, -4.5, 4.5, 4.5)
    clearance: float = 0.5
    min_goal_distance: float = 2.0
    goal_radius: float = 0.3
    max_linear: float = 1.0
    max_angular: float = 2.0
    max_lateral: float = 0.0
    control_period: float = 0.1
    beams: int = 36
    progress_reward: float = 1.0
    goal_reward: float = 10.0
    collision_reward: float = -10.0
    step_reward: float = -0.01
    max_episode_steps: int = 500
    discomfort_distance: float = 0.2
    discomfort_penalty: float = 0.5
    observed_people: int = 0
    max_speed: float = 0.0
    people_range: float = 0.0
    people_line_of_sight: bool = False
    people_noise: float = 0.0

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            numbers = value if field.name == "area" and isinstance(value, tuple) else (value,)  # area: checked below
            if field.type in ("str",):
                if not isinstance(value, str) or not value:
                    raise ValueError(f"NavigationTask.{field.name} must be a name, got {value!r}")
                continue
            if field.type in ("bool",):
                if not isinstance(value, bool):
                    raise ValueError(f"NavigationTask.{field.name} must be True or False, got {value!r:.100}")
                continue
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in numbers):
                raise ValueError(f"NavigationTask.{field.name} must be finite numbers, got {value!r}")
        if not isinstance(self.area, tuple) or len(self.area) != 4:
            raise ValueError(f"NavigationTask.area must be (x_min, y_min, x_max, y_max), got {self.area!r:.200}")
        x_min, y_min, x_max, y_max = self.area
        if not (x_min < x_max and y_min < y_max) or not all(limits.COORDINATE.contains(v) for v in self.area):
            raise ValueError(
                f"NavigationTask.area must be (x_min, y_min, x_max, y_max) with min < max, all within "
                f"+-{limits.COORDINATE.high:g} m, got {self.area}"
            )
        for name in ("clearance", "goal_radius", "max_linear", "max_angular", "control_period"):
            if getattr(self, name) <= 0.0:
                raise ValueError(f"NavigationTask.{name} must be > 0, got {getattr(self, name)}")
        for name, most in (("max_linear", limits.SPEED.high), ("max_angular", limits.ANGULAR_SPEED.high),
                           ("control_period", MAX_CONTROL_PERIOD)):
            if getattr(self, name) > most:
                raise ValueError(f"NavigationTask.{name} must be <= {most:g}, got {getattr(self, name)}")
        if not 0.0 <= self.max_lateral <= limits.SPEED.high:
            raise ValueError(f"NavigationTask.max_lateral must be from 0 to {limits.SPEED.high:g}, got {self.max_lateral}")
        if self.min_goal_distance < 0.0:
            raise ValueError(f"NavigationTask.min_goal_distance must be >= 0, got {self.min_goal_distance}")
        if not isinstance(self.beams, int) or not 1 <= self.beams <= 100_000:
            raise ValueError(f"NavigationTask.beams must be a whole number from 1 to 100000, got {self.beams}")
        if self.discomfort_distance < 0.0 or self.discomfort_penalty < 0.0:
            raise ValueError(
                f"NavigationTask.discomfort_distance and discomfort_penalty must be >= 0, got "
                f"{self.discomfort_distance}, {self.discomfort_penalty}"
            )
        if not isinstance(self.observed_people, int) or not 0 <= self.observed_people <= MAX_OBSERVED_PEOPLE:
            raise ValueError(
                f"NavigationTask.observed_people must be a whole number from 0 to {MAX_OBSERVED_PEOPLE}, got "
                f"{self.observed_people!r}"
            )
        for name, most in (("max_speed", limits.SPEED.high), ("people_range", limits.COORDINATE.high),
                           ("people_noise", limits.COORDINATE.high)):
            if not 0.0 <= getattr(self, name) <= most:
                raise ValueError(f"NavigationTask.{name} must be from 0 to {most:g}, got {getattr(self, name)}")
        if self.max_speed > 0.0 and self.max_lateral == 0.0:
            raise ValueError("NavigationTask.max_speed caps forward and sideways speed together: it needs max_lateral > 0")
        if not isinstance(self.max_episode_steps, int) or self.max_episode_steps < 1:
            raise ValueError(f"NavigationTask.max_episode_steps must be a whole number >= 1, got {self.max_episode_steps}")

    @property
    def senses_people(self) -> bool:
        """Whether observed people are limited (range, line of sight) or noisy."""
        return self.people_range > 0.0 or self.people_line_of_sight or self.people_noise > 0.0

    @property
    def action_size(self) -> int:
        """Values of one robot's action: 2 (linear, angular), or 3 with ``max_lateral``."""
        return 3 if self.max_lateral > 0.0 else 2


#: Driving among people (``config/worlds/learning/people.yaml``): the five nearest people in the
#: observation, CrowdNav's personal space and its penalty.
CROWD_NAVIGATION = NavigationTask(observed_people=5)
