"""People meet robots as people do: they give a robot room by its footprint, never shove it, and
walk on past it; with ``robot_visible: false`` they ignore it and only touch it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core import World
from sim_server.core.crowd.robot_footprints import nearest_on_footprint

#: Robot footprints: a circle of the radius, or a square whose half side is it.
CIRCLE = "{{type: circle, radius: {size}, density: 10}}"
SQUARE = "{{type: polygon, points: [[-{size}, -{size}], [{size}, -{size}], [{size}, {size}], [-{size}, {size}]], density: 10}}"
ROBOT = """
bodies:
  - name: base
    type: dynamic
    footprints:
      - {footprint}
plugins:
  - {{type: DiffDrive, name: drive, body: base}}
  - {{type: Bumper, name: bumper}}
"""
PERSON_RADIUS = 0.3


def world_with(tmp_path: Path, footprint: str, model: str, robot_visible: bool = True, start=(-6.0, 0.0),
               goal=(6.0, 0.0), extra: str = "", robot_at: tuple[float, float] = (0.0, 0.0)) -> World:
    (tmp_path / "robot.model.yaml").write_text(ROBOT.format(footprint=footprint))
    crowd = (
        f"  - name: people\n    model: {model}\n    radius: {PERSON_RADIUS}\n    speed: 1.3\n    seed: 1\n"
        f"    robot_visible: {'true' if robot_visible else 'false'}\n{extra}"
        f"    agents:\n      - {{count: 1, start: [{start[0]}, {start[1]}], waypoints: [[{goal[0]}, {goal[1]}]], loop: false}}\n"
    )
    (tmp_path / "far.dat").write_text("50 50 51 50\n")  # one wall far away: the layer robots and people share
    (tmp_path / "far.yaml").write_text("type: line_segments\ndata: far.dat\nscale: 1\norigin: [0, 0, 0]\n")
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nlayers:\n  - {name: 2d, map: far.yaml}\n"
        f"models:\n  - {{name: robot, model: robot.model.yaml, pose: [{robot_at[0]}, {robot_at[1]}, 0]}}\n"
        f"pedestrians:\n{crowd}"
    )
    return World.from_file(tmp_path / "world.yaml", step_size=0.01, seed=2)


def gap_to_robot(world: World, point: np.ndarray) -> float:
    """Distance (m) from a person's body at ``point`` to the robot's footprint (negative: overlap)."""
    body = world.models["robot"].bodies["base"].physics_body
    crowd = world.crowds.named("people")
    footprints = crowd.robots().footprints
    assert len(footprints.centres) == 1
    distance, _, _ = nearest_on_footprint(point[0], point[1], 0, body.position[0], body.position[1], body.angle,
                                          *footprints.arrays()[:6])
    return distance - PERSON_RADIUS


@pytest.mark.parametrize("model", ["social_force", "orca"])
@pytest.mark.parametrize("shape", ["circle", "square"])
@pytest.mark.parametrize("size", [0.2, 0.5, 1.0])
def test_a_person_walks_round_a_standing_robot_without_shoving_it(tmp_path: Path, model: str, shape: str, size: float) -> None:
    """The issue's check: one person walking along a line through a robot that stands still
    (its drive holding it): the robot moves less than 1 cm, the gap never goes below -1 cm,
    and the person reaches its goal behind the robot."""
    footprint = (CIRCLE if shape == "circle" else SQUARE).format(size=size)
    world = world_with(tmp_path, footprint, model)
    try:
        crowd = world.crowds.named("people")
        body = world.models["robot"].bodies["base"].physics_body
        start = np.array(body.position)
        smallest_gap = math.inf
        goal = np.array([6.0, 0.0])
        stop = crowd.spec.parameters.stop_distance
        for _ in range(3000):
            world.step(1)
            person = crowd.positions()[0]
            smallest_gap = min(smallest_gap, gap_to_robot(world, person))
            if np.linalg.norm(person - goal) < stop + 0.05:
                break
        moved = float(np.linalg.norm(np.array(body.position) - start))
        assert moved < 0.01, f"the robot was shoved {moved:.3f} m"
        assert smallest_gap > -0.01, f"the person overlapped the robot by {-smallest_gap:.3f} m"
        assert np.linalg.norm(crowd.positions()[0] - goal) < stop + 0.05, crowd.positions()[0]
    finally:
        world.close()


@pytest.mark.parametrize("model", ["social_force", "orca"])
def test_a_robot_driving_at_a_person_is_never_pushed_by_it(tmp_path: Path, model: str) -> None:
    """A robot drives straight at a standing person: the person steps aside (ORCA) or stands
    its ground (the social force: its goal holds it), but never walks into the robot, so the
    robot keeps its line (is not pushed aside) and stops where the person stands; where they
    touch, the robot's bumper reports it."""
    world = world_with(tmp_path, CIRCLE.format(size=0.4), model, start=(2.0, 0.0), goal=(2.0, 0.0))
    try:
        crowd = world.crowds.named("people")
        drive = world.plugins.plugins_of(world.models["robot"])[0]
        drive.command.linear, drive.command.angular = 1.0, 0.0
        bumper = world.plugins.plugins_of(world.models["robot"])[1]
        touched = False
        smallest_gap = math.inf
        for _ in range(400):
            world.step(1)
            smallest_gap = min(smallest_gap, gap_to_robot(world, crowd.positions()[0]))
            touched |= bool(bumper.last_collisions)
        body = world.models["robot"].bodies["base"].physics_body
        assert abs(body.position[1]) < 0.01 and abs(body.angle) < 0.01, (body.position, body.angle)
        assert smallest_gap > -0.02, smallest_gap
        if smallest_gap < 0.0:  # they touched: the contact counts
            assert touched
        if abs(crowd.positions()[0][1]) < PERSON_RADIUS + 0.4:  # the person stayed in its way
            assert body.position[0] < 2.0 - PERSON_RADIUS - 0.4 + 0.02, body.position  # stopped at the person
    finally:
        world.close()


@pytest.mark.parametrize("model", ["social_force", "orca"])
def test_an_invisible_robot_is_ignored_but_not_walked_through(tmp_path: Path, model: str) -> None:
    """``robot_visible: false`` (CrowdNav's invisible robot): the person walks at the robot as
    it walks where there is none (a robot 40 m away), and still does not shove it or pass
    through it."""
    worlds = []
    for folder, visible, robot_at in (("seen", True, (0.0, 0.0)), ("hidden", False, (0.0, 0.0)), ("far", True, (0.0, 40.0))):
        (tmp_path / folder).mkdir()
        worlds.append(world_with(tmp_path / folder, CIRCLE.format(size=0.5), model, robot_visible=visible, robot_at=robot_at))
    hidden = worlds[1]
    try:
        for world in worlds:
            world.step(200)  # 2 s: the person is about 2.6 m along, 3 m from the robot
        seen, ignored, alone = (world.crowds.named("people").positions()[0] for world in worlds)
        # only the one that sees the robot turns: the other walks as if it were not there
        assert np.abs(ignored - alone).max() < 1e-9 and np.abs(seen - alone).max() > 1e-3, (seen, ignored, alone)
        body = hidden.models["robot"].bodies["base"].physics_body
        smallest_gap = math.inf
        for _ in range(600):
            hidden.step(1)
            smallest_gap = min(smallest_gap, gap_to_robot(hidden, hidden.crowds.named("people").positions()[0]))
        assert smallest_gap > -0.01 and float(np.linalg.norm(np.array(body.position))) < 0.01
        assert smallest_gap < 0.01  # it walked up to the robot: they touch
    finally:
        for world in worlds:
            world.close()


@pytest.mark.parametrize("model", ["social_force", "orca"])
@pytest.mark.parametrize(("start", "goal"), [((1.75, 1.0), (1.75, 1.0)), ((-1.5, 1.0), (3.0, 1.0))])
def test_people_yield_to_a_robot_driving_an_arc_without_yielding_again_each_step(
        tmp_path: Path, model: str, start: tuple, goal: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """A square robot drives a circle (1 m/s, 1 rad/s: its velocity turns on every step) past a
    person standing by its way, or through the way of one walking across: the person never
    walks into it (the robot keeps to its circle but where it drives into the person), and
    people yield again between crowd updates only when the robot's velocities change in its own
    frame, not on every step of its arc (the yield keeps the arc's margin: with the velocity
    compared in the world's frame, the same runs yielded 40 to 66 times)."""
    world = world_with(tmp_path, SQUARE.format(size=0.4), model, start=start, goal=goal, robot_at=(0.0, 0.0))
    try:
        crowd = world.crowds.named("people")
        drive = world.plugins.plugins_of(world.models["robot"])[0]
        drive.command.linear, drive.command.angular = 1.0, 1.0
        between = []
        original = type(crowd)._yield

        def counted(self, rows, dt, robots=None, between_updates=False):
            between.append(between_updates)
            return original(self, rows, dt, robots, between_updates)

        monkeypatch.setattr(type(crowd), "_yield", counted)
        body = world.models["robot"].bodies["base"].physics_body
        smallest_gap, off_circle = math.inf, 0.0
        for _ in range(600):
            world.step(1)
            smallest_gap = min(smallest_gap, gap_to_robot(world, crowd.positions()[0]))
            off_circle = max(off_circle, abs(math.hypot(body.position[0], body.position[1] - 1.0) - 1.0))
        assert smallest_gap > -0.01, smallest_gap
        assert off_circle < 0.03, off_circle
        assert sum(between) <= 10, sum(between)
    finally:
        world.close()
