"""Capabilities: a sensor plugin of a package sim_server has never heard of is found by what it
offers (:mod:`sim_server.core.plugins.capabilities`) wherever sensors are used: the live view,
the MCAP log, the RViz configuration and pictures. The bundled plugins offer the same protocols.

The package is a throwaway distribution (a module and a dist-info with entry points) put on
``sys.path``, as ``pip install`` would leave it.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader

from sim_server.core import World
from sim_server.core.plugins import MODEL_PLUGIN_GROUP
from sim_server.core.plugins.capabilities import (
    LASER_DISPLAY, ODOMETRY_DISPLAY, Advertised, Advertiser, DemandDriven, ImageSource, OdometrySource, RayCaster,
    ScanSource, TwistCommand, VelocityDriven,
)
from sim_server.live.discovery import LASER, sensor_kind, sensor_topics
from sim_server.live.log import record_mcap
from sim_server.live.view import LiveView
from sim_server.rendering.overlays import laser_rays
from sim_server.ros.rviz_config import summarize_world
from test.conftest import install_throwaway_plugins
from test.live.client import Client, stepping

SONAR_MODULE = '''
"""A sonar ring segment: five beams over 60 degrees at 10 Hz, scans kept in-process."""

import math

import numpy as np

from sim_server.core.geometry import Pose2D
from sim_server.core.plugins import ModelPlugin, UpdateTimer
from sim_server.core.plugins.capabilities import (
    LASER_DISPLAY, Advertised, Scan, ScanLayout, SensorMount, configured_string,
)
from sim_server.core.sensing.laser_scanner import LaserScanner, scan_all, scene_of

HALF_SPREAD = math.radians(30.0)


class Sonar(ModelPlugin):
    @classmethod
    def advertised(cls, config):
        return [Advertised(LASER_DISPLAY, configured_string(config, "topic", "sonar"))]

    def on_initialize(self, config):
        body = self.model.bodies[config.get_name("body")]
        self.scan_topic = self.context.topic(config.get_topic("topic", "sonar"))
        increment = HALF_SPREAD / 2
        self.scanner = LaserScanner(body.physics_body, Pose2D(), -HALF_SPREAD, HALF_SPREAD, increment, 4.0,
                                    self.context.world.collision_filter.category_bits(["all"])[0])
        self.scan_layout = ScanLayout(-HALF_SPREAD, HALF_SPREAD, increment, 4.0, self.scanner.local_angles)
        self.scan_mount = SensorMount(self.context.frame(self.context.name), self.context.frame(body.name), Pose2D())
        self.timer = UpdateTimer(10.0)
        self.latest_scan = None
        self.demanded = False
        self.scans = 0

    def sensor_pose(self):
        return self.scanner.pose()

    def after_physics_step(self, time):
        if self.timer.check(time):
            ranges, _ = scan_all([self.scanner], scene_of(self.context.world), time.iterations)[0]
            self.latest_scan = Scan(time.time_ns, ranges)
            self.scans += 1
'''
#: Where the wall in front of the sonar is (m from the robot's origin, along x).
WALL_X = 2.0


@pytest.fixture
def sonar_world(tmp_path: Path, monkeypatch) -> Path:
    """The throwaway sonar package installed on sys.path, and a world of a robot carrying one
    before a wall (a line-segment layer at x = 2 m)."""
    install_throwaway_plugins(tmp_path / "site", monkeypatch, "test_sonar_plugins", SONAR_MODULE,
                              {MODEL_PLUGIN_GROUP: {"ThrowawaySonar": "Sonar"}})
    (tmp_path / "wall.dat").write_text(f"{WALL_X} -3 {WALL_X} 3\n")
    (tmp_path / "wall.yaml").write_text("type: line_segments\ndata: wall.dat\nscale: 1\norigin: [0, 0, 0]\n")
    (tmp_path / "bot.model.yaml").write_text(
        "bodies:\n  - name: base\n    type: dynamic\n    footprints: [{type: circle, radius: 0.3, density: 1}]\n"
        "plugins:\n  - {type: ThrowawaySonar, name: sonar, body: base}\n"
    )
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nlayers:\n  - {name: walls, map: wall.yaml}\n"
        "models:\n  - {name: sonar_bot, model: bot.model.yaml, namespace: sonar_bot}\n"
    )
    yield tmp_path / "world.yaml"
    sys.modules.pop("test_sonar_plugins", None)


def _sonar(world: World):
    return world.plugins.find(world.model("sonar_bot"), "sonar")


def test_the_unknown_sonar_is_a_laser_to_every_consumer(sonar_world: Path) -> None:
    world = World.from_file(sonar_world, step_size=0.01)
    try:
        sonar = _sonar(world)
        assert type(sonar).__module__ == "test_sonar_plugins"
        assert isinstance(sonar, ScanSource) and isinstance(sonar, DemandDriven) and not isinstance(sonar, ImageSource)
        assert sensor_kind(sonar) == LASER and sensor_topics(world, LASER) == ["/sonar_bot/sonar"]
        world.step(10)
        scan = sonar.latest_scan
        assert scan is not None and len(scan.ranges) == 5
        # the beams hit the wall at x = 2 m: range = 2 / cos(angle), from the robot's origin
        assert np.allclose(scan.ranges, WALL_X / np.cos(sonar.scan_layout.angles), atol=1e-4)
        rays = laser_rays(world).segments  # pictures draw its rays, from it to the wall
        assert rays.shape == (5, 4) and np.allclose(rays[:, 2], WALL_X, atol=1e-4) and np.allclose(rays[:, :2], 0.0)
    finally:
        world.close()


def test_the_unknown_sonar_shows_in_the_rviz_configuration(sonar_world: Path) -> None:
    summary = summarize_world(sonar_world)
    assert [(s.kind, s.model, s.plugin, s.topic) for s in summary.sensors] == [
        (LASER_DISPLAY, "sonar_bot", "sonar", "/sonar_bot/sonar")]


def test_the_unknown_sonar_is_in_the_live_view_and_the_log(sonar_world: Path, tmp_path: Path) -> None:
    world = World.from_file(sonar_world, step_size=0.01)
    try:
        sonar = _sonar(world)
        with LiveView(world, port=0) as view:
            client = Client(view.url)
            loop = stepping(view, world)
            try:
                client.until(lambda: "/sonar_bot/sonar" in client.topics(), loop)
                client.subscribe("/sonar_bot/sonar")
                client.until(lambda: client.messages.get("/sonar_bot/sonar"), loop)
                assert sonar.demanded  # the view told it that it listens
                message = client.messages["/sonar_bot/sonar"][-1]
                assert len(message.ranges) == 5 and message.frame_id.endswith("sonar")
            finally:
                client.close()
        assert not sonar.demanded  # the view went: nobody outside ROS wants it any more
        log = tmp_path / "run.mcap"
        record_mcap(world, log, 1.0)
    finally:
        world.close()
    with open(log, "rb") as stream:
        reader = make_reader(stream)
        topics = [channel.topic for _, channel, _ in reader.iter_messages(topics=["/sonar_bot/sonar"])]
    assert len(topics) >= 5  # 10 Hz for a second


def test_the_bundled_plugins_offer_the_protocols() -> None:
    from sim_plugins.ackermann_drive import AckermannDrive
    from sim_plugins.camera import Camera
    from sim_plugins.diff_drive import DiffDrive
    from sim_plugins.laser import Laser
    from sim_plugins.omni_drive import OmniDrive
    from sim_plugins.range_sensor import RangeSensor
    from sim_plugins.tricycle_drive import TricycleDrive

    for drive in (DiffDrive, TricycleDrive, AckermannDrive, OmniDrive):
        assert isinstance(drive, Advertiser)
        assert drive.advertised({}) == [Advertised(ODOMETRY_DISPLAY, "odometry/filtered")]
        assert drive.advertised({"enable_odom_pub": False}) == []
    assert Laser.advertised({"topic": "front"}) == [Advertised(LASER_DISPLAY, "front")]
    assert [offer.kind for offer in (*Camera.advertised({}), *RangeSensor.advertised({}))] == ["camera", "range"]
    with pytest.raises(ValueError, match='"topic" must be a string, got 5'):
        Laser.advertised({"topic": 5})


def test_the_bundled_sensors_and_drives_are_found_by_protocol() -> None:
    from test.conftest import REPO_ROOT

    world = World.from_file(REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml", step_size=0.005)
    try:
        plugins = {p.context.type_name: p for m in world.models.values() for p in world.plugins.plugins_of(m)}
        laser, camera = plugins["Laser"], plugins["Camera"]
        assert isinstance(laser, ScanSource) and isinstance(laser, RayCaster) and isinstance(laser, DemandDriven)
        assert isinstance(camera, ImageSource) and isinstance(camera, DemandDriven)
        drives = [p for p in plugins.values() if isinstance(p, VelocityDriven)]
        assert drives and all(isinstance(d.command, TwistCommand) and isinstance(d, OdometrySource) for d in drives)
        world.step(20)
        scan, picture = laser.latest_scan, camera.latest_picture
        assert scan is not None and len(scan.ranges) == len(laser.scan_layout.angles)
        assert picture is not None and picture.pixels.shape[2] == 3
        streams = drives[0].odometry_streams()
        assert [s.ground_truth for s in streams] == [False, True] and streams[0].latest() is not None
        mount = laser.scan_mount
        assert mount.frame_id == laser.frame_id and mount.parent_frame_id == laser.body_frame_id
        assert math.isclose(laser.sensor_pose().theta, laser.scanner.pose().theta)
    finally:
        world.close()
