"""The learning environments with the other drives: an OmniDrive robot learns with three-valued
actions (linear, angular, lateral) and observes its sideways speed; an AckermannDrive car with
the usual pair (its angular command is the steering angle); a robot that cannot slide refuses a
task with sideways actions, in one line; a drive of another package, whose command is its own, is
driven through the TwistCommand protocol."""

from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from sim_server.learning import NavigationEnv, NavigationTask, NavigationVectorEnv
from sim_server.learning.parallel_env import NavigationParallelEnv
from sim_server.core.plugins import MODEL_PLUGIN_GROUP
from test.conftest import REPO_ROOT, install_throwaway_plugins

LEARNING = REPO_ROOT / "config" / "worlds" / "learning"
LASER = """  - type: Laser
    name: laser
    body: base
    range: 8
    update_rate: 0
    angle: {min: -3.14159265, max: 3.12413936, increment: 0.01745329}
"""
ROBOTS = {
    "omni": "  - {type: OmniDrive, name: drive, body: base, pub_rate: 10}\n",
    "car": "  - {type: AckermannDrive, name: drive, body: base, wheelbase: 0.3, max_steer_angle: 0.6}\n",
    "glide": "  - {type: Glide, name: drive, body: base}\n",  # test_glide_plugins' (installed by its test)
}


def _world(folder: Path, kind: str, robots: int = 1) -> Path:
    for name in ("room.yaml", "room.dat"):
        shutil.copy(LEARNING / name, folder / name)
    (folder / "robot.model.yaml").write_text(
        "bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.2, density: 10}]\nplugins:\n"
        + ROBOTS[kind] + LASER)
    models = "".join(f"  - {{name: robot{i or ''}, model: robot.model.yaml, pose: [{-4 + 2 * i}, -4, 0]}}\n"
                     for i in range(robots))
    (folder / "world.yaml").write_text(f"properties: {{}}\nlayers:\n  - {{name: walls, map: room.yaml}}\nmodels:\n{models}")
    return folder / "world.yaml"


def test_an_omni_robot_learns_with_sideways_actions_and_observes_its_sideways_speed(tmp_path: Path) -> None:
    task = NavigationTask(max_lateral=0.5)
    env = NavigationEnv(_world(tmp_path, "omni"), task=task)
    plain = NavigationEnv()
    try:
        assert env.action_space.shape == (3,)
        assert env.observation_space.shape[0] == plain.observation_space.shape[0] + 1
        observation, _ = env.reset(seed=4)
        robot = env.fleet.robots[0]
        start = robot.pose
        observation, *_ = env.step(np.array([0.0, 0.0, 1.0], dtype=np.float32))  # 0.5 m/s to its left for 0.1 s
        moved = robot.pose
        cos, sin = math.cos(start.theta), math.sin(start.theta)
        dx, dy = moved.x - start.x, moved.y - start.y
        assert -sin * dx + cos * dy == pytest.approx(0.05, rel=0.05) and abs(cos * dx + sin * dy) < 1e-3
        assert observation[-1] == pytest.approx(1.0, abs=1e-3)  # its sideways speed, over max_lateral
        with pytest.raises(ValueError, match=r"triple\(s\) of real numbers") as raised:
            env.step(np.zeros(2))
        assert "\n" not in str(raised.value)
    finally:
        env.close()
        plain.close()


def test_a_vector_of_omni_robots_and_a_parallel_env_take_three_valued_actions(tmp_path: Path) -> None:
    task = NavigationTask(max_lateral=0.4)
    envs = NavigationVectorEnv(4, _world(tmp_path, "omni"), task=task)
    try:
        assert envs.single_action_space.shape == (3,) and envs.action_space.shape == (4, 3)
        envs.reset(seed=1)
        observations, rewards, *_ = envs.step(np.tile([0.5, 0.0, -1.0], (4, 1)))
        assert observations.shape == (4, envs.single_observation_space.shape[0]) and np.isfinite(rewards).all()
        assert observations[:, -1] == pytest.approx(-1.0, abs=1e-3)
    finally:
        envs.close()
    (tmp_path / "two").mkdir()
    parallel = NavigationParallelEnv(_world(tmp_path / "two", "omni", robots=2), task=task, robots=["robot", "robot1"])
    try:
        parallel.reset(seed=2)
        assert parallel.action_space("robot").shape == (3,)
        observations, *_ = parallel.step({"robot": np.array([0.0, 0.0, 1.0]), "robot1": np.array([0.0, 0.0, -1.0])})
        assert observations["robot"][-1] == pytest.approx(1.0, abs=1e-3)
        assert observations["robot1"][-1] == pytest.approx(-1.0, abs=1e-3)
    finally:
        parallel.close()


def test_a_car_learns_with_the_usual_pair_its_angular_value_the_steering_angle(tmp_path: Path) -> None:
    env = NavigationEnv(_world(tmp_path, "car"), task=NavigationTask(max_angular=0.6))
    try:
        assert env.action_space.shape == (2,)
        env.reset(seed=3)
        car = env.fleet.drives[0]
        for _ in range(5):
            env.step(np.array([1.0, 0.5], dtype=np.float32))
        assert car.steering_angle == pytest.approx(0.3) and car.speed == pytest.approx(1.0)
        assert car.body.angularVelocity == pytest.approx(math.tan(0.3) / 0.3, rel=1e-4)
    finally:
        env.close()


def test_a_robot_that_cannot_slide_refuses_sideways_actions_in_one_line() -> None:
    with pytest.raises(ValueError) as raised:
        NavigationEnv(task=NavigationTask(max_lateral=0.5))
    message = str(raised.value)
    assert "cannot move sideways" in message and "DiffDrive" in message and "\n" not in message
    for bad in (-0.1, math.nan, 2e4):
        with pytest.raises(ValueError, match="max_lateral"):
            NavigationTask(max_lateral=bad)


GLIDE_MODULE = '''
"""A drive of another package: it sets its body's velocities from a command of its own make."""

import math

from sim_server.core.plugins import ModelPlugin


class GlideCommand:
    """A TwistCommand that is not sim_plugins' VelocityCommand."""

    def __init__(self, topic):
        self.topic, self.linear, self.angular, self.lateral, self.uses_lateral = topic, 0.0, 0.0, 0.0, False


class Glide(ModelPlugin):
    def on_initialize(self, config):
        self.body = self.model.bodies[config.get_name("body")].physics_body
        self.command = GlideCommand(self.context.topic("cmd_vel"))

    def before_physics_step(self, time):
        heading = self.body.angle
        self.body.linearVelocity = (self.command.linear * math.cos(heading), self.command.linear * math.sin(heading))
        self.body.angularVelocity = self.command.angular
'''


def test_a_drive_of_another_package_is_driven_by_its_command(tmp_path: Path, monkeypatch) -> None:
    install_throwaway_plugins(tmp_path / "site", monkeypatch, "test_glide_plugins", GLIDE_MODULE,
                              {MODEL_PLUGIN_GROUP: {"Glide": "Glide"}})
    env = NavigationEnv(_world(tmp_path, "glide"), task=NavigationTask())
    try:
        env.reset(seed=3)
        drive = env.fleet.drives[0]
        assert type(drive.command).__name__ == "GlideCommand"
        start = env.fleet.robots[0].pose
        env.step(np.array([1.0, 0.5]))
        task = env.fleet.task
        assert (drive.command.linear, drive.command.angular) == (task.max_linear, 0.5 * task.max_angular)
        moved = env.fleet.robots[0].pose
        assert math.hypot(moved.x - start.x, moved.y - start.y) > 0.01
        with pytest.raises(ValueError, match="angular command must be"):
            env.fleet.act(np.array([[0.0, 1e9]]))  # all or none: nothing set
        assert (drive.command.linear, drive.command.angular) == (task.max_linear, 0.5 * task.max_angular)
    finally:
        env.close()
        sys.modules.pop("test_glide_plugins", None)
