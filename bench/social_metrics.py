"""What the social navigation metrics cost a step (:mod:`sim_server.core.crowd.social_metrics`).

``social metrics, 1,024 robots``: one :meth:`~sim_server.core.crowd.social_metrics.SocialMetrics.update`
of 1,024 robots, each alone in a world (a 9 m square room, as the learning world's area) with
10 people walking about, all worlds in one batch, as the learning fleet would call it once per
action (step size 0.1 s); with and without ``people_ids`` (the people's decelerations and
swerves need them). The scene's frames are made before the clock starts (robots and people at
up to 1 and 1.5 m/s, bouncing off the room's sides) and replayed in turn, so only the update is
timed. Figures: microseconds per robot-step, from this process's CPU time (``time.process_time``,
less sensitive than the wall clock to other processes on a shared machine), the best of
``REPEATS`` runs, and the wall-clock milliseconds per update of the best run.

Run alone: ``python -m bench.social_metrics [--seconds S]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from sim_server.core.crowd.social_metrics import SocialMetrics

#: Robots (one a world), people per world, the rooms' side (m), the update interval (s).
ROBOTS, PEOPLE_PER_WORLD, ROOM, STEP_SIZE = 1024, 10, 9.0, 0.1
#: Frames of the scene replayed in turn, and timed runs of which the best counts.
FRAMES, REPEATS = 64, 5
#: Radii of the robots and the people (m).
ROBOT_RADIUS, PERSON_RADIUS = 0.3, 0.3
#: The scenario's name.
SCENARIO = f"social metrics, {ROBOTS:,} robots, {PEOPLE_PER_WORLD} people each"


def bounce(positions: np.ndarray, velocities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One step of ``STEP_SIZE`` for bodies that bounce off the room's sides (m, m/s)."""
    moved = positions + velocities * STEP_SIZE
    outside = (moved < 0.0) | (moved > ROOM)
    velocities = np.where(outside, -velocities, velocities)
    return np.clip(moved, 0.0, ROOM), velocities


def scene(seed: int = 0) -> list[dict[str, np.ndarray]]:
    """``FRAMES`` frames of the robots and people, as update's arguments by name."""
    rng = np.random.default_rng(seed)
    people = ROBOTS * PEOPLE_PER_WORLD
    robot_position, people_position = rng.uniform(0.0, ROOM, (ROBOTS, 2)), rng.uniform(0.0, ROOM, (people, 2))
    robot_velocity, people_velocity = rng.uniform(-0.7, 0.7, (ROBOTS, 2)), rng.uniform(-1.0, 1.0, (people, 2))
    goals = rng.uniform(0.0, ROOM, (ROBOTS, 2))
    worlds = np.repeat(np.arange(ROBOTS), PEOPLE_PER_WORLD)
    frames = []
    for _ in range(FRAMES):
        robot_position, robot_velocity = bounce(robot_position, robot_velocity)
        people_position, people_velocity = bounce(people_position, people_velocity)
        frames.append({
            "robot_positions": robot_position, "robot_velocities": robot_velocity,
            "robot_radii": np.full(ROBOTS, ROBOT_RADIUS), "goals": goals, "people_positions": people_position,
            "people_velocities": people_velocity, "people_radii": np.full(people, PERSON_RADIUS), "people_worlds": worlds,
            "collided_person": np.zeros(ROBOTS, dtype=bool), "collided_other": np.zeros(ROBOTS, dtype=bool),
        })
    return frames


def measure(frames: list[dict[str, np.ndarray]], seconds: float, ids: bool) -> dict[str, float]:
    """The best of ``REPEATS`` runs of about ``seconds / REPEATS`` each: CPU microseconds per
    robot-step and wall milliseconds per update."""
    metrics = SocialMetrics(ROBOTS, STEP_SIZE)
    metrics.reset(np.arange(ROBOTS), frames[0]["robot_positions"], frames[0]["robot_velocities"])
    people_ids = np.arange(ROBOTS * PEOPLE_PER_WORLD) if ids else None
    metrics.update(**frames[0], people_ids=people_ids)  # compiled (or loaded from numba's cache) here
    best_cpu = best_wall = np.inf
    for _ in range(REPEATS):
        updates, cpu, wall = 0, time.process_time(), time.perf_counter()
        while time.perf_counter() - wall < seconds / REPEATS:
            for frame in frames:
                metrics.update(**frame, people_ids=people_ids)
            updates += len(frames)
        best_cpu = min(best_cpu, (time.process_time() - cpu) / updates)
        best_wall = min(best_wall, (time.perf_counter() - wall) / updates)
    assert np.isfinite(metrics.table()["min_person_gap"]).all()  # every robot saw its people
    return {"us_per_robot_step": 1e6 * best_cpu / ROBOTS, "ms_per_update": 1e3 * best_wall}


def run(seconds: float) -> dict[str, dict[str, float]]:
    """``{SCENARIO: {"us_per_robot_step", "ms_per_update", and both "..._with_ids"}}``."""
    frames = scene()
    bare, followed = measure(frames, seconds / 2, ids=False), measure(frames, seconds / 2, ids=True)
    return {SCENARIO: {**bare, **{f"{key}_with_ids": value for key, value in followed.items()}}}


def main(argv: list[str] | None = None) -> int:
    """Print the scenario's figures."""
    parser = argparse.ArgumentParser(description="the social navigation metrics' cost per robot-step")
    parser.add_argument("--seconds", type=float, default=5.0, help="wall seconds of measuring")
    args = parser.parse_args(argv)
    for name, figures in run(args.seconds).items():
        print(f"{name}: {figures['us_per_robot_step']:.3f} us a robot-step ({figures['ms_per_update']:.3f} ms an update); "
              f"with people_ids {figures['us_per_robot_step_with_ids']:.3f} us ({figures['ms_per_update_with_ids']:.3f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
