"""World control and state datapacks over ROS, and seeded runs giving identical messages."""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState, LaserScan
from std_srvs.srv import Empty

from sim_msgs.msg import EntityState, EntityStates, WorldStats
from sim_msgs.srv import GetModelState, SetJointMotor, SetModelState, SpawnModel, StepWorld
from test.conftest import DEMO_WORLD, LOAD_WORLD_TESTS
from test.ros.conftest import Harness

SIMPLE = LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml"


@pytest.fixture
def paused(ros_context):
    harness = Harness(ros_context, SIMPLE, start_paused=True, step_size=0.01, state_pub_rate=50.0)
    yield harness
    harness.close()


def test_step_world_advances_exactly_n_steps(paused: Harness) -> None:
    assert paused.server.paused and paused.server.world.time.time_ns == 0
    clocks: list[int] = []
    paused.client.create_subscription(Clock, "/clock", lambda m: clocks.append(m.clock.sec * 10**9 + m.clock.nanosec), 100)
    response = paused.call(StepWorld, "/step_world", StepWorld.Request(steps=7))
    assert response.success, response.message
    assert paused.server.world.time.time_ns == 7 * 10_000_000 and paused.server.world.time.iterations == 7
    # /clock shows where the world stopped (at most clock_pub_rate messages a wall second, so
    # steps in between may go unpublished; see test_clock_pub_rate_0_publishes_every_step).
    paused.run_until(lambda: clocks and clocks[-1] == 7 * 10_000_000, "the clock of the last step")
    assert clocks == sorted(set(clocks)) and all(t % 10_000_000 == 0 for t in clocks)
    zero = paused.call(StepWorld, "/step_world", StepWorld.Request(steps=0))
    assert not zero.success and "steps must be from 1" in zero.message
    paused.call(Empty, "/resume", Empty.Request())
    running = paused.call(StepWorld, "/step_world", StepWorld.Request(steps=3))
    assert not running.success and "the world is running" in running.message


@pytest.mark.parametrize("rate", [0.0, 1000.0])
def test_clock_pub_rate_0_publishes_every_step(ros_context, rate: float) -> None:
    harness = Harness(ros_context, SIMPLE, start_paused=True, step_size=0.01, clock_pub_rate=rate)
    try:
        clocks: list[int] = []
        harness.client.create_subscription(
            Clock, "/clock", lambda m: clocks.append(m.clock.sec * 10**9 + m.clock.nanosec), 1000
        )
        harness.server._clock_wall = lambda: 0.0  # wall time stands still: only flushes publish
        harness.run_until(lambda: harness.server._clock_listened(), "the /clock subscriber seen")
        assert harness.call(StepWorld, "/step_world", StepWorld.Request(steps=200)).success
        harness.run_until(lambda: clocks and clocks[-1] == 200 * 10_000_000, "the clock of the last step")
        if rate == 0.0:
            assert clocks == [k * 10_000_000 for k in range(1, 201)]
        else:  # the first step's clock, then one at the end of each 50 ms slice of steps
            assert clocks[0] == 10_000_000 and clocks == sorted(set(clocks)) and len(clocks) < 200
    finally:
        harness.close()


def test_reset_world_restores_models_and_time(paused: Harness) -> None:
    world = paused.server.world
    start = world.models["turtlebot2"].pose
    paused.call(StepWorld, "/step_world", StepWorld.Request(steps=20))
    paused.call(SpawnModel, "/spawn_model", SpawnModel.Request(yaml_path="person.model.yaml", name="visitor"))
    state = EntityState(name="turtlebot2", position=[1.0, 1.0, 0.0], orientation=[0.0, 0.0, 0.0, 1.0])
    assert paused.call(SetModelState, "/set_model_state", SetModelState.Request(state=state)).success
    paused.call(Empty, "/reset_world", Empty.Request())
    assert world.time.time_ns == 0 and "visitor" not in world.models
    pose = world.models["turtlebot2"].pose
    assert (pose.x, pose.y, pose.theta) == pytest.approx((start.x, start.y, start.theta), abs=1e-6)


def test_get_and_set_model_state(paused: Harness) -> None:
    state = EntityState(
        name="person1", position=[2.0, 3.0, 0.0], orientation=[0.0, 0.0, math.sin(0.25), math.cos(0.25)],
        linear_velocity=[0.5, 0.0, 0.0], angular_velocity=[0.0, 0.0, 0.2],
    )
    assert paused.call(SetModelState, "/set_model_state", SetModelState.Request(state=state)).success
    got = paused.call(GetModelState, "/get_model_state", GetModelState.Request(name="person1"))
    assert got.success
    assert list(got.state.position) == pytest.approx([2.0, 3.0, 0.0], abs=1e-5)
    assert list(got.state.orientation) == pytest.approx([0.0, 0.0, math.sin(0.25), math.cos(0.25)], abs=1e-5)
    assert list(got.state.linear_velocity) == pytest.approx([0.5, 0.0, 0.0], abs=1e-5)
    assert got.links[0].name == "person1::body"
    bot = paused.call(GetModelState, "/get_model_state", GetModelState.Request(name="turtlebot1"))
    assert list(bot.joints.name) == ["turtlebot1::tail_revolute", "turtlebot1::antenna_revolute"]
    missing = paused.call(GetModelState, "/get_model_state", GetModelState.Request(name="nobody"))
    assert not missing.success and 'model with name "nobody" does not exist' in missing.message
    bad = EntityState(name="person1", position=[float("nan"), 0.0, 0.0], orientation=[0.0, 0.0, 0.0, 1.0])
    refused = paused.call(SetModelState, "/set_model_state", SetModelState.Request(state=bad))
    assert not refused.success and "finite" in refused.message


def test_joint_motor_service(paused: Harness) -> None:
    ok = paused.call(SetJointMotor, "/set_joint_motor",
                     SetJointMotor.Request(model="turtlebot1", joint="tail_revolute", enable=True, speed=1.0, max_torque=5.0))
    assert ok.success, ok.message
    joint = paused.server.world.models["turtlebot1"].joints["tail_revolute"].physics_joint
    assert joint.motorEnabled and joint.motorSpeed == pytest.approx(1.0) and joint.GetMaxMotorTorque() == pytest.approx(5.0)
    weld = paused.call(SetJointMotor, "/set_joint_motor",
                       SetJointMotor.Request(model="turtlebot1", joint="left_wheel_weld", enable=True, speed=1.0, max_torque=1.0))
    assert not weld.success and "not revolute" in weld.message


def test_datapack_topics_and_stats(paused: Harness) -> None:
    models: list[EntityStates] = []
    links: list[EntityStates] = []
    joints: list[JointState] = []
    stats: list[WorldStats] = []
    paused.client.create_subscription(EntityStates, "/sim_server/model_states", models.append, 10)
    paused.client.create_subscription(EntityStates, "/sim_server/link_states", links.append, 10)
    paused.client.create_subscription(JointState, "/sim_server/joint_states", joints.append, 10)
    paused.client.create_subscription(WorldStats, "/sim_server/stats", stats.append, 10)
    paused.call(Empty, "/resume", Empty.Request())
    paused.run_until(lambda: models and links and joints and len(stats) >= 2, "datapacks and stats")
    world = paused.server.world
    names = [state.name for state in models[-1].states]
    assert names == list(world.models)
    assert len(links[-1].states) == sum(len(m.bodies) for m in world.models.values())
    assert "turtlebot1::tail_revolute" in joints[-1].name
    assert stats[-1].iterations > 0 and stats[-1].sim_time > 0.0 and not stats[-1].paused


def recorded_run(context, seed: int) -> list:
    """1000 stepped steps of the office world while driving: every scan and odometry message.

    Messages are compared field by field (every float exactly): their CDR serialization is not
    byte-comparable, as the middleware leaves alignment padding uninitialised.
    """
    harness = Harness(context, DEMO_WORLD, start_paused=True, seed=seed)
    try:
        reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        received: list[tuple[str, object]] = []
        harness.client.create_subscription(LaserScan, "/scan", lambda m: received.append(("scan", m)), reliable)
        harness.client.create_subscription(Odometry, "/odometry/filtered", lambda m: received.append(("odom", m)), reliable)
        command = harness.client.create_publisher(Twist, "/cmd_vel", 1)
        harness.run_until(lambda: command.get_subscription_count() > 0, "cmd_vel subscriber")
        cleaner = harness.server.world.models["cleaner1"]
        laser = harness.server.world.plugins.find(cleaner, "laser_front")
        drive = harness.server.world.plugins.find(cleaner, "cleaner_drive")
        harness.run_until(  # the server sees both subscriptions before the first step, as a client waits for
            lambda: laser._publisher.get_subscription_count() > 0
            and drive.odometry.publishers[1].get_subscription_count() > 0, "scan and odometry matched"
        )
        twist = Twist()
        twist.linear.x, twist.angular.z = 0.6, 0.3
        command.publish(twist)
        harness.run_until(lambda: harness.server.world.plugins.find(
            harness.server.world.models["cleaner1"], "cleaner_drive").command.linear == 0.6, "the command")
        for _ in range(100):
            assert harness.call(StepWorld, "/step_world", StepWorld.Request(steps=10)).success
        expected = 1000 + 1000 // 5  # odometry every step, scans at 40 Hz (every 5 steps)
        harness.run_until(lambda: len(received) >= expected, "every message")
        return [message for _, message in sorted(received, key=lambda item: item[0])]
    finally:
        harness.close()


def same(a, b) -> bool:
    """Field-by-field equality, with NaN ranges (misses) equal to each other."""
    if isinstance(a, LaserScan):
        others = [field for field in LaserScan.get_fields_and_field_types() if field != "ranges"]
        return np.array_equal(np.array(a.ranges), np.array(b.ranges), equal_nan=True) and all(
            np.array_equal(np.asarray(getattr(a, f)), np.asarray(getattr(b, f))) if f == "intensities"
            else getattr(a, f) == getattr(b, f)
            for f in others
        )
    return a == b


def test_two_seeded_runs_publish_identical_messages(ros_context) -> None:
    first = recorded_run(ros_context, 42)
    second = recorded_run(ros_context, 42)
    assert len(first) == len(second) == 1200
    assert all(same(a, b) for a, b in zip(first, second))
    assert len({tuple(m.ranges) for m in first if isinstance(m, LaserScan)}) > 100  # the robot moved
