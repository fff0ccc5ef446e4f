"""Social navigation metrics: how each robot did among people in an episode, kept step by step.

:class:`SocialMetrics` takes one :meth:`~SocialMetrics.update` a step for all robots at once,
as arrays (robots of many worlds and the people of all of them in one batch: the learning
fleet's copies, or one world on ROS), and keeps per robot the running sums that the metrics of
its episode need; nothing is stored per step, so an episode of any length costs the same memory.
:meth:`~SocialMetrics.reset` starts robots' episodes, :meth:`~SocialMetrics.finish` ends them
with an :class:`Outcome`, :meth:`~SocialMetrics.results` and :meth:`~SocialMetrics.table` read
them (the episode so far, while it runs). The metrics are those social navigation benchmarks
compare, defined as below, exactly; where a benchmark's code differs from its own description,
the difference is named.

Sources:

* **CrowdNav** (Chen, Liu, Kreiss and Alahi, "Crowd-robot interaction", ICRA 2019;
  github.com/vita-epfl/CrowdNav, ``crowd_nav/utils/explorer.py`` and
  ``crowd_sim/envs/crowd_sim.py``): success, collision and timeout rates, navigation time of
  successful episodes, the gap between the robot's and a person's discs and the steps spent
  within the discomfort distance.
* **SocNavBench** (Biswas, Wang, Silvera, Steinfeld and Admoni, "SocNavBench: a grounded
  simulation testing framework for evaluating social navigation", ACM THRI 2022;
  github.com/CMU-TBD/SocNavBench, ``metrics/cost_functions.py`` and
  ``metrics/metrics_sim_utils.py``): path length and its ratio to the straight line, path
  irregularity, acceleration and jerk by finite differences of the velocity at the time step,
  the closest pedestrian distance and the time to collision.
* **Arena-Rosnav's evaluation** (Kästner et al., "Arena-Rosnav", IROS 2021;
  github.com/Arena-Rosnav/arena-evaluation ``get_metrics.py``, and its successor
  github.com/voshch/arena-evaluation ``processing/metrics/``: ``performance/path_metrics.py``,
  ``performance/motion_metrics.py``, ``social/proxemics.py``, ``social/proxemics_extended.py``,
  ``social/pedestrian_disturbance.py``): angle over length, mean and largest acceleration and
  jerk, time in personal space (1.2 m) and in Hall's zones measured edge to edge, the number of
  intrusion events, and the pedestrians' slow-down.
* Hall's proxemic distances (E. T. Hall, *The Hidden Dimension*, 1966): intimate to 0.45 m,
  personal to 1.2 m, social to 3.6 m.

The metrics, per robot and episode (the keys of :meth:`SocialMetrics.results`; ``dt`` is the
step size, ``k`` counts the updates of the episode, ``p_k``, ``v_k`` the robot's position (m)
and velocity (m/s) after update ``k``, ``p_0``, ``v_0`` those given to :meth:`SocialMetrics.reset`):

* ``finished``, ``success``, ``collision``, ``timeout`` (1 or 0): whether the episode ended, and
  how (the :class:`Outcome` given to :meth:`SocialMetrics.finish`; 0 while it runs). Averaged
  over episodes they are CrowdNav's success, collision and timeout rates.
* ``steps`` (updates) and ``time`` (s, ``steps * dt``); ``time_to_goal`` (s): ``time`` of a
  successful episode, NaN otherwise (CrowdNav averages navigation time over successes).
* ``path_length`` (m): ``sum |p_k - p_(k-1)|`` (SocNavBench, Arena).
* ``path_efficiency`` (1): ``|p_end - p_0| / path_length`` of a successful episode, at most 1,
  1 for a straight drive; NaN for other episodes and for a path of length 0. The inverse of
  SocNavBench's ``path_length_ratio``; Arena's ``path_efficiency`` uses the goal instead of
  ``p_end`` and clips at 1 (the goal is reached within a radius, so ``|goal - p_0|`` may exceed
  the path).
* ``path_irregularity`` (rad): the mean over updates of the angle (0 to pi) between the robot's
  heading ``h_k`` (given, or the direction of ``v_k``) and the direction from ``p_k`` to its
  goal ``g_k``; updates where either is undefined (no heading given and the robot slower than
  :data:`STILL_SPEED`, or the robot on its goal) are left out; NaN with none. SocNavBench's description ("unnecessary
  turning") as its code means it: its code takes the angle between the goal's direction and the
  position vector ``p_k`` itself, which depends on where the map's origin lies.
* ``angle_over_length`` (rad/m): the sum over updates of the angle (0 to pi) between ``h_k`` and
  the last defined heading before it (``h_0`` from the reset), over ``path_length`` (Arena's
  ``angle_over_length``, its yaw differences wrapped as its newer version wraps them); NaN for a
  path of length 0.
* ``acceleration_mean``, ``acceleration_max`` (m/s²): mean and largest of
  ``|v_k - v_(k-1)| / dt`` over the updates; ``jerk_mean``, ``jerk_max`` (m/s³): of
  ``|v_k - 2 v_(k-1) + v_(k-2)| / dt²`` from the second update on (SocNavBench's finite
  differences of the velocity vector; Arena differentiates the speed alone, which misses
  turning). NaN without samples. Finite differences grow as ``dt`` shrinks: compare them at one
  step size.
* ``person_collisions``, ``other_collisions`` (onsets): updates on which the robot touched a
  person (or anything else) and had not on the one before (Arena's ``collision_amount``); for
  episodes that go on after a touch.
* ``min_person_gap`` (m): the smallest ``|q - p_k| - r - s`` over the episode's updates and the
  people of the robot's world (a person at ``q``, of radius ``s``, moving at ``u``; ``r`` the
  robot's radius) (CrowdNav's gap,
  surface to surface; SocNavBench's closest pedestrian distance is between centres); inf when
  its world had nobody.
* ``min_time_to_collision`` (s): the smallest, over updates and people, of the first ``t >= 0``
  at which the two discs would touch if both kept their velocities:
  ``|d + w t| = r + s``, ``d = q - p_k``, ``w = u - v_k`` (0 while they overlap); inf when no
  person was ever on a collision course. SocNavBench's version projects the relative velocity
  on the line between centres and leaves out the person's radius (its own "TODO incorporate
  radii"), so people passing side by side count there as colliding.
* for each zone ``Z`` of the ``zones`` (default ``intimate`` 0.5 m and ``personal`` 1.2 m, gaps
  as ``min_person_gap`` measures them; zones nest, so the personal zone's counts include the
  intimate one's): ``Z_steps`` (updates after which some person's gap is below the zone's; each
  stands for the ``dt`` before it), ``Z_time`` (s, ``Z_steps * dt``; Arena's time in personal
  space) and ``Z_entries`` (updates on which the zone
  became occupied after an update on which it was not, the episode's first update included:
  Arena's intrusion events without its 2 s merging of close ones). CrowdNav's discomfort
  frequency is ``Z_steps / steps`` for a zone of 0.2 m.
* the robot's effect on people, over the people who want to walk (``people_walking``):
  ``people_speed_near`` and ``people_speed_far`` (m/s): their mean speed over person-updates
  within ``effect_radius`` (gap) of the robot, and beyond that radius of every robot of the
  world (their speed elsewhere); ``people_slowdown`` (1): ``1 - near / far``, the fraction of
  their speed they lose near the robot (Arena's ``ped_velocity_delay_ratio`` compares with a
  nominal 1.2 m/s instead). With ``people_ids`` (each person's identity from one update to the
  next), the two components of their velocity change ``u_k - u_(k-1)`` over ``dt``:
  ``people_deceleration_near`` / ``_far`` (m/s²), the mean of
  ``max(0, |u_(k-1)| - |u_k|) / dt``, how hard they brake, and ``people_lateral_near`` /
  ``_far`` (m/s²), the mean of ``|u_(k-1) x u_k| / (|u_(k-1)| dt)``, the velocity change across
  their previous direction (people slower than :data:`STILL_SPEED` before left out), how hard
  they swerve: the path deviation that can be measured step by step (a swerve of angle ``a`` at
  speed ``s`` in one step is ``s sin(a) / dt``). NaN without samples (no people, none near, no
  ``people_ids``).

What is not measured: the counterfactual run of the same people without the robot (the
deflection of each person's path from where it would have walked, Arena's ``pfi`` and
``ped_path_deflection_m``) needs a second simulation and cannot be had step by step; the
"elsewhere" baseline stands in for it and also holds what walls and other people do to walkers.
Personal-space costs shaped by the person's heading and speed (SocNavBench's asymmetric Gaussian)
and gaze are not computed.

An update is two compiled passes, one over every robot and the people of its world only, one
over the robots: no Python per robot or per person (``bench/social_metrics.py`` measures it).
"""

from __future__ import annotations

import math
from enum import IntEnum
from typing import Mapping

import numpy as np

from sim_server.core.compiled import jit, typed

#: Hall's intimate and personal distances as gaps between the robot's and a person's discs (m):
#: the default zones (0.5 m rounds the intimate 0.45 m up to the margin CrowdNav-style tasks use).
DEFAULT_ZONES: Mapping[str, float] = {"intimate": 0.5, "personal": 1.2}
#: The gap (m) within which a person counts as near the robot for the effect on people: Hall's
#: social distance (3.6 m), the farthest at which strangers interact. Head-on at a walker's
#: 1.3 m/s and the robot's 1 m/s it is 1.6 s before contact, three relaxation times of the
#: social force (0.5 s); the social force's push there (pedsim's ``exp(-distance / B)``, ``B`` 1.3
#: to 2 m at these speeds) is still 5 % (a still robot) to 16 % (head-on) of its push at contact,
#: so people start reacting within it, not only in personal space.
EFFECT_RADIUS = 3.6
#: Speed (m/s) below which a body's direction of motion is undefined: a robot without headings
#: given has no heading, and a person's sideways acceleration is not measured.
STILL_SPEED = 0.01

#: Values per person for the effect on people: speed (m/s), deceleration and lateral
#: acceleration (m/s²); and the rows of their sums: near a robot, elsewhere in its world.
SPEED, DECELERATION, LATERAL = 0, 1, 2
EFFECT_VALUES = 3
NEAR, FAR = 0, 1
#: Columns of the per-robot running sums (floats): path length (m), acceleration's sum and
#: largest (m/s²), jerk's sum and largest (m/s³), heading-to-goal angles' sum (rad), turned
#: angle (rad), smallest gap (m), soonest time to collision (s); and their values at reset.
PATH, ACCELERATION_SUM, ACCELERATION_MAX, JERK_SUM, JERK_MAX, AIM_SUM, TURN, MIN_GAP, MIN_TTC = range(9)
INITIAL_SUMS = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, math.inf, math.inf)
#: Columns of the per-robot counts: updates, jerk samples, heading-to-goal samples, onsets of
#: touching a person and anything else.
STEPS, JERKS, AIMS, PERSON_COLLISIONS, OTHER_COLLISIONS = range(5)
COUNTS = 5
#: Columns of each robot's state at the last update (or reset): position (m), velocity (m/s),
#: velocity change (m/s), heading (a unit vector).
X, Y, VX, VY, CHANGE_X, CHANGE_Y, HEADING_X, HEADING_Y = range(8)
LAST = 8
#: Columns of each robot's flags at the last update: a heading known, touching a person,
#: touching anything else.
HAS_HEADING, TOUCHING_PERSON, TOUCHING_OTHER = range(3)
FLAGS = 3


class Outcome(IntEnum):
    """How an episode ended (RUNNING: it has not)."""

    RUNNING = 0
    SUCCESS = 1
    COLLISION = 2
    TIMEOUT = 3


@jit
def angle_between(ax, ay, bx, by):  # pragma: no cover - compiled
    """The angle (rad, 0 to pi) between the vectors (ax, ay) and (bx, by), neither zero."""
    return math.atan2(abs(ax * by - ay * bx), ax * bx + ay * by)


@jit
def robots_among_people(robots_now, people_now, dt, effect_radius, found):  # pragma: no cover - compiled
    """One pass over every robot and the people of its world.

    ``robots_now`` is ``(positions, velocities, radii, worlds)``: (R, 2) positions (m) and
    velocities (m/s), (R,) radii (m) and worlds (int64 >= 0). ``people_now`` is the same for
    the people, (P, ...), then ``previous`` (P, 2) each one's velocity on the last update (m/s)
    where ``known`` (P,), and ``walking`` (P,) whether it counts for the effect on people;
    ``dt`` (s) the time since the last update. Writes per robot into ``found``, ``(gap, ttc,
    near_sum, near_count, far_sum, far_count)``: ``gap`` (R,) the smallest gap to a person of
    its world (m, inf: nobody), ``ttc`` (R,) the soonest time to collision (s, inf: nobody on a
    collision course), ``near_sum`` / ``near_count`` (R, EFFECT_VALUES) the sums and counts of
    the speeds, decelerations and lateral accelerations of the people within ``effect_radius``
    (gap, m) of it, ``far_sum`` / ``far_count`` those of the people of its world beyond that
    radius of every robot of the world."""
    robot_position, robot_velocity, robot_radius, robot_world = robots_now
    people_position, people_velocity, people_radius, people_world, previous, known, walking = people_now
    gap, ttc, near_sum, near_count, far_sum, far_count = found
    robots, people = robot_position.shape[0], people_position.shape[0]
    values = np.zeros((people, EFFECT_VALUES))
    valid = np.zeros((people, EFFECT_VALUES), dtype=np.bool_)
    for j in range(people):
        vx, vy = people_velocity[j, 0], people_velocity[j, 1]
        speed = math.sqrt(vx * vx + vy * vy)
        values[j, SPEED], valid[j, SPEED] = speed, walking[j]
        if known[j]:
            ux, uy = previous[j, 0], previous[j, 1]
            before = math.sqrt(ux * ux + uy * uy)
            values[j, DECELERATION], valid[j, DECELERATION] = max(before - speed, 0.0) / dt, walking[j]
            if before >= STILL_SPEED:
                values[j, LATERAL] = abs(ux * vy - uy * vx) / (before * dt)
                valid[j, LATERAL] = walking[j]
    worlds = 0
    for i in range(robots):
        worlds = max(worlds, robot_world[i] + 1)
    for j in range(people):
        worlds = max(worlds, people_world[j] + 1)
    # the people by world (a counting sort): world w's are order[start[w]:start[w + 1]]
    start = np.zeros(worlds + 1, dtype=np.int64)
    for j in range(people):
        start[people_world[j] + 1] += 1
    for w in range(worlds):
        start[w + 1] += start[w]
    fill = start[:worlds].copy()
    order = np.empty(people, dtype=np.int64)
    for j in range(people):
        order[fill[people_world[j]]] = j
        fill[people_world[j]] += 1
    near_any = np.zeros(people, dtype=np.bool_)
    for i in range(robots):
        px, py, vx, vy = robot_position[i, 0], robot_position[i, 1], robot_velocity[i, 0], robot_velocity[i, 1]
        smallest_gap, soonest = np.inf, np.inf
        for m in range(EFFECT_VALUES):
            near_sum[i, m] = 0.0
            near_count[i, m] = 0
        w = robot_world[i]
        for slot in range(start[w], start[w + 1]):
            j = order[slot]
            dx, dy = people_position[j, 0] - px, people_position[j, 1] - py
            reach = robot_radius[i] + people_radius[j]
            between = math.sqrt(dx * dx + dy * dy) - reach
            smallest_gap = min(smallest_gap, between)
            if between <= 0.0:
                soonest = 0.0
            else:
                wx, wy = people_velocity[j, 0] - vx, people_velocity[j, 1] - vy
                closing = -(dx * wx + dy * wy)  # > 0 while they draw closer
                if closing > 0.0:
                    excess = dx * dx + dy * dy - reach * reach  # > 0: apart
                    discriminant = closing * closing - (wx * wx + wy * wy) * excess
                    if discriminant >= 0.0:
                        # the smaller root of |d + w t| = reach, in its cancellation-free form (not
                        # below 0 where rounding left ``between`` a hair above 0 and ``excess`` not)
                        soonest = min(soonest, max(excess / (closing + math.sqrt(discriminant)), 0.0))
            if between < effect_radius:
                near_any[j] = True
                for m in range(EFFECT_VALUES):
                    if valid[j, m]:
                        near_sum[i, m] += values[j, m]
                        near_count[i, m] += 1
        gap[i] = smallest_gap
        ttc[i] = soonest
    world_sum = np.zeros((worlds, EFFECT_VALUES))
    world_count = np.zeros((worlds, EFFECT_VALUES), dtype=np.int64)
    for j in range(people):
        if not near_any[j]:
            for m in range(EFFECT_VALUES):
                if valid[j, m]:
                    world_sum[people_world[j], m] += values[j, m]
                    world_count[people_world[j], m] += 1
    for i in range(robots):
        for m in range(EFFECT_VALUES):
            far_sum[i, m] = world_sum[robot_world[i], m]
            far_count[i, m] = world_count[robot_world[i], m]


@jit
def advance_robots(running, dt, motion, found, zone_gaps, episodes):  # pragma: no cover - compiled
    """Add one update to the episodes of the ``running`` (R,) robots.

    ``motion`` is ``(position, velocity, heading, headed, goal, touching_person,
    touching_other)``: the robots now at ``position`` (R, 2; m), moving at ``velocity`` (R, 2;
    m/s), facing ``heading`` (R,; rad) if ``headed`` else their direction of motion, with their
    ``goal`` (R, 2; m), touching a person or anything else (R, bool each); ``found`` what
    :func:`robots_among_people` found. ``episodes`` is ``(sums, counts, last, flags,
    zone_steps, zone_entries, inside, effect_sum, effect_count)``: adds to the running sums and
    counts (columns named at the module's top), the zones' steps and entries (R, Z;
    ``zone_gaps`` (Z,) m) and the effect sums (R, 2, EFFECT_VALUES); keeps each running robot's
    state in ``last``, ``flags`` and ``inside`` for the next update (the others are left as
    their episodes ended)."""
    position, velocity, heading, headed, goal, touching_person, touching_other = motion
    gap, ttc, near_sum, near_count, far_sum, far_count = found
    sums, counts, last, flags, zone_steps, zone_entries, inside, effect_sum, effect_count = episodes
    for i in range(position.shape[0]):
        if not running[i]:  # a finished episode keeps its metrics, its end position among them
            continue
        x, y, vx, vy = position[i, 0], position[i, 1], velocity[i, 0], velocity[i, 1]
        if headed:
            facing_x, facing_y, has_heading = math.cos(heading[i]), math.sin(heading[i]), True
        else:
            speed = math.sqrt(vx * vx + vy * vy)
            has_heading = speed >= STILL_SPEED
            facing_x, facing_y = (vx / speed, vy / speed) if has_heading else (0.0, 0.0)
        change_x, change_y = vx - last[i, VX], vy - last[i, VY]
        counts[i, STEPS] += 1
        sums[i, PATH] += math.sqrt((x - last[i, X]) ** 2 + (y - last[i, Y]) ** 2)
        acceleration = math.sqrt(change_x * change_x + change_y * change_y) / dt
        sums[i, ACCELERATION_SUM] += acceleration
        sums[i, ACCELERATION_MAX] = max(sums[i, ACCELERATION_MAX], acceleration)
        if counts[i, STEPS] >= 2:
            jerk = math.sqrt((change_x - last[i, CHANGE_X]) ** 2 + (change_y - last[i, CHANGE_Y]) ** 2) / (dt * dt)
            sums[i, JERK_SUM] += jerk
            sums[i, JERK_MAX] = max(sums[i, JERK_MAX], jerk)
            counts[i, JERKS] += 1
        to_x, to_y = goal[i, 0] - x, goal[i, 1] - y
        if has_heading and (to_x != 0.0 or to_y != 0.0):
            sums[i, AIM_SUM] += angle_between(facing_x, facing_y, to_x, to_y)
            counts[i, AIMS] += 1
        if has_heading and flags[i, HAS_HEADING]:
            sums[i, TURN] += angle_between(facing_x, facing_y, last[i, HEADING_X], last[i, HEADING_Y])
        if touching_person[i] and not flags[i, TOUCHING_PERSON]:
            counts[i, PERSON_COLLISIONS] += 1
        if touching_other[i] and not flags[i, TOUCHING_OTHER]:
            counts[i, OTHER_COLLISIONS] += 1
        sums[i, MIN_GAP] = min(sums[i, MIN_GAP], gap[i])
        sums[i, MIN_TTC] = min(sums[i, MIN_TTC], ttc[i])
        for z in range(zone_gaps.shape[0]):
            if gap[i] < zone_gaps[z]:
                zone_steps[i, z] += 1
                if not inside[i, z]:
                    zone_entries[i, z] += 1
        for m in range(EFFECT_VALUES):
            effect_sum[i, NEAR, m] += near_sum[i, m]
            effect_count[i, NEAR, m] += near_count[i, m]
            effect_sum[i, FAR, m] += far_sum[i, m]
            effect_count[i, FAR, m] += far_count[i, m]
        last[i, X], last[i, Y], last[i, VX], last[i, VY] = x, y, vx, vy
        last[i, CHANGE_X], last[i, CHANGE_Y] = change_x, change_y
        if has_heading:
            last[i, HEADING_X], last[i, HEADING_Y] = facing_x, facing_y
            flags[i, HAS_HEADING] = True
        flags[i, TOUCHING_PERSON], flags[i, TOUCHING_OTHER] = touching_person[i], touching_other[i]
        for z in range(zone_gaps.shape[0]):
            inside[i, z] = gap[i] < zone_gaps[z]


class SocialMetrics:
    """Social navigation metrics of ``robots`` robots, each in its own episode (the module's
    docstring defines them).

    Args:
        robots: how many robots (R); each call passes arrays of R rows, robot ``i`` row ``i``.
        step_size: the time between two updates (s): the learning environments' control period.
        zones: personal-space zones by name (a Python identifier), each a gap (m, > 0) between
            the robot's and a person's discs below which a person is inside.
        effect_radius: the gap (m, > 0) within which a person is near a robot, for the effect on
            people.
        robot_worlds: (R,) the world each robot is in (ints >= 0; the people passed name their
            worlds the same way); default: robot ``i`` in world ``i``.

    Raises:
        ValueError: a bad argument (the message names it).
    """

    def __init__(self, robots: int, step_size: float, zones: Mapping[str, float] = DEFAULT_ZONES,
                 effect_radius: float = EFFECT_RADIUS, robot_worlds: np.ndarray | None = None) -> None:
        if isinstance(robots, bool) or not isinstance(robots, int) or robots < 1:
            raise ValueError(f"robots must be a whole number >= 1, got {robots!r:.60}")
        for name, value in (("step_size", step_size), ("effect_radius", effect_radius)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value < math.inf:
                raise ValueError(f"{name} must be a finite number > 0, got {value!r:.60}")
        if not isinstance(zones, Mapping) or not all(isinstance(name, str) and name.isidentifier() for name in zones):
            raise ValueError(f"zones must map names (identifiers) to gaps (m), got {zones!r:.100}")
        if not all(not isinstance(gap, bool) and isinstance(gap, (int, float)) and 0.0 < gap < math.inf
                   for gap in zones.values()):
            raise ValueError(f"zones' gaps must be finite numbers > 0 (m), got {dict(zones)!r:.100}")
        worlds = np.arange(robots) if robot_worlds is None else np.asarray(robot_worlds)
        if worlds.shape != (robots,) or worlds.dtype.kind not in "iu" or worlds.min() < 0:
            raise ValueError(f"robot_worlds must be {robots} whole numbers >= 0, got {robot_worlds!r:.100}")
        self.robots = robots
        self.step_size = float(step_size)
        self.effect_radius = float(effect_radius)
        #: The zones' names and gaps (m), in order.
        self.zone_names = tuple(zones)
        self.zone_gaps = np.array([float(zones[name]) for name in self.zone_names])
        self.robot_worlds = typed(worlds, np.int64)
        #: Whether each robot's episode runs (reset and not finished); the others' updates count
        #: nothing, and their metrics stay as they were.
        self.running = np.zeros(robots, dtype=bool)
        #: How each robot's last episode ended (:class:`Outcome`; RUNNING while it runs).
        self.outcome = np.zeros(robots, dtype=np.int64)
        self._start = np.zeros((robots, 2))
        self._sums = np.tile(np.array(INITIAL_SUMS), (robots, 1))
        self._counts = np.zeros((robots, COUNTS), dtype=np.int64)
        self._last = np.zeros((robots, LAST))
        self._flags = np.zeros((robots, FLAGS), dtype=bool)
        zones_shape = (robots, len(self.zone_names))
        self._zone_steps = np.zeros(zones_shape, dtype=np.int64)
        self._zone_entries = np.zeros(zones_shape, dtype=np.int64)
        self._inside = np.zeros(zones_shape, dtype=bool)
        self._effect_sum = np.zeros((robots, 2, EFFECT_VALUES))
        self._effect_count = np.zeros((robots, 2, EFFECT_VALUES), dtype=np.int64)
        # the people of the last update, for their decelerations and swerves
        self._people_ids: np.ndarray | None = None
        self._people_velocity = np.zeros((0, 2))
        # what robots_among_people writes, and the defaults of update's optional arrays
        self._gap = np.zeros(robots)
        self._ttc = np.zeros(robots)
        self._near_sum = np.zeros((robots, EFFECT_VALUES))
        self._near_count = np.zeros((robots, EFFECT_VALUES), dtype=np.int64)
        self._far_sum = np.zeros((robots, EFFECT_VALUES))
        self._far_count = np.zeros((robots, EFFECT_VALUES), dtype=np.int64)
        self._untouched = np.zeros(robots, dtype=bool)
        self._no_headings = np.zeros(robots)

    # ------------------------------------------------------------------ episodes
    def _chosen(self, robots: int | np.ndarray) -> np.ndarray:
        """``robots`` (an index, indices or an (R,) bool mask) as an array of indices."""
        chosen = np.asarray(robots)
        if chosen.dtype == bool:
            if chosen.shape != (self.robots,):
                raise ValueError(f"a mask of robots must have {self.robots} values, got shape {chosen.shape}")
            return np.flatnonzero(chosen)
        if chosen.dtype.kind not in "iu" or chosen.ndim > 1:
            raise ValueError(f"robots must be an index, indices or a mask, got {robots!r:.60}")
        chosen = chosen.reshape(-1).astype(np.int64)
        if len(chosen) and not (chosen.min() >= 0 and chosen.max() < self.robots):
            raise ValueError(f"robot indices must be from 0 to {self.robots - 1}, got {robots!r:.60}")
        return chosen

    def reset(self, robots: int | np.ndarray, positions: np.ndarray, velocities: np.ndarray | None = None,
              headings: np.ndarray | None = None) -> None:
        """Start new episodes of ``robots`` (an index, indices or an (R,) bool mask) from
        ``positions`` ((n, 2) m, or one (2,) for all), moving at ``velocities`` ((n, 2) m/s,
        default still) and facing ``headings`` ((n,) rad, default their direction of motion)."""
        chosen = self._chosen(robots)
        n = len(chosen)
        positions = np.broadcast_to(np.asarray(positions, dtype=float), (n, 2))
        velocities = np.broadcast_to(np.asarray(0.0 if velocities is None else velocities, dtype=float), (n, 2))
        self.running[chosen] = True
        self.outcome[chosen] = Outcome.RUNNING
        self._sums[chosen] = INITIAL_SUMS
        for array in (self._counts, self._flags, self._zone_steps, self._zone_entries, self._inside,
                      self._effect_sum, self._effect_count):
            array[chosen] = 0
        self._start[chosen] = positions
        self._last[chosen, X], self._last[chosen, Y] = positions[:, 0], positions[:, 1]
        self._last[chosen, VX], self._last[chosen, VY] = velocities[:, 0], velocities[:, 1]
        self._last[chosen, CHANGE_X] = self._last[chosen, CHANGE_Y] = 0.0
        if headings is None:
            angles = np.arctan2(velocities[:, 1], velocities[:, 0])
            self._flags[chosen, HAS_HEADING] = np.hypot(velocities[:, 0], velocities[:, 1]) >= STILL_SPEED
        else:
            angles = np.broadcast_to(np.asarray(headings, dtype=float), (n,))
            self._flags[chosen, HAS_HEADING] = True
        self._last[chosen, HEADING_X], self._last[chosen, HEADING_Y] = np.cos(angles), np.sin(angles)

    def finish(self, robots: int | np.ndarray, outcome: Outcome | int | np.ndarray) -> None:
        """End the episodes of ``robots`` (an index, indices or an (R,) bool mask) with
        ``outcome`` (one, or one per robot); robots not running keep theirs. Their metrics stay
        as they are until the next :meth:`reset`."""
        chosen = self._chosen(robots)
        outcomes = np.broadcast_to(np.asarray(outcome, dtype=np.int64), chosen.shape)
        if len(outcomes) and not np.isin(outcomes, [Outcome.SUCCESS, Outcome.COLLISION, Outcome.TIMEOUT]).all():
            raise ValueError(f"an outcome must be SUCCESS, COLLISION or TIMEOUT, got {outcome!r:.60}")
        ending = self.running[chosen]
        self.outcome[chosen[ending]] = outcomes[ending]
        self.running[chosen] = False

    # ------------------------------------------------------------------ per step
    @staticmethod
    def _rows(array: np.ndarray, width: int | None, count: int, name: str, dtype: type = np.float64) -> np.ndarray:
        """``array`` as ``count`` rows (of ``width`` values, or one each for None) of ``dtype``,
        as the compiled passes take it."""
        shape = (count,) if width is None else (count, width)
        if count == 0 and np.size(array) == 0:
            return np.zeros(shape, dtype=dtype)
        found = typed(array, dtype)
        if found.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, got {np.shape(array)}")
        return found

    def _people_history(self, ids: np.ndarray | None, velocities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each person's velocity on the last update ((P, 2) m/s) and whether it is known ((P,)
        bool): people are matched by ``ids``; without them nobody's is."""
        count = len(velocities)
        previous, known = np.zeros((count, 2)), np.zeros(count, dtype=bool)
        last = self._people_ids
        if ids is not None and last is not None and len(last):
            if len(last) == count and np.array_equal(last, ids):  # the same people in the same order
                previous, known = self._people_velocity, np.ones(count, dtype=bool)
            else:
                order = np.argsort(last, kind="stable")
                at = np.minimum(np.searchsorted(last[order], ids), len(last) - 1)
                known = last[order][at] == ids
                previous = np.where(known[:, None], self._people_velocity[order[at]], 0.0)
        self._people_ids = None if ids is None else ids.copy()
        self._people_velocity = velocities.copy()
        return previous, known

    def update(self, robot_positions: np.ndarray, robot_velocities: np.ndarray, robot_radii: np.ndarray,
               goals: np.ndarray, people_positions: np.ndarray, people_velocities: np.ndarray,
               people_radii: np.ndarray, people_worlds: np.ndarray, collided_person: np.ndarray | None = None,
               collided_other: np.ndarray | None = None, *, robot_headings: np.ndarray | None = None,
               people_ids: np.ndarray | None = None, people_walking: np.ndarray | None = None) -> None:
        """One step of every robot (the running ones count it), ``step_size`` after the last.

        Args:
            robot_positions, robot_velocities: (R, 2) m and m/s, in the frame of their world.
            robot_radii: (R,) m, each robot's bounding disc.
            goals: (R, 2) m, each robot's goal.
            people_positions, people_velocities: (P, 2) m and m/s, every person of every world,
                each in the frame of its world.
            people_radii: (P,) m.
            people_worlds: (P,) the world of each person (ints >= 0, as ``robot_worlds``).
            collided_person, collided_other: (R,) bool, whether each robot touches a person, or
                anything else, now (default: nothing).
            robot_headings: (R,) rad, where each robot faces (default: its direction of motion).
            people_ids: (P,) ints, each person's identity (unique, the same from one update to
                the next): with them the people's decelerations and swerves are measured.
            people_walking: (P,) bool, whether each person wants to walk (not waiting at a goal,
                not standing without one); only these count for the effect on people (default:
                all).

        Raises:
            ValueError: an array of the wrong shape, or a negative world.
        """
        robots, people = self.robots, len(people_positions)
        position = self._rows(robot_positions, 2, robots, "robot_positions")
        velocity = self._rows(robot_velocities, 2, robots, "robot_velocities")
        people_velocity = self._rows(people_velocities, 2, people, "people_velocities")
        worlds = self._rows(people_worlds, None, people, "people_worlds", np.int64)
        if people and worlds.min() < 0:
            raise ValueError("people_worlds must be whole numbers >= 0")
        walking = (np.ones(people, dtype=bool) if people_walking is None
                   else self._rows(people_walking, None, people, "people_walking", np.bool_))
        ids = None if people_ids is None else self._rows(people_ids, None, people, "people_ids", np.int64)
        previous, known = self._people_history(ids, people_velocity)
        found = (self._gap, self._ttc, self._near_sum, self._near_count, self._far_sum, self._far_count)
        robots_among_people(
            (position, velocity, self._rows(robot_radii, None, robots, "robot_radii"), self.robot_worlds),
            (self._rows(people_positions, 2, people, "people_positions"), people_velocity,
             self._rows(people_radii, None, people, "people_radii"), worlds, previous, known, walking),
            self.step_size, self.effect_radius, found,
        )
        headed = robot_headings is not None
        touching = [self._untouched if flags is None else self._rows(flags, None, robots, name, np.bool_)
                    for flags, name in ((collided_person, "collided_person"), (collided_other, "collided_other"))]
        motion = (position, velocity,
                  self._rows(robot_headings, None, robots, "robot_headings") if headed else self._no_headings, headed,
                  self._rows(goals, 2, robots, "goals"), touching[0], touching[1])
        episodes = (self._sums, self._counts, self._last, self._flags, self._zone_steps, self._zone_entries,
                    self._inside, self._effect_sum, self._effect_count)
        advance_robots(self.running, self.step_size, motion, found, self.zone_gaps, episodes)

    # ------------------------------------------------------------------ results
    @property
    def keys(self) -> tuple[str, ...]:
        """The names of the metrics, in the order of :meth:`table`."""
        zones = tuple(f"{zone}_{what}" for zone in self.zone_names for what in ("steps", "time", "entries"))
        return BASE_KEYS + zones + EFFECT_KEYS

    def table(self, robots: int | np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Every metric (:attr:`keys`; the module's docstring defines them) of the episodes so far
        of ``robots`` (an index, indices or an (R,) bool mask; default all), as float arrays."""
        at = slice(None) if robots is None else self._chosen(robots)
        dt = self.step_size
        outcome, sums, counts = self.outcome[at], self._sums[at], self._counts[at]
        steps, length = counts[:, STEPS], sums[:, PATH]
        success = outcome == Outcome.SUCCESS
        time = steps * dt
        last = self._last[at]
        with np.errstate(divide="ignore", invalid="ignore"):
            straight = np.hypot(*(last[:, X:Y + 1] - self._start[at]).T)
            found = {
                "finished": outcome != Outcome.RUNNING, "success": success, "collision": outcome == Outcome.COLLISION,
                "timeout": outcome == Outcome.TIMEOUT, "steps": steps, "time": time,
                "time_to_goal": np.where(success, time, np.nan), "path_length": length,
                "path_efficiency": np.where(success & (length > 0.0), straight / length, np.nan),
                "path_irregularity": _mean(sums[:, AIM_SUM], counts[:, AIMS]),
                "angle_over_length": np.where(length > 0.0, sums[:, TURN] / length, np.nan),
                "acceleration_mean": _mean(sums[:, ACCELERATION_SUM], steps),
                "acceleration_max": np.where(steps > 0, sums[:, ACCELERATION_MAX], np.nan),
                "jerk_mean": _mean(sums[:, JERK_SUM], counts[:, JERKS]),
                "jerk_max": np.where(counts[:, JERKS] > 0, sums[:, JERK_MAX], np.nan),
                "person_collisions": counts[:, PERSON_COLLISIONS], "other_collisions": counts[:, OTHER_COLLISIONS],
                "min_person_gap": sums[:, MIN_GAP], "min_time_to_collision": sums[:, MIN_TTC],
            }
            zone_steps, zone_entries = self._zone_steps[at], self._zone_entries[at]
            for index, zone in enumerate(self.zone_names):
                found[f"{zone}_steps"] = zone_steps[:, index]
                found[f"{zone}_time"] = zone_steps[:, index] * dt
                found[f"{zone}_entries"] = zone_entries[:, index]
            means = _mean(self._effect_sum[at], self._effect_count[at])
            found["people_speed_near"], found["people_speed_far"] = means[:, NEAR, SPEED], means[:, FAR, SPEED]
            found["people_slowdown"] = 1.0 - means[:, NEAR, SPEED] / means[:, FAR, SPEED]
            found["people_deceleration_near"] = means[:, NEAR, DECELERATION]
            found["people_deceleration_far"] = means[:, FAR, DECELERATION]
            found["people_lateral_near"], found["people_lateral_far"] = means[:, NEAR, LATERAL], means[:, FAR, LATERAL]
        return {key: np.array(found[key], dtype=float) for key in self.keys}

    def results(self, robot: int) -> dict[str, float]:
        """Robot ``robot``'s metrics (:attr:`keys`), its episode so far, as floats."""
        if np.ndim(robot) != 0:
            raise ValueError(f"robot must be one index, got {robot!r:.60}")
        return {key: float(values[0]) for key, values in self.table(robot).items()}


#: The metrics before the zones' (see the module's docstring).
BASE_KEYS = (
    "finished", "success", "collision", "timeout", "steps", "time", "time_to_goal", "path_length", "path_efficiency",
    "path_irregularity", "angle_over_length", "acceleration_mean", "acceleration_max", "jerk_mean", "jerk_max",
    "person_collisions", "other_collisions", "min_person_gap", "min_time_to_collision",
)
#: The metrics of the effect on people, after the zones'.
EFFECT_KEYS = (
    "people_speed_near", "people_speed_far", "people_slowdown", "people_deceleration_near", "people_deceleration_far",
    "people_lateral_near", "people_lateral_far",
)


def _mean(total: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``total / count``, NaN where ``count`` is 0."""
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)
