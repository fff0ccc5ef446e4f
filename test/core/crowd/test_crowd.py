"""Crowds in a world: people as bodies that sensors see and robots cannot pass, walking their
routes, seeded and deterministic."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core import Pose2D, World
from sim_server.core.errors import EntityError, RequestError
from sim_server.core.sensing.laser_scanner import LaserScanner, scan_all, scene_of

ROOM = "-6 -4 6 -4\n6 -4 6 4\n6 4 -6 4\n-6 4 -6 -4\n0 -4 0 -1\n0 1 0 4\n"
ROBOT = """
bodies:
  - name: base
    type: dynamic
    color: [0.2, 0.4, 1.0, 1.0]
    footprints:
      - {type: circle, radius: 0.25, density: 10}
plugins:
  - {type: Bumper, name: bumper}
"""


def make_world(tmp_path: Path, crowd: str, seed: int | None = 3, robot: bool = False, **kwargs) -> World:
    (tmp_path / "room.dat").write_text(ROOM)
    (tmp_path / "room.yaml").write_text("type: line_segments\ndata: room.dat\nscale: 1\norigin: [0, 0, 0]\n")
    (tmp_path / "robot.model.yaml").write_text(ROBOT)
    models = "models:\n  - {name: robot, model: robot.model.yaml, pose: [-3, 0, 0]}\n" if robot else ""
    text = f"properties: {{}}\nlayers:\n  - name: walls\n    map: room.yaml\n{models}pedestrians:\n{crowd}"
    (tmp_path / "world.yaml").write_text(text)
    return World.from_file(tmp_path / "world.yaml", step_size=0.01, seed=seed, **kwargs)


WALKERS = """\
  - name: people
    regions: {left: [-5.5, -3.5, -0.5, 3.5], right: [0.5, -3.5, 5.5, 3.5]}
    agents:
      - {count: 8, start: left, goals: right, wait: [0, 1]}
      - {count: 4, start: right, goals: left}
"""


def test_people_walk_to_goals_through_the_door(tmp_path: Path) -> None:
    world = make_world(tmp_path, WALKERS)
    crowd = world.crowds.named("people")
    assert crowd.people.count == 12
    start = crowd.positions().copy()
    crossed = np.zeros(12, dtype=bool)
    for _ in range(60):
        world.step(50)
        crossed |= np.sign(crowd.positions()[:, 0]) != np.sign(start[:, 0])
    assert crossed.sum() >= 10  # through the 2 m door, against each other
    world.close()


def test_people_never_enter_walls(tmp_path: Path) -> None:
    world = make_world(tmp_path, WALKERS)
    crowd = world.crowds.named("people")
    for _ in range(100):
        world.step(20)
        x, y = crowd.positions().T
        assert (np.abs(x) <= 6 - 0.3 + 1e-3).all() and (np.abs(y) <= 4 - 0.3 + 1e-3).all()
        in_wall_band = np.abs(x) < 0.3 - 1e-3
        assert (np.abs(y[in_wall_band]) <= 1 - 0.3 + 1e-3).all()  # only through the door
    world.close()


def test_the_same_seed_walks_the_same_way_and_reset_repeats_it(tmp_path: Path) -> None:
    first = make_world(tmp_path / "a", WALKERS, seed=7) if (tmp_path / "a").mkdir() is None else None
    second = make_world(tmp_path / "b", WALKERS, seed=7) if (tmp_path / "b").mkdir() is None else None
    other = make_world(tmp_path / "c", WALKERS, seed=8) if (tmp_path / "c").mkdir() is None else None
    for world in (first, second, other):
        world.step(300)
    a, b, c = (w.crowds.named("people").positions() for w in (first, second, other))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    first.reset()
    first.step(300)
    assert np.array_equal(first.crowds.named("people").positions(), a)
    for world in (first, second, other):
        world.close()


def test_waypoints_in_order_and_looping_with_waits(tmp_path: Path) -> None:
    crowd = """\
  - name: guard
    agents:
      - {start: [-4, -2], waypoints: [[-4, 2], [-2, 2]], wait: 1.0}
      - {start: [3, 0]}
"""
    world = make_world(tmp_path, crowd)
    guard = world.crowds.named("guard")
    visits, standing = [], guard.positions()[1].copy()
    for _ in range(300):
        world.step(10)
        waypoint = int(guard.people.waypoint[0])
        if not visits or visits[-1] != waypoint:
            visits.append(waypoint)
    assert visits[:4] == [0, 1, 0, 1]  # in order, then again from the first
    assert np.allclose(guard.positions()[1], standing)  # an idle one stands
    world.close()


def test_spawners_respect_rate_limit_and_total_and_people_leave_at_the_end(tmp_path: Path) -> None:
    crowd = """\
  - name: visitors
    spawners:
      - {at: [-5, 0], rate: 2.0, limit: 5, total: 8, waypoints: [[-1, 0]]}
"""
    world = make_world(tmp_path, crowd)
    visitors = world.crowds.named("visitors")
    most, names = 0, set()
    for _ in range(400):
        world.step(10)
        most = max(most, visitors.people.count)
        names.update(visitors.names())
    assert most <= 5
    assert len(names) == 8  # the total, then no more
    assert visitors.people.count == 0  # everyone reached the end and left
    world.close()


def test_groups_stay_together(tmp_path: Path) -> None:
    crowd = """\
  - name: family
    regions: {right: [1, -3, 5.5, 3]}
    agents:
      - {count: 3, start: [-4, 0], goals: right, group: true}
"""
    world = make_world(tmp_path, crowd)
    family = world.crowds.named("family")
    spreads = []
    for _ in range(40):
        world.step(25)
        positions = family.positions()
        spreads.append(np.linalg.norm(positions - positions.mean(axis=0), axis=1).max())
    assert max(spreads) < 2.5
    assert len({tuple(goal) for goal in family.people.goal[:3]}) == 1  # one goal for all
    world.close()


def test_lasers_see_people(tmp_path: Path) -> None:
    crowd = "  - name: one\n    agents:\n      - {start: [3, 0]}\n"
    world = make_world(tmp_path, crowd, robot=True)
    body = world.models["robot"].first_body.physics_body
    scanner = LaserScanner(body, Pose2D(), 0.0, math.pi, math.pi, 20.0, 0xFFFF)  # beams ahead and behind
    ranges = scan_all([scanner], scene_of(world), world.time.iterations)[0][0]
    # ahead the person (6 m away, radius 0.3) before the wall at x = 0 ... through the door
    assert ranges[0] == pytest.approx(6.0 - 0.3, abs=1e-3)
    assert ranges[1] == pytest.approx(3.0, abs=1e-3)  # behind, the room's wall
    world.close()


def test_a_robot_cannot_pass_through_a_person_and_touches_it(tmp_path: Path) -> None:
    crowd = "  - name: one\n    agents:\n      - {start: [-1.5, 0]}\n"
    world = make_world(tmp_path, crowd, robot=True)
    robot = world.models["robot"].first_body.physics_body
    person = world.crowds.named("one").positions()[0]
    touched = bumped = False
    for _ in range(300):
        robot.linearVelocity = (1.0, 0.0)
        world.step()
        gap = np.linalg.norm(np.array(robot.position) - person) - 0.55
        assert gap > -0.02  # Box2D's slop, no more
        touched |= any("one_0" in (c.entity_a, c.entity_b) for c in world.contacts())
        bumper = world.plugins.find(world.models["robot"], "bumper")
        if bumper.last_collisions:
            hit = bumper.last_collisions[0]
            assert (hit.entity_b, hit.body_b) == ("one_0", "body")  # the bumper names the person
            bumped = True
    assert touched and bumped
    assert np.allclose(world.crowds.named("one").positions()[0], person, atol=1e-6)  # people are not pushed
    world.close()


def test_people_walk_round_a_robot_in_their_way(tmp_path: Path) -> None:
    crowd = "  - name: one\n    agents:\n      - {start: [-5, 0], waypoints: [[-1, 0]], loop: false}\n"
    world = make_world(tmp_path, crowd, robot=True)
    robot = world.models["robot"].first_body.physics_body  # at (-3, 0), in the way
    for _ in range(800):
        robot.linearVelocity = (0.0, 0.0)
        world.step()
        gap = np.linalg.norm(world.crowds.named("one").positions()[0] - np.array(robot.position)) - 0.55
        assert gap > -0.02
    assert np.linalg.norm(world.crowds.named("one").positions()[0] - (-1, 0)) < 0.6
    world.close()


def test_people_are_added_and_removed_at_run_time(tmp_path: Path) -> None:
    world = make_world(tmp_path, "  - name: crowd\n")
    crowd = world.crowds.named("crowd")
    name = crowd.add((-3.0, 0.0), [(-3.0, 2.0), (-3.0, -2.0)])
    assert crowd.names() == [name]
    with pytest.raises(RequestError, match="within 0.3 m of a wall"):
        crowd.add((0.0, 3.0))
    world.step(100)
    crowd.remove(name)
    assert crowd.people.count == 0 and len(world.physics.bodies) == 1  # the walls' body
    with pytest.raises(EntityError):
        crowd.remove(name)
    world.close()


def test_orca_crowds_walk_too(tmp_path: Path) -> None:
    world = make_world(tmp_path, WALKERS.replace("  - name: people\n", "  - name: people\n    model: orca\n"))
    crowd = world.crowds.named("people")
    start = crowd.positions().copy()
    world.step(2000)
    assert np.linalg.norm(crowd.positions() - start, axis=1).mean() > 1.0
    world.close()


def test_replicas_share_one_crowd_and_copies_keep_to_themselves(tmp_path: Path) -> None:
    from sim_server.core.physics.replicas import Replicas

    world = make_world(tmp_path, WALKERS, replicas=Replicas(3, 2.0))
    assert [crowd.name for crowd in world.crowds] == ["people"]
    crowd = world.crowds.named("people")
    copies = crowd.people.rows("copy")
    assert np.bincount(copies).tolist() == [12, 12, 12]
    names = crowd.names()
    assert all(name.startswith(f"people_{copy}_") for name, copy in zip(names, copies))
    world.step(300)
    local = crowd.local_positions()
    assert (np.abs(local[:, 0]) < 6).all() and (np.abs(local[:, 1]) < 4).all()  # each in its own copy
    before = crowd.local_positions().copy()
    crowd.restart(1, seed=99)  # copy 1 alone starts afresh
    after = crowd.local_positions()
    copies = crowd.people.rows("copy")
    assert np.array_equal(np.sort(after[copies == 0], axis=0), np.sort(before[crowd.people.rows("copy") == 0], axis=0))
    world.close()


def test_a_copy_walks_as_the_same_world_alone_would(tmp_path: Path) -> None:
    # People of other copies never push a copy's people: copy 0 of three walks as a lone world
    # with copy 0's seed does.
    from sim_server.core.physics.replicas import Replicas

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    alone = make_world(tmp_path / "a", WALKERS, seed=5)
    copied = make_world(tmp_path / "b", WALKERS, seed=5, replicas=Replicas(3, 2.0))
    alone.crowds.named("people").restart(0, 17)
    copied.crowds.named("people").restart(0, 17)
    alone.step(200)
    copied.step(200)
    mine = copied.crowds.named("people")
    local = mine.local_positions()[mine.people.rows("copy") == 0]
    assert np.allclose(local, alone.crowds.named("people").local_positions(), atol=1e-4)
    alone.close()
    copied.close()


def test_pictures_show_people(tmp_path: Path) -> None:
    from sim_server.rendering import View, render
    from sim_server.core.pictures.renderer import PEDESTRIAN_FILL

    world = make_world(tmp_path, "  - name: one\n    agents:\n      - {start: [2, 1]}\n")
    picture = render(world, View.sized(2.0, 1.0, 1.0, 1.0, 64))
    centre = picture[32, 32].astype(int)
    assert np.abs(centre - np.array(PEDESTRIAN_FILL[:3])).max() < 60
    world.close()


def test_the_world_spawns_finds_and_deletes_people_by_name(tmp_path: Path) -> None:
    world = make_world(tmp_path, "  - name: crowd\n", robot=True)
    name = world.spawn_pedestrian("crowd", (-3.0, 2.0), [(-3.0, -2.0)], 1.0)
    assert name == "crowd_0"
    crowd, row = world.crowds.find(name)
    assert crowd.name == "crowd" and crowd.state_of(row)[:2] == pytest.approx((-3.0, 2.0))
    assert world.spawn_pedestrian("crowd", (2.0, 0.0), name="alice") == "alice"
    with pytest.raises(EntityError, match="exists already"):
        world.spawn_pedestrian("crowd", (2.0, 1.0), name="robot")  # the model's name
    with pytest.raises(EntityError, match="exists already"):
        world.spawn_model(tmp_path / "robot.model.yaml", "alice")
    with pytest.raises(RequestError, match="within 0.3 m of a wall"):
        world.spawn_pedestrian("crowd", (-3.0, 0.0), [(0.1, 3.0)])
    with pytest.raises(RequestError, match="must be finite"):
        world.spawn_pedestrian("crowd", (math.nan, 0.0))
    with pytest.raises(RequestError, match="speed must be"):
        world.spawn_pedestrian("crowd", (-3.0, 0.0), speed=-1.0)
    with pytest.raises(EntityError, match="crowd"):
        world.spawn_pedestrian("nobody", (-3.0, 0.0))
    crowd.place(crowd.row_of("alice"), 3.0, 1.0, 0.5, 0.2, 0.0)
    assert crowd.state_of(crowd.row_of("alice")) == pytest.approx((3.0, 1.0, 0.5, 0.2, 0.0), abs=1e-6)
    world.step(50)
    world.crowds.remove("alice")
    assert world.crowds.find("alice") is None
    with pytest.raises(EntityError):
        world.crowds.remove("alice")
    world.close()


def test_resets_of_parts_remove_added_people_and_bring_people_back(tmp_path: Path) -> None:
    world = make_world(tmp_path, WALKERS)
    crowd = world.crowds.named("people")
    entered = crowd.positions().copy()
    added = world.spawn_pedestrian("people", (-3.0, 0.0))
    world.step(300)
    world.delete_spawned_models()
    assert world.crowds.find(added) is None and crowd.people.count == 12
    world.restore_models()
    assert np.allclose(crowd.positions(), entered, atol=1e-5)
    assert np.allclose(crowd.people.rows("velocity"), 0.0)
    world.close()


def test_a_large_crowd_walks_the_same_on_one_thread_or_several(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The office with more people than the social force computes in one run of rows (its pairs
    go in parts, on numba's threads where there are several), the cleaner among them: every
    person's position and the cleaner's pose are the same, to the bit, on one thread."""
    import numba

    from bench.crowd_scenarios import STEP_SIZE, office_world
    from sim_server.core.crowd.social_force import PAIR_THREADS, PARALLEL_MIN_AGENTS

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here (NUMBA_NUM_THREADS): no parallel loop to compare with")
    monkeypatch.setattr(PAIR_THREADS, "parallel", lambda: True)  # whatever was faster lately
    path = office_world(PARALLEL_MIN_AGENTS + 44, tmp_path)

    def walk(threads: int) -> tuple[np.ndarray, list[tuple[float, ...]]]:
        kept = numba.get_num_threads()
        numba.set_num_threads(threads)
        world = World.from_file(path, step_size=STEP_SIZE)
        try:
            world.step(300)
            positions = np.vstack([crowd.positions() for crowd in world.crowds])
            return positions, [(model.pose.x, model.pose.y, model.pose.theta) for model in world.models.values()]
        finally:
            world.close()
            numba.set_num_threads(kept)

    several, several_poses = walk(2)
    one, one_poses = walk(1)
    assert len(several) == PARALLEL_MIN_AGENTS + 44 and several_poses
    assert np.array_equal(several, one) and several_poses == one_poses
