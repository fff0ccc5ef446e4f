"""The vector environment: Gymnasium's vector API over copies of a world in one physics world.

Each copy must behave as a single environment with the same seed and actions would (up to the
float32 rounding of positions further from the origin), episodes end and restart by next-step
autoreset, and bad input is refused with a message.
"""

from __future__ import annotations

import gc
import math
from pathlib import Path

import gymnasium
import numpy as np
import pytest

from sim_server.learning import NAVIGATION_ID, NavigationEnv, NavigationTask, NavigationVectorEnv
from test.conftest import REPO_ROOT
from test.learning.test_navigation_env import empty_room, steer  # noqa: F401 - a fixture

#: How far a copy's observations may drift from a lone world's over the steps compared (float32
#: positions tens of metres from the origin round differently).
DRIFT = 2e-3


@pytest.fixture
def envs() -> NavigationVectorEnv:
    vector = NavigationVectorEnv(6)
    yield vector
    vector.close()


def test_spaces_and_shapes(envs: NavigationVectorEnv) -> None:
    single = NavigationEnv()
    try:
        assert envs.single_observation_space == single.observation_space
        assert envs.single_action_space == single.action_space
    finally:
        single.close()
    assert envs.observation_space.shape == (6, 40) and envs.action_space.shape == (6, 2)
    observations, infos = envs.reset(seed=1)
    assert observations.dtype == np.float32 and envs.observation_space.contains(observations)
    assert infos["distance"].shape == (6,) and infos["_distance"].all()
    envs.action_space.seed(1)
    for _ in range(20):
        observations, rewards, terminated, truncated, infos = envs.step(envs.action_space.sample())
        assert envs.observation_space.contains(observations)
        assert rewards.shape == terminated.shape == truncated.shape == (6,)
        assert rewards.dtype == np.float64 and terminated.dtype == truncated.dtype == np.bool_
        assert {"distance", "reached", "collided"} <= set(infos)


def test_made_by_make_vec_with_the_registered_time_limit() -> None:
    envs = gymnasium.make_vec(f"sim_server.learning:{NAVIGATION_ID}", num_envs=3)
    try:
        assert isinstance(envs, NavigationVectorEnv) and envs.num_envs == 3 and envs.task.max_episode_steps == 500
        assert envs.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    finally:
        envs.close()


@pytest.mark.parametrize("seed", [0, 11])
def test_each_copy_is_the_single_environment_with_its_seed(seed: int) -> None:
    """Copy i, seeded ``seed + i``, gives what NavigationEnv seeded so gives, for the same actions
    (a controller heading for the goal, so robots cross their rooms): the lasers see only their own
    copy, goals and speeds are in the copy's frame."""
    count = 5
    vector = NavigationVectorEnv(count)
    singles = [NavigationEnv() for _ in range(count)]
    try:
        observations, infos = vector.reset(seed=seed)
        for index, single in enumerate(singles):
            alone, info = single.reset(seed=seed + index)
            np.testing.assert_allclose(observations[index], alone, atol=DRIFT)
            assert infos["distance"][index] == pytest.approx(info["distance"], abs=DRIFT)
        running = np.ones(count, dtype=bool)
        for _ in range(40):
            actions = np.stack([steer(observation) for observation in observations])
            observations, rewards, terminated, _, _ = vector.step(actions)
            for index in np.flatnonzero(running):
                alone, reward, ended, _, _ = singles[index].step(actions[index])
                np.testing.assert_allclose(observations[index], alone, atol=DRIFT)
                assert rewards[index] == pytest.approx(reward, abs=DRIFT) and terminated[index] == ended
            running &= ~terminated
        assert not running.all()  # some episodes ended (by a touch or at the goal) on the way
    finally:
        vector.close()
        for single in singles:
            single.close()


def test_the_same_seed_and_actions_give_the_same_steps() -> None:
    runs = []
    for _ in range(2):
        vector = NavigationVectorEnv(4)
        try:
            observations, _ = vector.reset(seed=5)
            rng = np.random.default_rng(5)
            trace = [observations]
            for _ in range(30):
                observations, rewards, terminated, truncated, _ = vector.step(rng.uniform(-1, 1, (4, 2)))
                trace += [observations, rewards, terminated, truncated]
            runs.append(trace)
        finally:
            vector.close()
    for first, second in zip(*runs):
        np.testing.assert_array_equal(first, second)


def test_episodes_end_and_restart_at_the_next_step(empty_room: Path) -> None:  # noqa: F811
    """Driving to the goals ends episodes (reached, rewarded); the next step restarts them:
    reward 0, not ended, a new goal; the step counter restarts with them."""
    task = NavigationTask(max_episode_steps=400)
    vector = NavigationVectorEnv(4, world_path=empty_room, task=task)
    try:
        observations, infos = vector.reset(seed=2)
        reached_once = np.zeros(4, dtype=bool)
        for _ in range(300):
            actions = np.stack([steer(observation) for observation in observations])
            before = vector.fleet.goals.copy()
            ended_before = vector._ended.copy()
            observations, rewards, terminated, truncated, infos = vector.step(actions)
            for index in np.flatnonzero(ended_before):
                assert rewards[index] == 0.0 and not terminated[index] and not truncated[index]
                assert not infos["reached"][index] and vector._episode_steps[index] == 0
                assert not np.array_equal(vector.fleet.goals[index], before[index])
            for index in np.flatnonzero(terminated):
                assert infos["reached"][index] and rewards[index] > task.goal_reward / 2
            reached_once |= terminated
            if reached_once.all():
                break
        assert reached_once.all()
    finally:
        vector.close()


def test_episodes_are_cut_at_the_step_limit() -> None:
    vector = NavigationVectorEnv(3, task=NavigationTask(max_episode_steps=4))
    try:
        vector.reset(seed=0)
        still = np.zeros((3, 2))
        for step in range(1, 10):
            _, rewards, terminated, truncated, _ = vector.step(still)
            assert not terminated.any()
            assert truncated.all() == (step % 5 == 4), step
            if step % 5 == 0:
                assert (rewards == 0.0).all()
    finally:
        vector.close()


def test_a_reset_mask_resets_only_its_environments(envs: NavigationVectorEnv) -> None:
    envs.reset(seed=3)
    goals = envs.fleet.goals.copy()
    mask = np.array([True, False, True, False, False, False])
    envs.reset(options={"reset_mask": mask})
    changed = (envs.fleet.goals != goals).any(axis=1)
    assert changed.tolist() == mask.tolist()


def test_a_picture_shows_every_copy() -> None:
    vector = NavigationVectorEnv(4, render_mode="rgb_array", pixels=200)
    try:
        vector.reset(seed=0)
        picture = vector.render()
        assert picture.dtype == np.uint8 and picture.ndim == 3 and max(picture.shape[:2]) == 200
        # The goal's yellow in each quarter of the 2 x 2 grid of rooms.
        yellow = (picture[:, :, 0] > 200) & (picture[:, :, 1] > 180) & (picture[:, :, 2] < 80)
        half_h, half_w = picture.shape[0] // 2, picture.shape[1] // 2
        quarters = [yellow[:half_h, :half_w], yellow[:half_h, half_w:], yellow[half_h:, :half_w], yellow[half_h:, half_w:]]
        assert all(quarter.any() for quarter in quarters)
    finally:
        vector.close()


@pytest.mark.parametrize(
    "actions, fault",
    [
        (np.zeros((5, 2)), "6 pair"),
        (np.zeros((6, 3)), "6 pair"),
        ([[0.0, 0.0]] * 5 + [["a", 0.0]], "6 pair"),
        (np.full((6, 2), math.nan), "finite"),
        (np.array([[0.0, math.inf]] * 6), "finite"),
        (None, "6 pair"),
    ],
)
def test_bad_actions_are_refused(envs: NavigationVectorEnv, actions, fault: str) -> None:
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=fault):
        envs.step(actions)
    envs.step(np.zeros((6, 2)))  # and it goes on


@pytest.mark.parametrize("count", [0, -1, 4097, 2.5, True, "8"])
def test_bad_counts_are_refused(count) -> None:
    with pytest.raises(ValueError, match="num_envs must be a whole number"):
        NavigationVectorEnv(count)


def test_bad_seeds_and_masks_are_refused(envs: NavigationVectorEnv) -> None:
    with pytest.raises(ValueError, match="3 seeds for 6"):
        envs.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match="reset_mask"):
        envs.reset(options={"reset_mask": [1, 0, 1, 0, 0, 0]})
    envs.reset(seed=[1, None, 3, 4, 5, 6])


@pytest.mark.parametrize(
    "actions",
    [np.zeros((2, 6)), np.zeros(12), np.zeros((6, 1)), np.zeros((6, 2, 1)), np.zeros((3, 2)),
     np.full((6, 2), "0.5"), np.zeros((6, 2), dtype=complex), np.zeros((6, 2), dtype=bool),
     np.zeros((6, 2), dtype="datetime64[s]"), np.array([[0.0, 0.0]] * 6, dtype=object)],
)
def test_actions_are_never_reshaped_or_converted(envs: NavigationVectorEnv, actions) -> None:
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must be 6 pair\(s\) of real numbers"):
        envs.step(actions)


@pytest.mark.parametrize("seed", [1.5, -1, True, b"abc", {1, 2}, "3", [1, 2, 3, 4, 5, -1], [0.5] * 6])
def test_bad_seeds_are_refused_before_any_is_used(envs: NavigationVectorEnv, seed) -> None:
    envs.reset(seed=10)
    goals = envs.fleet.goals.copy()
    with pytest.raises(ValueError, match="seed"):
        envs.reset(seed=seed)
    envs.reset(seed=10)
    np.testing.assert_array_equal(envs.fleet.goals, goals)  # the refused call changed no generator


@pytest.mark.parametrize("options", [5, "reset_mask", ["reset_mask"]])
def test_options_must_be_a_dict(envs: NavigationVectorEnv, options) -> None:
    with pytest.raises(ValueError, match="options must be None or a dict"):
        envs.reset(options=options)


def test_steps_before_a_reset_and_calls_after_close_are_refused() -> None:
    vector = NavigationVectorEnv(2, render_mode="rgb_array", pixels=64)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        vector.step(np.zeros((2, 2)))
    vector.reset(seed=0)
    vector.close()
    vector.close()  # twice is harmless
    for call in (lambda: vector.step(np.zeros((2, 2))), lambda: vector.reset(seed=0), vector.render):
        with pytest.raises(RuntimeError, match="the environment is closed"):
            call()


@pytest.mark.parametrize(
    "options, fault",
    [
        ({"render_mode": "rgb_array", "pixels": "a"}, "pixels must be a whole number"),
        ({"render_mode": "rgb_array", "pixels": math.nan}, "pixels must be a whole number"),
        ({"render_mode": "rgb_array", "pixels": 10**6}, "pixels must be a whole number"),
        ({"render_mode": "human"}, "render_mode must be"),
        ({"step_size": 0}, "step_size must be"),
        ({"step_size": math.nan}, "step_size must be"),
        ({"step_size": "0.01"}, "step_size must be"),
        ({"step_size": 1e-6}, "at most 10000 steps"),
        ({"task": 5}, "task must be a NavigationTask"),
    ],
)
def test_bad_arguments_are_refused_and_leave_nothing(options: dict, fault: str) -> None:
    frozen = gc.get_freeze_count()
    with pytest.raises(ValueError, match=fault):
        NavigationVectorEnv(3, **options)
    assert gc.get_freeze_count() == frozen  # no world was left loaded


def test_a_laser_too_long_for_copies_is_said_so(tmp_path: Path) -> None:
    robot = (REPO_ROOT / "config" / "worlds" / "learning" / "robot.model.yaml").read_text().replace("range: 8", "range: 9999")
    (tmp_path / "robot.model.yaml").write_text(robot)
    (tmp_path / "room.yaml").write_text("type: line_segments\ndata: room.dat\nscale: 1\norigin: [0, 0, 0]\n")
    (tmp_path / "room.dat").write_text("-5 -5 5 -5\n5 -5 5 5\n5 5 -5 5\n-5 5 -5 -5\n")
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nlayers:\n  - {name: walls, map: room.yaml}\nmodels:\n  - {name: robot, model: robot.model.yaml, pose: [0, 0, 0]}\n"
    )
    with pytest.raises(ValueError, match=r"a laser's range \(9999 m\) is too long to lay copies"):
        NavigationVectorEnv(2, world_path=tmp_path / "world.yaml")
    NavigationVectorEnv(1, world_path=tmp_path / "world.yaml").close()  # one copy needs no room


@pytest.mark.parametrize("count", [0, -1, 4097, 1.0, True])
def test_a_fleet_s_count_is_checked(count) -> None:
    from sim_server.learning.fleet import NavigationFleet
    from sim_server.learning.task import DEFAULT_WORLD

    with pytest.raises(ValueError, match="count must be a whole number"):
        NavigationFleet(DEFAULT_WORLD, NavigationTask(), count)


def test_observed_ranges_are_the_full_scans_beams(envs: NavigationVectorEnv) -> None:
    """Only the observed beams are cast; each equals the beam of the whole scan it stands for."""
    from sim_server.core.sensing.laser_scanner import scan_all

    envs.reset(seed=3)
    envs.action_space.seed(3)
    fleet = envs.fleet
    beams = len(fleet.beam_index)
    assert beams < fleet.lasers[0].scanner.beam_count
    for _ in range(5):
        observations = envs.step(envs.action_space.sample())[0]
        full = scan_all([laser.scanner for laser in fleet.lasers], fleet.lasers[0].scene, fleet.world.time.iterations)
        expected = np.stack([ranges for ranges, _ in full])[:, fleet.beam_index].astype(np.float64)
        expected = np.where(np.isfinite(expected), expected / fleet.laser_range, 1.0)
        assert observations[:, :beams] == pytest.approx(np.clip(expected, 0.0, 1.0).astype(np.float32), abs=0.0)
        assert (expected < 1.0).any()  # walls within range: not all misses
