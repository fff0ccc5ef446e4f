"""What the robot can know of people (sim_server.learning.sight, NavigationTask's people_range,
people_line_of_sight and people_noise): walls hide people, the range bounds who is seen, the
noise is seeded and of the asked size, bad values are refused in one line."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from sim_server.core import Pose2D
from sim_server.learning import NavigationEnv, NavigationVectorEnv
from sim_server.learning.fleet import PERSON_VALUES, STATE_VALUES
from sim_server.learning.sight import PeopleSight
from sim_server.learning.task import CROWD_NAVIGATION, PEOPLE_WORLD, NavigationTask
from test.learning.test_vector_env import DRIFT

#: The robot west of the room's 1 x 1 m box (-2.5..-1.5, -2.5..-1.5), facing east.
ROBOT = (-3.5, -2.0)
#: A person east of the box (hidden from the robot) and one north of the robot (in sight).
BEHIND_THE_BOX = (-0.5, -2.0)
IN_SIGHT = (-3.5, 0.5)


def observed(**options) -> tuple[NavigationEnv, np.ndarray]:
    """An environment of the learning room with only the two people above, the robot at
    :data:`ROBOT`; its observed people (K, PERSON_VALUES)."""
    env = NavigationEnv(PEOPLE_WORLD, replace(CROWD_NAVIGATION, **options))
    env.reset(seed=2)
    world = env.world
    for crowd in world.crowds:
        for name in crowd.names():
            world.crowds.remove(name)
    for place in (BEHIND_THE_BOX, IN_SIGHT):
        world.spawn_pedestrian("people", place)
    world.set_model_state("robot", Pose2D(*ROBOT, 0.0), 0.0, 0.0, 0.0)
    start = len(env.fleet.beam_index) + STATE_VALUES
    return env, env.fleet.observations()[0, start:].reshape(-1, PERSON_VALUES)


def seen_places(people: np.ndarray, env: NavigationEnv) -> list[tuple[float, float]]:
    """The observed people's places (m, the world's frame; the robot faces east)."""
    scale = env.fleet.laser_range
    return [(ROBOT[0] + x * scale, ROBOT[1] + y * scale) for present, x, y, _, _ in people if present == 1.0]


def test_by_default_every_person_is_seen() -> None:
    env, people = observed()
    try:
        assert seen_places(people, env) == [pytest.approx(IN_SIGHT, abs=1e-5), pytest.approx(BEHIND_THE_BOX, abs=1e-5)]
    finally:
        env.close()


def test_a_wall_hides_a_person_behind_it() -> None:
    env, people = observed(people_line_of_sight=True)
    try:
        assert seen_places(people, env) == [pytest.approx(IN_SIGHT, abs=1e-5)]
        assert (people[1:] == 0.0).all()
    finally:
        env.close()


@pytest.mark.parametrize("reach, expected", [(2.4, []), (2.6, [IN_SIGHT]), (3.1, [IN_SIGHT, BEHIND_THE_BOX])])
def test_the_sensing_range_bounds_who_is_seen(reach: float, expected: list) -> None:
    """Centres 2.5 m (north) and 3 m (east) from the robot's."""
    env, people = observed(people_range=reach)
    try:
        assert seen_places(people, env) == [pytest.approx(place, abs=1e-5) for place in expected]
    finally:
        env.close()


def noisy_errors(seed: int, noise: float, actions: int) -> np.ndarray:
    """The observed minus the true places of the two people (m), for ``actions`` actions."""
    env, _ = observed(people_noise=noise)
    env.fleet._people._sight.start_episode(0, np.random.default_rng(seed))
    errors = []
    try:
        for _ in range(actions):
            env.fleet.act(np.zeros((1, 2)))
            start = len(env.fleet.beam_index) + STATE_VALUES
            people = env.fleet.observations()[0, start:].reshape(-1, PERSON_VALUES)
            pose = env.world.models["robot"].first_body.physics_body
            heading = pose.angle
            exact = env.world.crowds[0].local_positions() - np.array(pose.position)
            ahead = exact @ np.array([[math.cos(heading), -math.sin(heading)], [math.sin(heading), math.cos(heading)]])
            seen = people[:2, 1:3] * env.fleet.laser_range
            order = np.argsort(np.hypot(*ahead.T))
            errors.append(seen - ahead[order])
    finally:
        env.close()
    return np.array(errors)


def test_the_noise_is_seeded_and_of_the_asked_size() -> None:
    errors = noisy_errors(5, 0.1, 100)
    assert errors.std() == pytest.approx(0.1, rel=0.2) and abs(errors.mean()) < 0.03
    np.testing.assert_array_equal(errors, noisy_errors(5, 0.1, 100))
    assert not np.allclose(errors, noisy_errors(6, 0.1, 100))


def test_the_noise_is_a_function_of_key_action_and_slot() -> None:
    sight = PeopleSight(np.zeros((0, 4)), 3, 0.0, False, 1.0)
    sight.keys[:] = [7, 7, 8]
    first = sight.position_noise(4)
    assert np.array_equal(first[0], first[1]) and not np.allclose(first[0], first[2])
    assert np.array_equal(first, sight.position_noise(4))  # asked twice: the same
    sight.after_action()
    assert not np.allclose(first, sight.position_noise(4))


@pytest.mark.parametrize("options, message", [
    ({"people_range": -1.0}, "NavigationTask.people_range must be from 0 to 100000, got -1.0"),
    ({"people_range": math.inf}, "NavigationTask.people_range must be finite numbers, got inf"),
    ({"people_noise": -0.1}, "NavigationTask.people_noise must be from 0 to 100000, got -0.1"),
    ({"people_noise": "0.1"}, "NavigationTask.people_noise must be finite numbers, got '0.1'"),
    ({"people_line_of_sight": 1}, "NavigationTask.people_line_of_sight must be True or False, got 1"),
    ({"people_line_of_sight": None}, "NavigationTask.people_line_of_sight must be True or False, got None"),
    ({"max_speed": -1.0, "max_lateral": 1.0}, "NavigationTask.max_speed must be from 0 to 10000, got -1.0"),
    ({"max_speed": 1.0}, "NavigationTask.max_speed caps forward and sideways speed together: it needs max_lateral > 0"),
])
def test_bad_values_are_refused_in_one_line(options: dict, message: str) -> None:
    with pytest.raises(ValueError) as error:
        NavigationTask(**options)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_generated_bad_values_are_refused_in_one_line() -> None:
    rng = np.random.default_rng(8)
    values = [-1e-9, -5.0, 1e6, math.nan, -math.inf, math.inf, "1", None, [], (1.0,), object(), b"0"]
    for _ in range(40):
        key = str(rng.choice(["people_range", "people_noise", "people_line_of_sight", "max_speed"]))
        value = values[int(rng.integers(len(values)))]
        with pytest.raises(ValueError) as error:
            NavigationTask(**{key: value}, max_lateral=1.0)
        assert f"NavigationTask.{key}" in str(error.value) and "\n" not in str(error.value)
        assert len(str(error.value)) < 300


def test_a_copy_of_a_vector_environment_sees_what_a_lone_one_sees() -> None:
    """The same seed, the same noise and the same people hidden or out of range, whichever copy
    (up to float32 rounding: the copies lie elsewhere). Compared at the episode's start: later
    the people of a copy walk apart from a lone world's (a difference of the core's crowds, not
    of what the robot senses)."""
    task = replace(CROWD_NAVIGATION, people_noise=0.2, people_line_of_sight=True, people_range=4.0)
    envs = NavigationVectorEnv(3, PEOPLE_WORLD, task)
    env = NavigationEnv(PEOPLE_WORLD, task)
    try:
        observations, _ = envs.reset(seed=3)
        for copy in range(3):
            alone, _ = env.reset(seed=3 + copy)
            np.testing.assert_allclose(observations[copy], alone, atol=DRIFT)
        assert not np.allclose(observations[0], observations[1])
    finally:
        envs.close()
        env.close()
