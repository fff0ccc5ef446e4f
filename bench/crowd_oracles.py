"""The crowd models beside independent implementations, on identical scenes.

* social force against pysocialforce 1.1.2 (the model with pedsim's forces, NumPy over all
  pairs): trajectories of a scene of people walking to goals, and the time a step takes;
* ORCA against RVO2 (its C++ through the pyrvo 0.4.3 binding) on RVO2's own circle swap
  (agents on a circle walk to the opposite point): overlaps, arrival times and the time a step
  takes (RVO2's includes the Python loop setting preferred velocities, as its users write it).

Our side runs the compiled kernels directly (:mod:`sim_server.core.crowd`), with the positions
integrated here as the oracles integrate theirs (``x += v dt``), so that only the models differ.
The tests (``test/core/crowd``) check the comparisons; ``make bench`` reports the timings.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import shutil
import tempfile
import time
from dataclasses import replace
from typing import Any

import numpy as np

from sim_server.core.crowd.neighbors import build_grid
from sim_server.core.crowd.orca import orca_step
from sim_server.core.crowd.social_force import neighbour_grids, social_force_step
from sim_server.core.crowd.walls import WallIndex
from sim_server.core.format.crowd_file import OrcaParameters, SocialForceParameters

#: pysocialforce's agent radius (m), which only its obstacle force reads.
PYSOCIALFORCE_RADIUS = 0.35
#: The scene of the speed comparison: 1,000 agents in a 50 m square (the issue tracker's).
SPEED_AGENTS = 1000
SPEED_SIZE = 50.0
#: RVO2's circle example: 250 agents on a 200 m circle, its agent defaults and time step.
CIRCLE_AGENTS = 250
CIRCLE_RADIUS = 200.0
CIRCLE_STEP = 0.25
CIRCLE_AGENT = {"neighbor_distance": 15.0, "max_neighbors": 10, "time_horizon": 10.0, "time_horizon_obstacles": 10.0}
CIRCLE_BODY = 1.5
CIRCLE_SPEED = 2.0


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


def run_pysocialforce(state: np.ndarray, groups: list[list[int]] | None, dt: float, steps: int) -> tuple[np.ndarray, float]:
    """pysocialforce's default model (its default.toml) with step ``dt`` s: the trajectory
    (steps + 1, N, 4: x, y, vx, vy) and the wall seconds a step took."""
    pysocialforce = import_pysocialforce()
    import toml

    config = toml.load(os.path.join(os.path.dirname(pysocialforce.__file__), "config", "default.toml"))
    config["step_width"] = dt  # PedState reads it at the top level (its default 0.4 s)
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as handle:
        toml.dump(config, handle)
    try:
        # Its forces are numba functions compiled on their first call: a small scene first.
        pysocialforce.Simulator(state[:2].copy(), obstacles=None, config_file=handle.name).step(1)
        simulator = pysocialforce.Simulator(state.copy(), groups=groups, obstacles=None, config_file=handle.name)
    finally:
        os.unlink(handle.name)
    started = time.perf_counter()
    simulator.step(steps)
    elapsed = (time.perf_counter() - started) / steps
    return simulator.get_states()[0][:, :, :4], elapsed


def pysocialforce_parameters(**changes: Any) -> SocialForceParameters:
    """Our parameters as pysocialforce 1.1.2 runs its defaults: every pair (no range, no cutoff),
    theta unwrapped, the speed cap equal to the desired speed (it walks at its cap: 1.3 times
    the initial speed), and the group forces' factors it applies (its ``...Alt`` forces find no
    section of their own in its default.toml, so their factors stay 1)."""
    return replace(
        SocialForceParameters(), neighbor_range=1.0e6, force_cutoff=0.0, wrap_angle=False, max_speed_multiplier=1.0,
        coherence_factor=1.0, gaze_factor=1.0, **changes,
    )


def run_social_force(state: np.ndarray, groups: list[list[int]] | None, dt: float, steps: int,
                     parameters: SocialForceParameters) -> tuple[np.ndarray, float]:
    """Our social force kernel on a pysocialforce state (preferred speed 1.3 times the initial
    speed, as pysocialforce's): the trajectory (steps + 1, N, 4) and the seconds a step took
    (neighbour grid, kernel and integration)."""
    count = len(state)
    position, velocity, goal = state[:, 0:2].copy(), state[:, 2:4].copy(), state[:, 4:6].copy()
    preferred = 1.3 * np.linalg.norm(velocity, axis=1)
    group_ids = np.full(count, -1, dtype=np.int64)
    for index, members in enumerate(groups or []):
        group_ids[members] = index
    walls = WallIndex(np.zeros((0, 4)))
    radii = np.full(count, PYSOCIALFORCE_RADIUS)
    copies, offsets = np.zeros(count, dtype=np.int64), np.zeros((count, 2))
    array = parameters.array()
    out = np.zeros((count, 2))
    trajectory = [np.hstack([position, velocity])]
    stamp = 1
    started = time.perf_counter()
    for _ in range(steps):
        offset = goal - position
        distance = np.linalg.norm(offset, axis=1)
        direction = offset / np.where(distance > 0.0, distance, 1.0)[:, None]
        grid = neighbour_grids(position, count, count, parameters.neighbor_range)
        stamp = social_force_step(array, dt, count, position, velocity, radii, copies, offsets, direction, distance,
                                  preferred,
                                  group_ids, len(groups or []), count, *grid, *walls.arrays(), stamp,
                                  *walls.nearest_map(), out)
        position = position + out * dt
        velocity = out.copy()
        trajectory.append(np.hstack([position, velocity]))
    elapsed = (time.perf_counter() - started) / steps
    return np.array(trajectory), elapsed


def circle_starts(count: int = CIRCLE_AGENTS, radius: float = CIRCLE_RADIUS) -> np.ndarray:
    """RVO2's circle example: ``count`` points evenly on a circle (m); each walks to its opposite."""
    angles = np.arange(count) * 2.0 * math.pi / count
    return radius * np.column_stack([np.cos(angles), np.sin(angles)])


def _preferred(position: np.ndarray, goals: np.ndarray) -> np.ndarray:
    """RVO2's example: towards the goal, at most 1 m/s."""
    offset = goals - position
    norm = np.linalg.norm(offset, axis=1)
    return offset * np.where(norm > 1.0, 1.0 / np.where(norm > 0.0, norm, 1.0), 1.0)[:, None]


def run_rvo2(starts: np.ndarray, steps: int, body: float = CIRCLE_BODY) -> tuple[np.ndarray, float]:
    """RVO2 (pyrvo) on the swap: positions (steps, N, 2) and seconds a step (the Python loop
    setting preferred velocities included)."""
    import pyrvo

    agent = CIRCLE_AGENT
    simulator = pyrvo.RVOSimulator(CIRCLE_STEP, agent["neighbor_distance"], agent["max_neighbors"],
                                   agent["time_horizon"], agent["time_horizon_obstacles"], body, CIRCLE_SPEED)
    for x, y in starts:
        simulator.add_agent((float(x), float(y)))
    goals = -starts
    count = len(starts)
    trajectory = np.empty((steps, count, 2))
    elapsed = 0.0
    for step in range(steps):
        started = time.perf_counter()
        for i in range(count):
            position = simulator.get_agent_position(i)
            gx, gy = float(goals[i, 0]) - position.x, float(goals[i, 1]) - position.y
            norm = math.hypot(gx, gy)
            if norm > 1.0:
                gx, gy = gx / norm, gy / norm
            simulator.set_agent_pref_velocity(i, (gx, gy))
        simulator.do_step()
        elapsed += time.perf_counter() - started
        for i in range(count):
            position = simulator.get_agent_position(i)
            trajectory[step, i] = position.x, position.y
    return trajectory, elapsed / steps


def run_orca(starts: np.ndarray, steps: int, body: float = CIRCLE_BODY) -> tuple[np.ndarray, float]:
    """Our ORCA kernel on the swap with RVO2's example settings: positions (steps, N, 2) and
    seconds a step (neighbour grid, preferred velocities, kernel and integration)."""
    agent = CIRCLE_AGENT
    parameters = OrcaParameters(neighbor_distance=agent["neighbor_distance"], max_neighbors=agent["max_neighbors"],
                                time_horizon=agent["time_horizon"], time_horizon_obstacles=agent["time_horizon_obstacles"])
    array = parameters.array()
    count = len(starts)
    goals = -starts
    position, velocity, out = starts.copy(), np.zeros((count, 2)), np.zeros((count, 2))
    radii, speeds = np.full(count, body), np.full(count, CIRCLE_SPEED)
    copies, offsets = np.zeros(count, dtype=np.int64), np.zeros((count, 2))
    walls = WallIndex(np.zeros((0, 4)))
    trajectory = np.empty((steps, count, 2))
    stamp = 1
    elapsed = 0.0
    for step in range(steps):
        started = time.perf_counter()
        grid = build_grid(position, count, parameters.neighbor_distance)
        stamp = orca_step(array, CIRCLE_STEP, count, position, velocity, radii, copies, offsets,
                          _preferred(position, goals), speeds, count, *grid, *walls.arrays(), stamp, out)
        velocity = out.copy()
        position = position + velocity * CIRCLE_STEP
        elapsed += time.perf_counter() - started
        trajectory[step] = position
    return trajectory, elapsed / steps


def deepest_overlap(trajectory: np.ndarray, body: float) -> float:
    """The largest overlap (m) of two bodies of radius ``body`` over a trajectory (T, N, 2)."""
    deepest = 0.0
    for positions in trajectory:
        grid = positions[:, None, :] - positions[None, :, :]
        distances = np.hypot(grid[..., 0], grid[..., 1]) + np.eye(len(positions)) * 1.0e9
        deepest = max(deepest, 2.0 * body - float(distances.min()))
    return deepest


def arrival_steps(trajectory: np.ndarray, goals: np.ndarray, within: float = 1.0) -> np.ndarray:
    """Per agent, the first step at which it is within ``within`` m of its goal (-1: never)."""
    near = np.linalg.norm(trajectory - goals[None], axis=2) < within
    first = np.argmax(near, axis=0)
    return np.where(near.any(axis=0), first, -1)


def speed_comparison(steps: int = 5) -> dict[str, float]:
    """The social force on 1,000 agents in a 50 m square: ms a step of pysocialforce and of ours
    (pedsim's 10 m neighbourhood), and their ratio."""
    state = walking_scene(SPEED_AGENTS, SPEED_SIZE, seed=2)
    _, theirs = run_pysocialforce(state, None, 0.1, steps)
    run_social_force(state, None, 0.1, 2, SocialForceParameters())  # compiled code loaded
    _, ours = run_social_force(state, None, 0.1, 10 * steps, SocialForceParameters())
    return {"pysocialforce_ms": 1e3 * theirs, "ours_ms": 1e3 * ours, "ratio": theirs / ours}


#: Jitter (m) of the swap's starts: a perfectly symmetric swap can lock up in float64 (RVO2's
#: float32 rounding breaks the symmetry for it); both run the same jittered starts.
CIRCLE_JITTER = 1.0e-3


def circle_comparison(steps: int = 3500) -> dict[str, float]:
    """RVO2's circle swap (starts jittered by a millimetre) by RVO2 and by our ORCA: ms a step,
    the ratio, the deepest overlaps (m: RVO2's 0.25 s steps let bodies overlap in the crowded
    middle) and the arrivals."""
    starts = circle_starts() + np.random.default_rng(0).uniform(-CIRCLE_JITTER, CIRCLE_JITTER, (CIRCLE_AGENTS, 2))
    run_orca(starts[:4], 2)
    ours, ours_time = run_orca(starts, steps)
    theirs, their_time = run_rvo2(starts, steps)
    ours_arrival, their_arrival = arrival_steps(ours, -starts), arrival_steps(theirs, -starts)
    return {
        "rvo2_ms": 1e3 * their_time, "ours_ms": 1e3 * ours_time, "ratio": their_time / ours_time,
        "rvo2_overlap_m": deepest_overlap(theirs[::5], CIRCLE_BODY), "ours_overlap_m": deepest_overlap(ours[::5], CIRCLE_BODY),
        "rvo2_arrived": int((their_arrival >= 0).sum()), "ours_arrived": int((ours_arrival >= 0).sum()),
        "rvo2_mean_arrival_s": float(their_arrival[their_arrival >= 0].mean() * CIRCLE_STEP) if (their_arrival >= 0).any() else math.nan,
        "ours_mean_arrival_s": float(ours_arrival[ours_arrival >= 0].mean() * CIRCLE_STEP) if (ours_arrival >= 0).any() else math.nan,
    }


if __name__ == "__main__":
    print("social force, 1,000 agents:", speed_comparison())
    print("ORCA circle swap, 250 agents:", circle_comparison())
