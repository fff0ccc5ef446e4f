"""What a robot can know of the people around it: who is within its sensing range, whom the
walls hide, and how exactly it sees where they are.

:class:`PeopleSight` serves the observations of :class:`~sim_server.learning.people.PeopleNearby`
when the task limits them (:attr:`NavigationTask.people_range
<sim_server.learning.task.NavigationTask.people_range>`, ``people_line_of_sight``,
``people_noise``); by default every person of a robot's world is seen where it is.

* **Range**: a person is seen when the distance between the robot's centre and the person's is
  at most ``people_range`` (m).
* **Line of sight**: a person is seen when the segment from the robot's centre to the person's
  crosses no wall segment of the world's layers (a segment touching a wall's end counts as
  crossing it). People do not hide each other (a laser's view; the laser sees them as bodies
  anyway). The walls are indexed in the core's grid of cells
  (:class:`~sim_server.core.crowd.walls.WallIndex`), and each sight line walks only the cells it
  crosses (Amanatides and Woo's traversal), so a map image's thousands of segments cost what
  the few near the line cost.
* **Noise**: each observed position gets Gaussian noise of ``people_noise`` (m) on each axis.
  The numbers are a function of the robot's episode key (drawn from the episode's generator
  when the episode starts), the action count of the episode, the person's slot and the axis
  (SplitMix64 hashed, Box-Muller), so a copy of a vector environment sees what a lone
  environment with the same seed sees, and asking for an observation twice gives the same one.

Every robot and every person it may see are computed in one compiled call; no Python runs per
robot or person.
"""

from __future__ import annotations

import math

import numpy as np

from sim_server.core.compiled import jit, typed
from sim_server.core.crowd.walls import WallIndex

#: SplitMix64's constants (Steele, Lea and Flood, "Fast splittable pseudorandom number
#: generators", OOPSLA 2014): the golden-ratio increment and the two multipliers of its mix.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
MIX_2 = np.uint64(0x94D049BB133111EB)
#: 2^-53: a 53-bit integer times this is a uniform double in [0, 1).
UNIT = 1.0 / 9007199254740992.0


@jit
def _crosses(px, py, qx, qy, ax, ay, bx, by):  # pragma: no cover - compiled
    """Whether segment P-Q meets segment A-B (touching counts; collinear ones must overlap)."""
    rx, ry = qx - px, qy - py
    sx, sy = bx - ax, by - ay
    d1 = rx * (ay - py) - ry * (ax - px)
    d2 = rx * (by - py) - ry * (bx - px)
    d3 = sx * (py - ay) - sy * (px - ax)
    d4 = sx * (qy - ay) - sy * (qx - ax)
    if d1 == 0.0 and d2 == 0.0:  # collinear: do their extents overlap?
        if abs(rx) >= abs(ry):
            return max(min(px, qx), min(ax, bx)) <= min(max(px, qx), max(ax, bx))
        return max(min(py, qy), min(ay, by)) <= min(max(py, qy), max(ay, by))
    return d1 * d2 <= 0.0 and d3 * d4 <= 0.0


@jit
def _clip(origin, delta, high, t0, t1):  # pragma: no cover - compiled
    """The part [t0, t1] of the line ``origin + t delta`` (one coordinate) within [0, high]
    (t0 > t1: none)."""
    if delta == 0.0:
        if origin < 0.0 or origin > high:
            return 1.0, 0.0
        return t0, t1
    a, b = (0.0 - origin) / delta, (high - origin) / delta
    if a > b:
        a, b = b, a
    return max(t0, a), min(t1, b)


@jit
def _hidden(px, py, qx, qy, segments, x0, y0, cell, nx, ny, starts, items, seen, stamp):  # pragma: no cover - compiled
    """Whether a wall of the index crosses the sight line from P to Q: the cells the line
    crosses are walked in order (Amanatides and Woo), each segment tested once (``seen``
    holds the stamp of the last line that tested it)."""
    if segments.shape[0] == 0:
        return False
    fx, fy = (px - x0) / cell, (py - y0) / cell
    gx, gy = (qx - x0) / cell, (qy - y0) / cell
    # clip the line to the grid's box [0, nx] x [0, ny] (cells beyond hold no wall)
    dx, dy = gx - fx, gy - fy
    t0, t1 = _clip(fx, dx, float(nx), 0.0, 1.0)
    t0, t1 = _clip(fy, dy, float(ny), t0, t1)
    if t0 > t1:
        return False
    sx, sy = fx + t0 * dx, fy + t0 * dy
    ix, iy = min(max(int(math.floor(sx)), 0), nx - 1), min(max(int(math.floor(sy)), 0), ny - 1)
    ex, ey = fx + t1 * dx, fy + t1 * dy
    jx, jy = min(max(int(math.floor(ex)), 0), nx - 1), min(max(int(math.floor(ey)), 0), ny - 1)
    step_x = 1 if dx > 0.0 else -1
    step_y = 1 if dy > 0.0 else -1
    # the line's parameter (in units of the whole line) at the next vertical and horizontal border
    next_x = ((ix + (1 if dx > 0.0 else 0)) - fx) / dx if dx != 0.0 else math.inf
    next_y = ((iy + (1 if dy > 0.0 else 0)) - fy) / dy if dy != 0.0 else math.inf
    delta_x = abs(1.0 / dx) if dx != 0.0 else math.inf
    delta_y = abs(1.0 / dy) if dy != 0.0 else math.inf
    for _ in range(nx + ny + 2):
        c = iy * nx + ix
        for k in range(starts[c], starts[c + 1]):
            s = items[k]
            if seen[s] == stamp:
                continue
            seen[s] = stamp
            if _crosses(px, py, qx, qy, segments[s, 0], segments[s, 1], segments[s, 2], segments[s, 3]):
                return True
        if ix == jx and iy == jy:
            return False
        if next_x < next_y:
            ix += step_x
            next_x += delta_x
        else:
            iy += step_y
            next_y += delta_y
        if ix < 0 or iy < 0 or ix >= nx or iy >= ny:
            return False
    return False


@jit
def visible_people(robots, people, chosen, present, reach_sq, line_of_sight, segments, x0, y0, cell, nx, ny, starts,
                   items, seen, stamp, out):  # pragma: no cover - compiled
    """Into ``out`` (R, K) whether robot ``r`` (at ``robots[r]``, m) sees person
    ``chosen[r, k]`` (at ``people[chosen[r, k]]``) where ``present[r, k]``: within
    ``sqrt(reach_sq)`` m (inf: any distance) and, with ``line_of_sight``, with no wall of the
    index between their centres. Returns the next free ``stamp``."""
    for r in range(chosen.shape[0]):
        px, py = robots[r, 0], robots[r, 1]
        for k in range(chosen.shape[1]):
            out[r, k] = False
            if not present[r, k]:
                continue
            j = chosen[r, k]
            qx, qy = people[j, 0], people[j, 1]
            if (qx - px) ** 2 + (qy - py) ** 2 > reach_sq:
                continue
            if line_of_sight:
                stamp += 1
                if _hidden(px, py, qx, qy, segments, x0, y0, cell, nx, ny, starts, items, seen, stamp):
                    continue
            out[r, k] = True
    return stamp


@jit
def _mix(z):  # pragma: no cover - compiled
    """SplitMix64's finalizer of a 64-bit word."""
    z = (z ^ (z >> np.uint64(30))) * MIX_1
    z = (z ^ (z >> np.uint64(27))) * MIX_2
    return z ^ (z >> np.uint64(31))


@jit
def gaussian_noise(keys, counters, slots, out):  # pragma: no cover - compiled
    """Into ``out`` (R, slots, 2) standard normal numbers: a function of robot ``r``'s
    ``keys[r]`` (uint64), ``counters[r]`` (int64, its actions this episode), the slot and the
    axis alone (two SplitMix64 words per slot give two uniforms, Box-Muller two normals)."""
    for r in range(keys.shape[0]):
        base = _mix(keys[r] + np.uint64(counters[r]) * GOLDEN)
        for k in range(slots):
            first = _mix(base + np.uint64(2 * k + 1) * GOLDEN)
            second = _mix(base + np.uint64(2 * k + 2) * GOLDEN)
            u1 = (float(first >> np.uint64(11)) + 1.0) * UNIT  # (0, 1]: the logarithm stays finite
            u2 = float(second >> np.uint64(11)) * UNIT
            radius = math.sqrt(-2.0 * math.log(u1))
            out[r, k, 0] = radius * math.cos(2.0 * math.pi * u2)
            out[r, k, 1] = radius * math.sin(2.0 * math.pi * u2)


class PeopleSight:
    """Who each robot sees and how exactly (the module's docstring).

    Args:
        walls: (N, 4) the world's wall segments in its own frame (m), which occlude.
        robots: how many robots.
        sensing_range: the range (m); 0: unlimited.
        line_of_sight: whether walls hide people.
        noise: the position noise's standard deviation (m); 0: none.
    """

    def __init__(self, walls: np.ndarray, robots: int, sensing_range: float, line_of_sight: bool, noise: float) -> None:
        self._index = WallIndex(walls)
        self._seen = np.zeros(len(self._index.segments), dtype=np.int64)
        self._stamp = 0
        self._reach_sq = sensing_range * sensing_range if sensing_range > 0.0 else math.inf
        self.line_of_sight = bool(line_of_sight)
        self.noise = float(noise)
        #: Each robot's episode key (the noise's seed) and its actions in the episode.
        self.keys = np.zeros(robots, dtype=np.uint64)
        self.counters = np.zeros(robots, dtype=np.int64)

    def start_episode(self, index: int, rng: np.random.Generator) -> None:
        """Robot ``index`` starts an episode: a new noise key from ``rng`` (drawn only with
        noise, so that other tasks' episodes draw as they always did)."""
        self.counters[index] = 0
        if self.noise > 0.0:
            self.keys[index] = np.uint64(int(rng.integers(0, 2**63, dtype=np.int64)))

    def after_action(self) -> None:
        """Every robot has taken an action (its next observation has new noise)."""
        self.counters += 1

    def visible(self, robots: np.ndarray, people: np.ndarray, chosen: np.ndarray, present: np.ndarray) -> np.ndarray:
        """(R, K) whether each robot (``robots`` (R, 2), m, its world's frame) sees each of its
        candidates (``chosen`` (R, K) rows of ``people`` (P, 2), m, where ``present``)."""
        out = np.zeros(chosen.shape, dtype=bool)
        index = self._index
        self._stamp = visible_people(
            typed(robots, np.float64), typed(people, np.float64), typed(chosen, np.int64), typed(present, np.bool_),
            self._reach_sq, self.line_of_sight, index.segments, index.x0, index.y0, index.cell, index.nx, index.ny,
            index.starts, index.items, self._seen, self._stamp, out,
        )
        return out

    def position_noise(self, slots: int) -> np.ndarray:
        """(R, slots, 2) the noise (m) of each robot's observed people this action (zeros
        without noise)."""
        out = np.zeros((len(self.keys), slots, 2))
        if self.noise > 0.0:
            gaussian_noise(self.keys, self.counters, slots, out)
            out *= self.noise
        return out
