"""Where a step's time goes in the office with people (in-process, the cleaner's laser at 40 Hz).

The office world of :func:`bench.crowd_scenarios.office_world` with ``count`` people is stepped
twice: untimed inside, for the step's cost, then with each part timed (the timers add a
microsecond or so to each call, so the parts add up to a little more). The parts:

* **the people's model**: the social force kernel (one call per crowd update, at the crowd's own
  rate), split into the forces between people and robots (its pair loop, timed alone on the
  same arguments) and the rest of it (the walls, the desired force, groups); the walking
  directions from the navigation fields; the neighbour grids; pedsim's extra forces; the
  people who may touch a robot (their Box2D bodies active); people yielding to robots; the
  crowd's own Python around them (what its update and between-update checks leave);
* **the world**: Box2D's step (the people are kinematic bodies in it), each plugin (the
  cleaner's drive, its laser, whose casts see the people as circles: what they add to a cast is
  timed by casting the same scan without them, and its camera, which draws in-process while
  through the node it draws only for a subscriber), the other hooks and the step loop.

Units: microseconds per physics step (5 ms), averaged over the steps run (crowd updates every
few steps, lasers every fifth).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numba

from bench.crowd_scenarios import STEP_SIZE, office_world
from bench.part_timer import PartTimer, hook_name
from sim_server.core import compiled
from sim_server.core.world import World

#: Steps before timing (people leave their starts, the fields of their first goals are made).
WARM_STEPS = 400
#: The crowd's functions timed, by the module that calls them and the part they are.
CROWD_FUNCTIONS = {
    "social_force_step": "people: social force kernel",
    "walking_directions": "people: walking directions (navigation fields)",
    "neighbour_grids": "people: neighbour grids",
    "people_forces": "people: pedsim's extra forces",
}
CROWD_METHODS = {
    "_update_touch": "people: bodies that may touch a robot",
    "_yield": "people: yielding to robots",
}
BOX2D = "Box2D's step (people as kinematic bodies)"
PAIRS = "people: social forces between people and robots"
WALLS_AND_REST = "people: walls, desired force, groups (the kernel's rest)"
CROWD_PYTHON = "people: the crowd's Python around its kernels"
LASER_PEOPLE = "laser: what the people add to its casts"


def parts(count: int, steps: int) -> dict[str, Any]:
    """The office with ``count`` people: its step (us) and the parts of it (us per step)."""
    import sim_server.core.crowd.crowd as crowd_module
    from sim_server.core.crowd import social_force
    from sim_server.core.crowd.crowd import Crowd
    from sim_server.core.sensing import laser_scanner, raycast

    with tempfile.TemporaryDirectory() as folder:
        world = World.from_file(office_world(count, Path(folder)), step_size=STEP_SIZE)
    try:
        world.step(WARM_STEPS)
        started = time.perf_counter()  # not the process's CPU time: the pair forces may use two threads
        world.step(steps)
        step_us = 1e6 * (time.perf_counter() - started) / steps

        timer = PartTimer()
        for function, name in CROWD_FUNCTIONS.items():
            timer.patch(crowd_module, function, name, keep=function)
        for method, name in CROWD_METHODS.items():
            timer.patch(Crowd, method, name)
        timer.patch(Crowd, "before_step", "people, in all")
        timer.patch(type(world.physics), "Step", BOX2D)
        timer.patch(laser_scanner, "cast_scans", "laser: casts", keep="cast_scans")
        # The crowd's hook and the plugins' are timed inside (the people, each plugin).
        untimed = ("_step_crowds", "before_physics_step", "after_physics_step")
        timer.time_hooks(world, lambda _phase, hook: None if hook_name(hook).split(".")[-1] in untimed
                         else f"hook: {hook_name(hook)}")
        kept_hooks = timer.time_plugins(world, lambda phase, owner: f"plugin: {owner}, {phase}")
        try:
            started = time.perf_counter()
            world.step(steps)
            timed_us = 1e6 * (time.perf_counter() - started) / steps
        finally:
            timer.restore()
            world.plugins._hooks.update(kept_hooks)  # noqa: SLF001 - a benchmark's look inside
        per_step = timer.per_step(steps)
        captured = timer.captured

        # The kernel's pair loop alone, and a laser's cast without the people, on the last arguments.
        kernel = captured["social_force_step"]
        pair_share = _time(lambda: _pair_loop(social_force, kernel)) / _time(lambda: social_force.social_force_step(*kernel))
        kernel_us = per_step.pop(CROWD_FUNCTIONS["social_force_step"])
        per_step[PAIRS] = kernel_us * pair_share
        per_step[WALLS_AND_REST] = kernel_us * (1.0 - pair_share)
        cast = captured["cast_scans"]
        shapes = cast[5]
        without = raycast.MovingShapes(*_without_circles(shapes, world))
        people_share = 1.0 - _time(lambda: raycast.cast_scans(*cast[:5], without)) / _time(lambda: raycast.cast_scans(*cast))
        per_step[LASER_PEOPLE] = per_step.pop("laser: casts") * max(people_share, 0.0)
        crowd_total = per_step.pop("people, in all")
        people_parts = sum(value for name, value in per_step.items() if name.startswith("people: "))
        per_step[CROWD_PYTHON] = crowd_total - people_parts
        hooks = sum(value for name, value in per_step.items() if name.startswith(("hook: ", "plugin: ")))
        per_step["the step loop (the rest)"] = timed_us - crowd_total - per_step[BOX2D] - hooks
        ordered = dict(sorted(per_step.items(), key=lambda item: -item[1]))
        people = sum(crowd.people.count for crowd in world.crowds)
        return {"step_us": step_us, "timed_us": timed_us, "people": people, "parts": ordered}
    finally:
        world.close()


def _pair_loop(social_force: Any, arguments: tuple) -> Any:
    """The social force kernel's pair loop (people and robots) on its arguments, as the kernel
    runs it (in parts, on the threads, for large crowds)."""
    params, _dt, count, agents, _walking, _groups, grids, _walls, _stamp, _nearest, robots, _extra, _out = arguments
    positions, velocities, _radii, copies, _offsets = agents
    p = social_force
    parts = p.pair_parts(count)
    arguments = (count, positions, velocities, copies, params[p._RANGE], params[p._LAMBDA], params[p._GAMMA],
                 params[p._N], params[p._N_PRIME], params[p._CUTOFF_EXPONENT], params[p._WRAP] != 0.0, grids[0],
                 grids[1], robots, params[p._ROBOT_SCALING], parts)
    with compiled.parallel_turn(parts > 1 and numba.get_num_threads() > 1) as parallel:
        if parallel:
            return p._social_forces_parallel(*arguments, numba.get_num_threads())  # noqa: SLF001 - a look inside
        return p._social_forces_serial(*arguments)  # noqa: SLF001 - a look inside


def _without_circles(shapes: Any, world: World) -> tuple:
    """``shapes`` (:class:`~sim_server.core.sensing.raycast.MovingShapes`) without the people's
    circles (they come after the models' circles)."""
    people = sum(crowd.people.count for crowd in world.crowds)
    keep = len(shapes.circles) - people
    return (shapes.polygons, shapes.polygon_counts, shapes.polygon_bits, shapes.polygon_tags, shapes.circles[:keep],
            shapes.circle_bits[:keep], shapes.circle_tags[:keep], shapes.polygon_radii)


def _time(call: Callable[[], Any], repeats: int = 30) -> float:
    """The fastest of ``repeats`` calls (s)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


def run(quick: bool) -> dict[str, dict[str, Any]]:
    """The parts with 200 and 1,000 people."""
    steps = 1000 if quick else 3000
    return {f"office, {count} people": parts(count, steps) for count in (200, 1000)}


def lines(figures: dict[str, dict[str, Any]]) -> list[str]:
    """The runs as text."""
    out = []
    for name, run_figures in figures.items():
        out.append(f"{name} ({run_figures['people']} walking), in-process: {run_figures['step_us']:.0f} us/step "
                   f"({STEP_SIZE * 1e6 / run_figures['step_us']:.1f}x real time); timed by parts "
                   f"({run_figures['timed_us']:.0f} us/step):")
        out += [f"  {value:8.1f} us  {part}" for part, value in run_figures["parts"].items()]
    return out


if __name__ == "__main__":
    import sys

    print("\n".join(lines(run(quick="--quick" in sys.argv))))
