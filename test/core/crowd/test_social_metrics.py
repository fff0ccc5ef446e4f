"""Social navigation metrics on trajectories whose metrics are worked out by hand: a straight
drive, a zig-zag, a person met head-on, people slowed and swerving near a robot; a batch of many
robots and worlds equals each world computed alone; episodes start afresh."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim_server.core.crowd.social_metrics import EFFECT_RADIUS, Outcome, SocialMetrics

#: The step size of the hand-worked trajectories (s), and the radii of their robot and people (m).
DT = 0.1
ROBOT, PERSON = 0.3, 0.25
NOBODY = (np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0), np.zeros(0, dtype=np.int64))


def step(metrics: SocialMetrics, position, velocity, goal, people=NOBODY, **options) -> None:
    """One update of a single robot (radius ROBOT) with ``people`` (positions, velocities,
    radii, worlds)."""
    metrics.update(np.array([position], dtype=float), np.array([velocity], dtype=float), [ROBOT],
                   np.array([goal], dtype=float), *people, **options)


def one_person(position, velocity, radius: float = PERSON):
    """A single person of world 0."""
    return np.array([position], dtype=float), np.array([velocity], dtype=float), np.array([radius]), np.zeros(1, dtype=np.int64)


def test_a_straight_drive_at_constant_speed_is_efficient_smooth_and_regular() -> None:
    metrics = SocialMetrics(1, DT)
    metrics.reset(0, [0.0, 0.0], [1.0, 0.0])
    for k in range(1, 51):  # 1 m/s along x to the goal at (5, 0), reached on the 50th update
        step(metrics, (0.1 * k, 0.0), (1.0, 0.0), (5.0, 0.0))
    running = metrics.results(0)
    assert running["finished"] == running["success"] == 0.0 and math.isnan(running["time_to_goal"])
    assert math.isnan(running["path_efficiency"])  # defined for successful episodes only
    metrics.finish(0, Outcome.SUCCESS)
    found = metrics.results(0)
    assert found["finished"] == found["success"] == 1.0 and found["collision"] == found["timeout"] == 0.0
    assert found["steps"] == 50 and found["time"] == pytest.approx(5.0) and found["time_to_goal"] == pytest.approx(5.0)
    assert found["path_length"] == pytest.approx(5.0) and found["path_efficiency"] == pytest.approx(1.0)
    for key in ("path_irregularity", "angle_over_length", "acceleration_mean", "acceleration_max", "jerk_mean", "jerk_max"):
        assert found[key] == pytest.approx(0.0, abs=1e-9), key
    step(metrics, (5.5, 0.0), (1.0, 0.0), (5.0, 0.0))  # driving on after the end changes nothing (its end stays)
    assert metrics.results(0) == pytest.approx(found, nan_ok=True, rel=0.0, abs=0.0)


def test_without_people_the_people_metrics_say_nobody() -> None:
    metrics = SocialMetrics(2, DT)
    metrics.reset([0, 1], [[0.0, 0.0], [1.0, 1.0]])
    for k in range(3):
        metrics.update(np.zeros((2, 2)), np.zeros((2, 2)), [ROBOT, ROBOT], np.ones((2, 2)), *NOBODY)
    table = metrics.table()
    assert np.all(table["min_person_gap"] == np.inf) and np.all(table["min_time_to_collision"] == np.inf)
    for zone in ("intimate", "personal"):
        for what in ("steps", "time", "entries"):
            assert np.all(table[f"{zone}_{what}"] == 0.0)
    for key in ("people_speed_near", "people_speed_far", "people_slowdown", "people_deceleration_near",
                "people_deceleration_far", "people_lateral_near", "people_lateral_far"):
        assert np.all(np.isnan(table[key])), key
    assert np.all(table["steps"] == 3) and np.all(table["acceleration_max"] == 0.0)
    assert np.all(np.isnan(table["path_irregularity"]))  # still, and no heading given
    assert table["path_length"][1] == pytest.approx(math.sqrt(2.0))


def test_a_zig_zag_has_its_worked_out_acceleration_jerk_irregularity_and_efficiency() -> None:
    """Velocities (0.8, 0.6) and (0.8, -0.6) in turn (1 m/s, 0.6435 rad either side of x): every
    update changes the velocity by 1.2 m/s (12 m/s²), and the change flips (2.4 m/s, 240 m/s³)."""
    metrics = SocialMetrics(1, DT)
    goal = (1e6, 0.03)  # far along x: the goal's direction is x within 1e-7 rad on either leg
    metrics.reset(0, [0.0, 0.0], [0.8, -0.6])
    position = np.zeros(2)
    for k in range(1, 21):
        velocity = np.array([0.8, 0.6 if k % 2 else -0.6])
        position = position + velocity * DT
        step(metrics, position, velocity, goal)
    metrics.finish(0, Outcome.SUCCESS)
    found = metrics.results(0)
    side = math.atan2(0.6, 0.8)
    assert found["acceleration_mean"] == pytest.approx(12.0) and found["acceleration_max"] == pytest.approx(12.0)
    assert found["jerk_mean"] == pytest.approx(240.0) and found["jerk_max"] == pytest.approx(240.0)
    assert found["path_length"] == pytest.approx(2.0)
    assert found["path_efficiency"] == pytest.approx(0.8)  # 1.6 m along x of 2 m driven
    assert found["path_irregularity"] == pytest.approx(side, abs=1e-6)
    assert found["angle_over_length"] == pytest.approx(20 * 2 * side / 2.0)  # 1.287 rad a leg of 0.1 m


def test_heading_given_counts_turning_in_place() -> None:
    """A still robot turning from facing away from its goal to facing it: off by pi, pi/2, 0."""
    metrics = SocialMetrics(1, DT)
    metrics.reset(0, [0.0, 0.0], headings=[math.pi])
    for heading in (math.pi, math.pi / 2, 0.0):
        step(metrics, (0.0, 0.0), (0.0, 0.0), (1.0, 0.0), robot_headings=[heading])
    found = metrics.results(0)
    assert found["path_irregularity"] == pytest.approx(math.pi / 2)
    assert found["path_length"] == 0.0 and math.isnan(found["angle_over_length"])  # turned pi on the spot


def test_a_person_met_head_on() -> None:
    """Robot (radius 0.3) and person (0.25) 10 m apart close at 2 m/s for 46 updates (gap
    9.45 - 0.2 k, down to 0.25 m); the robot stops and the person walks back for 20 (gap 0.25 +
    0.1 m), then comes again for 15 (gap 2.25 - 0.1 n, down to 0.75 m)."""
    metrics = SocialMetrics(1, DT)
    metrics.reset(0, [0.0, 0.0], [1.0, 0.0])
    ids = {"people_ids": [7]}
    for k in range(1, 47):
        step(metrics, (0.1 * k, 0.0), (1.0, 0.0), (9.0, 0.0), one_person((10.0 - 0.1 * k, 0.0), (-1.0, 0.0)), **ids)
    assert metrics.results(0)["min_time_to_collision"] == pytest.approx(0.125)  # 0.25 m at 2 m/s
    for m in range(1, 21):
        step(metrics, (4.6, 0.0), (0.0, 0.0), (9.0, 0.0), one_person((5.4 + 0.1 * m, 0.0), (1.0, 0.0)), **ids)
    for n in range(1, 16):
        step(metrics, (4.6, 0.0), (0.0, 0.0), (9.0, 0.0), one_person((7.4 - 0.1 * n, 0.0), (-1.0, 0.0)), **ids)
    found = metrics.results(0)
    assert found["min_person_gap"] == pytest.approx(0.25)
    assert found["min_time_to_collision"] == pytest.approx(0.125)  # leaving: never; coming again: 0.75 s at best
    # intimate (< 0.5 m): updates 45, 46 and 1, 2 of the walk back: one stay
    assert (found["intimate_steps"], found["intimate_entries"]) == (4, 1)
    assert found["intimate_time"] == pytest.approx(0.4)
    # personal (< 1.2 m): 42-46, 1-9 of the walk back, 11-15 of the second approach: two stays
    assert (found["personal_steps"], found["personal_entries"]) == (19, 2)
    assert found["personal_time"] == pytest.approx(1.9)


def test_times_to_collision_of_discs() -> None:
    """Three still robots (radius 0.3) in worlds of their own, a person (0.25) walking at them at
    1 m/s from 5 m: 0.33 m to the side (the discs meet when 0.44 m apart along x: at 4.56 s),
    0.6 m to the side (they pass), and one already overlapping (0 s)."""
    metrics = SocialMetrics(3, DT)
    metrics.reset([0, 1, 2], np.zeros((3, 2)))
    people = (np.array([[5.0, 0.33], [5.0, 0.6], [0.5, 0.0]]), np.array([[-1.0, 0.0]] * 3), np.full(3, PERSON),
              np.array([0, 1, 2]))
    metrics.update(np.zeros((3, 2)), np.zeros((3, 2)), np.full(3, ROBOT), np.ones((3, 2)), *people)
    ttc = metrics.table()["min_time_to_collision"]
    assert ttc[0] == pytest.approx(4.56) and ttc[1] == np.inf and ttc[2] == 0.0
    assert metrics.table()["min_person_gap"] == pytest.approx([math.hypot(5.0, 0.33) - 0.55, math.hypot(5.0, 0.6) - 0.55, -0.05])


def test_people_slow_and_swerve_near_the_robot() -> None:
    """A still robot; person A 1.45 m from it (within the effect radius) brakes from 1 to 0.5
    m/s, then turns a right angle; B, 19 m off, turns at 1.5 m/s; C near the robot waits (not
    walking) and counts nowhere."""
    assert 1.45 < EFFECT_RADIUS < 19.0
    metrics, bare = SocialMetrics(1, DT), SocialMetrics(1, DT)
    for each in (metrics, bare):
        each.reset(0, [0.0, 0.0])
    places = np.array([[2.0, 0.0], [20.0, 0.0], [0.0, 1.0]])
    walking = np.array([True, True, False])
    for a, b in (((1.0, 0.0), (1.5, 0.0)), ((0.5, 0.0), (1.5, 0.0)), ((0.0, 0.5), (0.0, 1.5))):
        people = (places, np.array([a, b, (0.0, 0.0)]), np.full(3, PERSON), np.zeros(3, dtype=np.int64))
        step(metrics, (0.0, 0.0), (0.0, 0.0), (1.0, 0.0), people, people_ids=[3, 4, 5], people_walking=walking)
        step(bare, (0.0, 0.0), (0.0, 0.0), (1.0, 0.0), people, people_walking=walking)
    found = metrics.results(0)
    assert found["people_speed_near"] == pytest.approx(2.0 / 3.0) and found["people_speed_far"] == pytest.approx(1.5)
    assert found["people_slowdown"] == pytest.approx(5.0 / 9.0)
    assert found["people_deceleration_near"] == pytest.approx(2.5)  # 0.5 m/s lost in 0.1 s, then none
    assert found["people_deceleration_far"] == pytest.approx(0.0)
    assert found["people_lateral_near"] == pytest.approx(2.5)  # none, then 0.5 m/s across in 0.1 s
    assert found["people_lateral_far"] == pytest.approx(7.5)  # none, then 1.5 m/s across in 0.1 s
    without_ids = bare.results(0)
    assert without_ids["people_slowdown"] == pytest.approx(5.0 / 9.0)
    for key in ("people_deceleration_near", "people_deceleration_far", "people_lateral_near", "people_lateral_far"):
        assert math.isnan(without_ids[key]), key


def test_people_are_followed_by_their_ids_in_any_order() -> None:
    """People 1 and 2 walk at 1 and 2 m/s; next update they come in another order with person 3,
    new, standing: 1 braked to 0.5 m/s (5 m/s²), 2 kept its speed, 3 has no speed before."""
    metrics = SocialMetrics(1, DT)
    metrics.reset(0, [0.0, 0.0])
    places = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    first = (places[:2], np.array([[1.0, 0.0], [2.0, 0.0]]), np.full(2, PERSON), np.zeros(2, dtype=np.int64))
    step(metrics, (0.0, 0.0), (0.0, 0.0), (1.0, 0.0), first, people_ids=[1, 2])
    second = (places[::-1], np.array([[0.0, 0.0], [2.0, 0.0], [0.5, 0.0]]), np.full(3, PERSON), np.zeros(3, dtype=np.int64))
    step(metrics, (0.0, 0.0), (0.0, 0.0), (1.0, 0.0), second, people_ids=[3, 2, 1])
    found = metrics.results(0)
    assert found["people_deceleration_near"] == pytest.approx(2.5)  # (5 + 0) / 2: person 3 is not compared
    assert found["people_speed_near"] == pytest.approx((1.0 + 2.0 + 0.0 + 2.0 + 0.5) / 5)


def test_collisions_count_onsets_of_touching() -> None:
    metrics = SocialMetrics(1, DT)
    metrics.reset(0, [0.0, 0.0])
    for person, other in ((False, True), (True, True), (True, False), (False, False), (True, False)):
        step(metrics, (0.0, 0.0), (0.0, 0.0), (1.0, 0.0), collided_person=[person], collided_other=[other])
    found = metrics.results(0)
    assert (found["person_collisions"], found["other_collisions"]) == (2, 1)
    metrics.finish(0, Outcome.COLLISION)
    assert metrics.results(0)["collision"] == 1.0 and metrics.results(0)["success"] == 0.0


def random_run(seed: int, steps: int = 30):
    """A random scene: 8 robots in 6 worlds (two share world 0, two world 3; world 5 has no
    people), people wandering, arriving and leaving (with ids), some not walking, contacts,
    headings on even steps, episodes ending and starting again some steps later, at random (the
    steps between count nothing). Yields each step's
    (kind, arguments) for every robot: ("reset", robots, positions, velocities),
    ("update", arrays...), ("finish", robots, outcomes)."""
    rng = np.random.default_rng(seed)
    worlds = np.array([0, 0, 1, 2, 3, 3, 4, 5])
    robots = len(worlds)
    people_worlds = np.concatenate([np.full(count, world) for world, count in enumerate((4, 2, 5, 3, 1, 0))])
    ids = np.arange(len(people_worlds))
    position = rng.uniform(-3.0, 3.0, (robots, 2))
    goals = rng.uniform(-3.0, 3.0, (robots, 2))
    people_position = rng.uniform(-3.0, 3.0, (len(ids), 2))
    yield "reset", np.arange(robots), position.copy(), rng.uniform(-1.0, 1.0, (robots, 2))
    running = np.ones(robots, dtype=bool)
    for k in range(steps):
        velocity = rng.uniform(-1.0, 1.0, (robots, 2))
        position = position + velocity * DT
        if k == 12:  # a person of world 1 leaves, one arrives in world 2
            keep = ids != 4
            ids, people_worlds, people_position = ids[keep], people_worlds[keep], people_position[keep]
            ids, people_worlds = np.append(ids, 100), np.append(people_worlds, 2)
            people_position = np.vstack([people_position, [0.0, 0.0]])
        people_velocity = rng.uniform(-1.5, 1.5, (len(ids), 2))
        people_position = people_position + people_velocity * DT
        order = rng.permutation(len(ids))  # the people come in any order
        headings = rng.uniform(-math.pi, math.pi, robots) if k % 2 == 0 else None
        yield ("update", position.copy(), velocity, rng.uniform(0.2, 0.4, robots), goals,
               people_position[order], people_velocity[order], rng.uniform(0.2, 0.3, len(ids)), people_worlds[order],
               rng.random(robots) < 0.2, rng.random(robots) < 0.1, headings, ids[order], rng.random(len(ids)) < 0.8)
        ended = running & (rng.random(robots) < 0.1)
        if ended.any():
            yield "finish", np.flatnonzero(ended), rng.integers(1, 4, ended.sum())
        restart = ~running & (rng.random(robots) < 0.3)  # a few steps later, on average
        if restart.any():
            yield "reset", np.flatnonzero(restart), position[restart], velocity[restart]
        running = (running & ~ended) | restart


def play(metrics: SocialMetrics, run, robots: np.ndarray, world: int | None) -> None:
    """Feed ``run`` to ``metrics``: all of it (world None), or only ``robots`` (those of ``world``)
    and the people of ``world``, renumbered as world 0."""
    local = {int(robot): index for index, robot in enumerate(robots)}
    for kind, *arguments in run:
        if kind != "update":
            chosen, *rest = arguments
            mine = np.isin(chosen, robots)
            if not mine.any():
                continue
            rows = np.array([local[int(robot)] for robot in chosen[mine]])
            if kind == "reset":
                metrics.reset(rows, rest[0][mine], rest[1][mine])
            else:
                metrics.finish(rows, rest[0][mine])
            continue
        (position, velocity, radii, goals, people_position, people_velocity, people_radii, people_worlds, person,
         other, headings, ids, walking) = arguments
        there = slice(None) if world is None else people_worlds == world
        metrics.update(position[robots], velocity[robots], radii[robots], goals[robots], people_position[there],
                       people_velocity[there], people_radii[there],
                       people_worlds[there] if world is None else np.zeros(np.count_nonzero(there), dtype=np.int64),
                       person[robots], other[robots], robot_headings=None if headings is None else headings[robots],
                       people_ids=ids[there], people_walking=walking[there])


@pytest.mark.parametrize("seed", range(3))
def test_a_batch_of_worlds_equals_each_world_alone(seed: int) -> None:
    run = list(random_run(seed))
    worlds = np.array([0, 0, 1, 2, 3, 3, 4, 5])
    batch = SocialMetrics(len(worlds), DT, robot_worlds=worlds)
    play(batch, run, np.arange(len(worlds)), None)
    together = batch.table()
    for world in np.unique(worlds):
        robots = np.flatnonzero(worlds == world)
        alone = SocialMetrics(len(robots), DT, robot_worlds=np.zeros(len(robots), dtype=np.int64))
        play(alone, run, robots, int(world))
        for key, values in alone.table().items():
            np.testing.assert_allclose(together[key][robots], values, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=key)
    # the comparison means something: people came near, braked and swerved, robots touched and finished
    assert together["personal_steps"].sum() > 0 and together["person_collisions"].sum() > 0
    kinds = [kind for kind, *_ in run]
    assert "finish" in kinds and kinds.count("reset") > 1 and np.isfinite(together["min_time_to_collision"]).any()
    for key in ("people_speed_near", "people_deceleration_near", "people_lateral_far", "path_irregularity"):
        assert np.isfinite(together[key]).any(), key
    assert together["min_person_gap"][worlds == 5].tolist() == [np.inf]  # world 5 has nobody


def test_people_of_other_worlds_are_ignored() -> None:
    """A robot in world 0 meets a person; people of world 1 standing on it change nothing."""
    plain, crowded = SocialMetrics(1, DT), SocialMetrics(1, DT)
    for metrics in (plain, crowded):
        metrics.reset(0, [0.0, 0.0], [1.0, 0.0])
    for k in range(1, 11):
        mine = one_person((3.0 - 0.1 * k, 0.0), (-1.0, 0.0))
        step(plain, (0.1 * k, 0.0), (1.0, 0.0), (5.0, 0.0), mine, people_ids=[1])
        others = (np.array([[0.1 * k, 0.0], [0.1 * k + 0.5, 0.0]]), np.array([[-1.0, 0.0], [0.0, 0.0]]), np.full(2, PERSON),
                  np.ones(2, dtype=np.int64))
        both = tuple(np.concatenate([a, b]) for a, b in zip(mine, others))
        step(crowded, (0.1 * k, 0.0), (1.0, 0.0), (5.0, 0.0), both, people_ids=[1, 2, 3])
    assert plain.results(0)["personal_steps"] > 0
    np.testing.assert_array_equal(list(crowded.results(0).values()), list(plain.results(0).values()))


def test_episodes_start_afresh_and_ignore_steps_after_they_end() -> None:
    """Two episodes one after the other give what a fresh instance gives for the second; steps
    between the end of the first and the reset count nothing."""
    run = list(random_run(7, steps=20))
    updates = [arguments for kind, *arguments in run if kind == "update"]
    robots = np.arange(8)
    worlds = np.array([0, 0, 1, 2, 3, 3, 4, 5])
    reused, fresh = SocialMetrics(8, DT, robot_worlds=worlds), SocialMetrics(8, DT, robot_worlds=worlds)
    first = [("reset", robots, updates[0][0], updates[0][1])] + [("update", *a) for a in updates[1:10]]
    first.append(("finish", robots, np.full(8, Outcome.TIMEOUT)))
    play(reused, first, robots, None)
    ended = reused.table()
    play(reused, [("update", *updates[10])], robots, None)  # after the end: nothing changes
    for key, values in reused.table().items():
        np.testing.assert_array_equal(values, ended[key], err_msg=key)
    assert np.all(ended["timeout"] == 1.0) and np.all(ended["steps"] == 9)
    play(fresh, [("update", *updates[10])], robots, None)  # not started: only the people are remembered
    assert np.all(fresh.table()["steps"] == 0)
    second = [("reset", robots, updates[10][0], updates[10][1])] + [("update", *a) for a in updates[11:]]
    play(reused, second, robots, None)
    play(fresh, second, robots, None)
    for key, values in fresh.table().items():
        np.testing.assert_array_equal(reused.table()[key], values, err_msg=key)
    assert np.all(fresh.table()["steps"] == len(updates) - 11) and np.all(fresh.table()["finished"] == 0.0)


def test_reset_and_finish_take_masks_and_per_robot_outcomes() -> None:
    metrics = SocialMetrics(3, DT)
    metrics.reset(np.array([True, False, True]), [[0.0, 0.0], [1.0, 0.0]])
    metrics.update(np.zeros((3, 2)), np.zeros((3, 2)), np.full(3, ROBOT), np.ones((3, 2)), *NOBODY)
    metrics.finish([0, 1, 2], [Outcome.SUCCESS, Outcome.TIMEOUT, Outcome.COLLISION])
    table = metrics.table()
    assert list(table["steps"]) == [1, 0, 1]
    assert list(table["success"]) == [1, 0, 0] and list(table["collision"]) == [0, 0, 1]
    assert list(table["finished"]) == [1, 0, 1]  # robot 1 never ran: finishing it changes nothing
    assert table["path_length"][2] == pytest.approx(1.0)  # from (1, 0) to (0, 0)


@pytest.mark.parametrize(("make", "words"), [
    (lambda: SocialMetrics(0, DT), "robots"),
    (lambda: SocialMetrics(2, 0.0), "step_size"),
    (lambda: SocialMetrics(2, DT, effect_radius=math.inf), "effect_radius"),
    (lambda: SocialMetrics(2, DT, zones={"near zone": 0.5}), "zones"),
    (lambda: SocialMetrics(2, DT, zones={"near": -1.0}), "zones"),
    (lambda: SocialMetrics(2, DT, robot_worlds=[0, -1]), "robot_worlds"),
    (lambda: SocialMetrics(2, DT).reset(2, [0.0, 0.0]), "robot indices"),
    (lambda: SocialMetrics(2, DT).finish(0, Outcome.RUNNING), "outcome"),
    (lambda: SocialMetrics(2, DT).update(np.zeros((3, 2)), np.zeros((2, 2)), np.ones(2), np.zeros((2, 2)), *NOBODY),
     "robot_positions"),
    (lambda: SocialMetrics(1, DT).update(np.zeros((1, 2)), np.zeros((1, 2)), np.ones(1), np.zeros((1, 2)),
                                         np.zeros((1, 2)), np.zeros((1, 2)), np.ones(1), [-1]), "people_worlds"),
    (lambda: SocialMetrics(1, DT).results([0]), "one index"),
])
def test_bad_arguments_are_refused_naming_them(make, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        make()


def test_zones_are_named_and_configurable() -> None:
    metrics = SocialMetrics(1, DT, zones={"discomfort": 0.2})
    assert metrics.keys[-10:-7] == ("discomfort_steps", "discomfort_time", "discomfort_entries")
    metrics.reset(0, [0.0, 0.0])
    step(metrics, (0.0, 0.0), (0.0, 0.0), (1.0, 0.0), one_person((0.6, 0.0), (0.0, 0.0)))  # gap 0.05 m
    assert metrics.results(0)["discomfort_steps"] == 1 and "personal_steps" not in metrics.results(0)
