"""The Camera plugin through ROS: sensor_msgs/Image fields and pixels, its frame on /tf_static
(or on /tf when north-up), and its datapack from ``get_camera_datapack``."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image
from tf2_msgs.msg import TFMessage

from sim_msgs.srv import GetCameraDatapack
from test.ros.conftest import Harness

TF_STATIC_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
RED = (255, 0, 0)


def camera_world(folder: Path, **settings) -> Path:
    """A red robot at (1, 2) heading north, namespace ``bot``, with a 6 x 5 m camera on 60 x 50
    pixels (0.1 m a pixel); a green wall along y = 4."""
    camera = {"type": "Camera", "name": "camera", "body": "base", "field": [6, 5], "pixels": [60, 50], "update_rate": 20}
    model = {
        "bodies": [{"name": "base", "color": [1, 0, 0, 1], "footprints": [{"type": "circle", "radius": 0.3, "density": 1}]}],
        "plugins": [{**camera, **settings}],
    }
    (folder / "robot.model.yaml").write_text(yaml.safe_dump(model))
    (folder / "wall.dat").write_text("-5 4 5 4\n")
    (folder / "wall.yaml").write_text("type: line_segments\ndata: wall.dat\nscale: 1\norigin: [0, 0, 0]\n")
    (folder / "world.yaml").write_text(
        "properties: {}\nlayers:\n  - {name: walls, map: wall.yaml, color: [0, 1, 0, 1]}\n"
        f"models:\n  - {{name: bot, model: robot.model.yaml, namespace: bot, pose: [1, 2, {math.pi / 2}]}}\n"
    )
    return folder / "world.yaml"


def image_array(message: Image) -> np.ndarray:
    return np.frombuffer(bytes(message.data), np.uint8).reshape(message.height, message.width, 3)


def test_images_arrive_with_their_fields_and_the_frame_on_tf_static(ros_context, tmp_path: Path) -> None:
    harness = Harness(ros_context, camera_world(tmp_path))
    try:
        images: list[Image] = []
        statics: list[TFMessage] = []
        harness.client.create_subscription(Image, "/bot/image_raw", images.append, 10)
        harness.client.create_subscription(TFMessage, "/tf_static", statics.append, TF_STATIC_QOS)
        harness.run_until(lambda: len(images) >= 2 and bool(statics), "two images and /tf_static")
        image = images[-1]
        assert (image.width, image.height, image.encoding, image.is_bigendian, image.step) == (60, 50, "rgb8", 0, 180)
        assert image.header.frame_id == "bot_camera" and len(image.data) == 60 * 50 * 3
        stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in images]
        assert all((later - earlier) % 50_000_000 == 0 for earlier, later in zip(stamps, stamps[1:])), stamps  # 20 Hz (a queue of 5: some may be dropped)
        pixels = image_array(image)
        assert tuple(pixels[25, 30]) == RED  # the robot at the centre
        # Heading north, the wall 2 m ahead is up: 20 pixels above the centre.
        rows = set(np.nonzero((pixels == (0, 255, 0)).all(axis=2))[0].tolist())
        assert rows <= {4, 5}
        camera = harness.server.world.plugins.find(harness.server.world.model("bot"), "camera")
        assert np.array_equal(pixels, camera.last_image)
        frames = {t.child_frame_id: t for t in statics[-1].transforms}
        tf = frames["bot_camera"]
        assert tf.header.frame_id == "bot_base"
        # Looking down, the picture's right (the body's right, -y) as x: yaw -90 degrees, then roll 180.
        q = tf.transform.rotation
        assert (q.x, q.y, q.z, q.w) == pytest.approx((math.cos(-math.pi / 4), math.sin(-math.pi / 4), 0.0, 0.0))
    finally:
        harness.close()


def test_a_north_up_camera_sends_its_frame_on_tf(ros_context, tmp_path: Path) -> None:
    harness = Harness(ros_context, camera_world(tmp_path, north_up=True, origin=[0.5, 0, 0]))
    try:
        images: list[Image] = []
        sent: list = []
        harness.client.create_subscription(Image, "/bot/image_raw", images.append, 10)
        harness.client.create_subscription(
            TFMessage, "/tf", lambda m: sent.extend(t for t in m.transforms if t.child_frame_id == "bot_camera"), 100
        )
        harness.run_until(lambda: len(sent) >= 2, "the camera's frame on /tf")
        tf = sent[-1]
        assert tf.header.frame_id == "bot_base"
        assert (tf.transform.translation.x, tf.transform.translation.y) == pytest.approx((0.5, 0.0))
        # The body heads north (yaw 90 degrees); the frame keeps the world's axes: yaw -90 on the body.
        q = tf.transform.rotation
        assert (q.x, q.y, q.z, q.w) == pytest.approx((math.cos(-math.pi / 4), math.sin(-math.pi / 4), 0.0, 0.0), abs=1e-6)
    finally:
        harness.close()


def test_the_datapack_service(ros_context, tmp_path: Path) -> None:
    harness = Harness(ros_context, camera_world(tmp_path))
    try:
        harness.run_ticks(3)  # nobody subscribes: no pictures are taken
        answer = harness.call(GetCameraDatapack, "/get_camera_datapack", GetCameraDatapack.Request(name="bot::camera"))
        assert answer.success, answer.message
        pack = answer.datapack
        assert (pack.name, pack.width, pack.height, pack.depth) == ("bot::camera", 60, 50, 3)
        assert pack.header.frame_id == "bot_camera"
        world = harness.server.world
        assert pack.header.stamp.sec * 10**9 + pack.header.stamp.nanosec == world.time.time_ns
        pixels = np.frombuffer(bytes(pack.data), np.uint8).reshape(50, 60, 3)
        assert tuple(pixels[25, 30]) == RED
        for name, fault in [
            ("bot", "model::camera"),
            ("nobody::camera", "does not exist"),
            ("bot::lens", 'no plugin named "lens"'),
            ("", "model::camera"),
        ]:
            answer = harness.call(GetCameraDatapack, "/get_camera_datapack", GetCameraDatapack.Request(name=name))
            assert not answer.success and fault in answer.message, (name, answer.message)
    finally:
        harness.close()
