"""The social force beside an independent implementation, on identical scenes: pysocialforce
1.1.2 (the model with pedsim's forces, NumPy over all pairs). Trajectories of people walking to
goals, alone and in groups, and the time a step takes at pysocialforce's settings and at ours;
walls against a transcription of libpedsim's ``Tagent::obstacleForce`` (pedsim_ros's
``3rdparty/libpedsim``: the nearest point of the nearest obstacle only), added to pysocialforce's
forces in place of its own obstacle force (which sums over points sampled along each line).

Our side runs the compiled kernel directly (:mod:`sim_server.core.crowd.social_force`), with the
positions integrated here as the oracle integrates its own (``x += v dt``), so that only the
models differ. The kernel is called in one place (:func:`social_force_velocities`). Timings
alternate the two sides round by round (the host is shared: its speed moves by 20-30 % between
minutes) and report medians. The tests (``test/core/crowd``) check the comparisons; ``make
bench`` reports the timings (:mod:`bench.crowd_scenarios`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import replace
from typing import Any

import numpy as np

from sim_server.core.crowd.social_force import NO_EXTRA_FORCES, neighbour_grids, no_robots, social_force_step
from sim_server.core.crowd.walls import WallIndex
from sim_server.core.format.crowd_file import SocialForceParameters

#: pysocialforce's agent radius (m), which only its obstacle force reads.
PYSOCIALFORCE_RADIUS = 0.35
#: The scene of the speed comparison: 1,000 agents in a 50 m square (the issue tracker's).
SPEED_AGENTS = 1000
SPEED_SIZE = 50.0


def import_pysocialforce() -> Any:
    """pysocialforce, imported without its side effects: importing it sets the root logger to
    DEBUG with a console handler of its own and opens ``file.log`` in the working directory."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    here = os.getcwd()
    scratch = tempfile.mkdtemp()
    os.chdir(scratch)
    try:
        with open(os.devnull, "w") as quiet, contextlib.redirect_stderr(quiet):  # its handler's stream
            import pysocialforce
    finally:
        os.chdir(here)
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
                handler.close()
        root.setLevel(level)
        shutil.rmtree(scratch, ignore_errors=True)
    return pysocialforce


def walking_scene(count: int, size: float, seed: int) -> np.ndarray:
    """(count, 6) pysocialforce states x, y, vx, vy, goal x, goal y: people at random places of a
    ``size`` m square, walking at 0.5 to 1 m/s towards random goals in it."""
    rng = np.random.default_rng(seed)
    state = np.zeros((count, 6))
    state[:, 0:2] = rng.uniform(0.0, size, (count, 2))
    state[:, 4:6] = rng.uniform(0.0, size, (count, 2))
    direction = state[:, 4:6] - state[:, 0:2]
    direction /= np.linalg.norm(direction, axis=1)[:, None]
    state[:, 2:4] = direction * rng.uniform(0.5, 1.0, (count, 1))
    return state


def crowd_step(count: int, seed: int) -> np.ndarray:
    """New velocities (m/s) after one step of the kernel at our defaults (pedsim's 10 m
    neighbourhood, the cutoff; 0.05 s, no walls) of ``count`` agents walking every way in a square
    that holds about one per 4 square metres (:func:`walking_scene`)."""
    state = walking_scene(count, 2.0 * math.sqrt(count), seed=seed)
    position, velocity = state[:, 0:2].copy(), state[:, 2:4].copy()
    offset = state[:, 4:6] - position
    distance = np.linalg.norm(offset, axis=1)
    out = np.zeros((count, 2))
    empty = WallIndex(np.zeros((0, 4)))
    agents = (position, velocity, np.full(count, 0.3), np.zeros(count, dtype=np.int64), np.zeros((count, 2)))
    walking = (offset / distance[:, None], distance, np.full(count, 1.3))
    social_force_step(SocialForceParameters().array(), 0.05, count, agents, walking,
                      (np.full(count, -1, dtype=np.int64), 0), neighbour_grids(position, count, count, 10.0),
                      empty.arrays(), 1, empty.nearest_map(), no_robots(), NO_EXTRA_FORCES, out)
    return out


def pedsim_obstacle_force(positions: np.ndarray, segments: np.ndarray, radius: float, sigma: float) -> np.ndarray:
    """libpedsim's ``Tagent::obstacleForce`` for each of ``positions`` (N, 2; m), transcribed:
    over every obstacle ``segments`` (x1, y1, x2, y2) its ``closestPoint`` (the start where the
    projection's lambda <= 0, the end where >= 1), the nearest kept (the first on a tie), and
    ``exp(-(distance - radius) / sigma)`` along the unit difference; (N, 2) before the factor."""
    forces = np.zeros((len(positions), 2))
    for i, (px, py) in enumerate(positions):
        nearest_sq, difference = math.inf, (0.0, 0.0)
        for ax, ay, bx, by in segments:
            ex, ey = bx - ax, by - ay
            along = ((px - ax) * ex + (py - ay) * ey) / (ex * ex + ey * ey)
            if along <= 0.0:
                qx, qy = ax, ay
            elif along >= 1.0:
                qx, qy = bx, by
            else:
                qx, qy = ax + along * ex, ay + along * ey
            distance_sq = (px - qx) ** 2 + (py - qy) ** 2
            if distance_sq < nearest_sq:
                nearest_sq, difference = distance_sq, (px - qx, py - qy)
        distance = math.sqrt(nearest_sq)
        amount = math.exp(-(distance - radius) / sigma)
        forces[i] = amount * difference[0] / distance, amount * difference[1] / distance
    return forces


class _PedsimObstacleForce:
    """A force of pysocialforce's simulator (it sums ``get_force()`` of each): libpedsim's."""

    def __init__(self, peds: Any, segments: np.ndarray, factor: float, sigma: float) -> None:
        self.peds, self.segments, self.factor, self.sigma = peds, segments, factor, sigma

    def get_force(self) -> np.ndarray:
        return self.factor * pedsim_obstacle_force(self.peds.pos(), self.segments, self.peds.agent_radius, self.sigma)


class _SoftenedCoherence:
    """pedsim_ros's ``GroupCoherenceForce`` in its softened form, which pysocialforce's
    ``GroupCoherenceForceAlt`` transcribes, with the distance to the group's centre measured
    (pysocialforce's ``stateutils.speeds`` reads columns 2:4 of the (n, 2) offsets: always 0):
    ``(c - x) (tanh(|c - x| - (n - 1) / 2) + 1) / 2`` for each member at x of a group of n
    whose centre is c, times the factor."""

    def __init__(self, peds: Any, factor: float) -> None:
        self.peds, self.factor = peds, factor

    def get_force(self) -> np.ndarray:
        forces = np.zeros((self.peds.size(), 2))
        for group in self.peds.groups:
            members = self.peds.pos()[group, :]
            offsets = members.mean(axis=0) - members
            distances = np.linalg.norm(offsets, axis=1)
            forces[group, :] += offsets * ((np.tanh(distances - (len(group) - 1) / 2.0) + 1.0) / 2.0)[:, None]
        return self.factor * forces


def pysocialforce_simulator(state: np.ndarray, groups: list[list[int]] | None, dt: float,
                            walls: np.ndarray | None = None, coherence: str = "pysocialforce") -> Any:
    """pysocialforce's default model (its default.toml) with step ``dt`` s, compiled (its forces
    are numba functions compiled on their first call: a small scene runs first). ``walls`` (N,
    4; m) push by libpedsim's obstacle force (its factor 10 and sigma 0.2 m, pysocialforce's
    defaults); ``coherence``: "pysocialforce" (its own), "pedsim" (:class:`_SoftenedCoherence`,
    factor 1 as pysocialforce's) or "off"."""
    pysocialforce = import_pysocialforce()
    import toml

    config = toml.load(os.path.join(os.path.dirname(pysocialforce.__file__), "config", "default.toml"))
    config["step_width"] = dt  # PedState reads it at the top level (its default 0.4 s)
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as handle:
        toml.dump(config, handle)
    try:
        pysocialforce.Simulator(state[:2].copy(), obstacles=None, config_file=handle.name).step(1)
        simulator = pysocialforce.Simulator(state.copy(), groups=groups, obstacles=None, config_file=handle.name)
    finally:
        os.unlink(handle.name)
    if coherence != "pysocialforce":
        simulator.forces = [force for force in simulator.forces if type(force).__name__ != "GroupCoherenceForceAlt"]
        if coherence == "pedsim":
            simulator.forces.append(_SoftenedCoherence(simulator.peds, 1.0))
    if walls is not None:
        obstacle = config["obstacle_force"]
        simulator.forces.append(_PedsimObstacleForce(simulator.peds, np.asarray(walls, dtype=np.float64),
                                                     obstacle["factor"], obstacle["sigma"]))
    return simulator


def run_pysocialforce(state: np.ndarray, groups: list[list[int]] | None, dt: float, steps: int,
                      walls: np.ndarray | None = None, coherence: str = "pysocialforce") -> tuple[np.ndarray, float]:
    """pysocialforce (:func:`pysocialforce_simulator`) for ``steps``: the trajectory (steps + 1,
    N, 4: x, y, vx, vy) and the wall seconds a step took."""
    simulator = pysocialforce_simulator(state, groups, dt, walls, coherence)
    started = time.perf_counter()
    simulator.step(steps)
    elapsed = (time.perf_counter() - started) / steps
    return simulator.get_states()[0][:, :, :4], elapsed


def pysocialforce_parameters(**changes: Any) -> SocialForceParameters:
    """Our parameters as pysocialforce 1.1.2 runs its defaults: every pair (no range, no cutoff),
    theta unwrapped, the speed cap equal to the desired speed (it walks at its cap: 1.3 times
    the initial speed), and the group forces' factors it applies (its ``...Alt`` forces find no
    section of their own in its default.toml, so their factors stay 1); without pedsim_ros's
    random and along-wall forces, which it does not have."""
    settings = dict(neighbor_range=1.0e6, force_cutoff=0.0, wrap_angle=False, max_speed_multiplier=1.0,
                    coherence_factor=1.0, gaze_factor=1.0, random_factor=0.0, along_wall_factor=0.0)
    return replace(SocialForceParameters(), **{**settings, **changes})


def social_force_velocities(parameters: SocialForceParameters, dt: float, position: np.ndarray, velocity: np.ndarray,
                            radii: np.ndarray, direction: np.ndarray, distance: np.ndarray, preferred: np.ndarray,
                            group_ids: np.ndarray, walls: WallIndex, stamp: int) -> tuple[np.ndarray, int]:
    """One step of our social force kernel for agents alone (no robots, one copy of the world;
    ``group_ids`` -1 or a group's number): the new velocities (N, 2; m/s) and the next stamp of
    the wall index. The one place the kernel is called from here."""
    count = len(position)
    out = np.zeros((count, 2))
    grid = neighbour_grids(position, count, count, parameters.neighbor_range)
    group_count = int(group_ids.max()) + 1 if count else 0
    agents = (position, velocity, radii, np.zeros(count, dtype=np.int64), np.zeros((count, 2)))
    stamp = social_force_step(parameters.array(), dt, count, agents, (direction, distance, preferred),
                              (group_ids, max(group_count, 0)), grid, walls.arrays(), stamp, walls.nearest_map(),
                              no_robots(), NO_EXTRA_FORCES, out)
    return out, stamp


class SocialForceRun:
    """Our social force on a pysocialforce state, step by step (preferred speed 1.3 times the
    initial speed, as pysocialforce's)."""

    def __init__(self, state: np.ndarray, groups: list[list[int]] | None, dt: float, parameters: SocialForceParameters,
                 walls: np.ndarray | None = None, radius: float = PYSOCIALFORCE_RADIUS) -> None:
        count = len(state)
        self.position, self.velocity = state[:, 0:2].copy(), state[:, 2:4].copy()
        self.goal = state[:, 4:6].copy()
        self.preferred = 1.3 * np.linalg.norm(self.velocity, axis=1)
        self.group_ids = np.full(count, -1, dtype=np.int64)
        for index, members in enumerate(groups or []):
            self.group_ids[members] = index
        self.walls = WallIndex(np.zeros((0, 4)) if walls is None else walls)
        self.radii = np.full(count, radius)
        self.parameters = parameters
        self.dt = dt
        self.stamp = 1

    def state(self) -> np.ndarray:
        """(N, 4) x, y, vx, vy."""
        return np.hstack([self.position, self.velocity])

    def step(self) -> None:
        """One step: walking directions, the kernel, ``x += v dt``."""
        offset = self.goal - self.position
        distance = np.linalg.norm(offset, axis=1)
        direction = offset / np.where(distance > 0.0, distance, 1.0)[:, None]
        out, self.stamp = social_force_velocities(self.parameters, self.dt, self.position, self.velocity, self.radii,
                                                  direction, distance, self.preferred, self.group_ids, self.walls,
                                                  self.stamp)
        self.position = self.position + out * self.dt
        self.velocity = out


def run_social_force(state: np.ndarray, groups: list[list[int]] | None, dt: float, steps: int,
                     parameters: SocialForceParameters, walls: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Our social force kernel on a pysocialforce state (:class:`SocialForceRun`): the
    trajectory (steps + 1, N, 4) and the seconds a step took (neighbour grid, kernel and
    integration)."""
    run = SocialForceRun(state, groups, dt, parameters, walls)
    trajectory = [run.state()]
    started = time.perf_counter()
    for _ in range(steps):
        run.step()
        trajectory.append(run.state())
    elapsed = (time.perf_counter() - started) / steps
    return np.array(trajectory), elapsed


#: Our steps timed per round of :func:`speed_comparison` (one of pysocialforce's).
OURS_PER_ROUND = 5


def speed_comparison(rounds: int = 5) -> dict[str, float]:
    """The social force on 1,000 agents in a 50 m square, one of pysocialforce's steps, then
    :data:`OURS_PER_ROUND` of ours at its settings (every pair, no cutoff: as
    :func:`pysocialforce_parameters`, the same trajectories), at its range and cutoff with
    pedsim's wrapped angle (each pair computed once), and at our defaults (pedsim's 10 m
    neighbourhood and the force cutoff), round by round: medians of ms a step, and the ratios."""
    state = walking_scene(SPEED_AGENTS, SPEED_SIZE, seed=2)
    theirs = pysocialforce_simulator(state, None, 0.1)
    ours = {
        "matched": SocialForceRun(state, None, 0.1, pysocialforce_parameters()),
        "range_cutoff": SocialForceRun(state, None, 0.1, replace(SocialForceParameters(), neighbor_range=1.0e6,
                                                                 force_cutoff=0.0)),
        "default": SocialForceRun(state, None, 0.1, SocialForceParameters()),
    }
    for run in ours.values():
        run.step()  # compiled code loaded
    times: dict[str, list[float]] = {"pysocialforce": [], **{name: [] for name in ours}}
    for _ in range(rounds):
        started = time.perf_counter()
        theirs.step(1)
        times["pysocialforce"].append(time.perf_counter() - started)
        for name, run in ours.items():
            started = time.perf_counter()
            for _ in range(OURS_PER_ROUND):
                run.step()
            times[name].append((time.perf_counter() - started) / OURS_PER_ROUND)
    medians = {name: 1e3 * statistics.median(values) for name, values in times.items()}
    result = {"pysocialforce_ms": medians["pysocialforce"], "rounds": rounds}
    for name in ours:
        result[f"ours_{name}_ms"] = medians[name]
        result[f"ratio_{name}"] = medians["pysocialforce"] / medians[name]
    result["ours_ms"], result["ratio"] = result["ours_default_ms"], result["ratio_default"]
    return result



if __name__ == "__main__":
    print("social force, 1,000 agents:", speed_comparison())
