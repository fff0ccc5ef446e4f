"""The Sonar sensor: it measures the door and, through the open doorway, the far wall; the
simulator's consumers find it by what it offers (a laser, to them) without knowing its class; a
bad configuration fails its model in one line naming the key."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim_example_plugins import TWO_ROOMS
from sim_example_plugins.sonar import Sonar
from sim_server.core import ConfigError, World
from sim_server.core.plugins import LASER_DISPLAY, Advertised, ScanSource
from sim_server.live.discovery import LASER, sensor_topics
from sim_server.rendering.overlays import laser_rays

#: Where the sonar is (the robot at x = -2 m, the sonar 0.2 m ahead) and the door's near face.
SONAR_X, DOOR_FACE_X, FAR_WALL_X = -1.8, -0.05, 6.0


def _sonar(world: World) -> Sonar:
    return world.plugins.find(world.model("robot"), "sonar")


def test_the_sonar_sees_the_closed_door_then_the_far_wall_through_the_doorway(world: World) -> None:
    sonar = _sonar(world)
    world.step(100)  # 1 s: the door is closed
    angles = sonar.scan_layout.angles
    assert np.allclose(sonar.latest_scan.ranges, (DOOR_FACE_X - SONAR_X) / np.cos(angles), atol=1e-4)
    assert math.isclose(sonar.nearest, DOOR_FACE_X - SONAR_X, abs_tol=1e-4)
    world.step(600)  # 7 s: open since about 5.5 s
    assert math.isclose(sonar.nearest, FAR_WALL_X - SONAR_X, abs_tol=1e-4)


def test_the_simulator_finds_the_sonar_by_what_it_offers(world: World) -> None:
    sonar = _sonar(world)
    assert isinstance(sonar, ScanSource)
    assert sensor_topics(world, LASER) == ["/sonar"]  # the live view's and the MCAP log's scans
    world.step(10)
    rays = laser_rays(world).segments  # drawn on pictures and videos
    assert rays.shape == (5, 4) and np.allclose(rays[:, 2], DOOR_FACE_X, atol=1e-4)
    assert Sonar.advertised({"topic": "front_sonar"}) == [Advertised(LASER_DISPLAY, "front_sonar")]  # RViz


@pytest.mark.parametrize(
    ("setting", "key"),
    [("beams: 0", "beams"), ("beams: 65", "beams"), ("range: -1", "range"), ("range: .nan", "range"),
     ("spread: 4", "spread"), ("update_rate: -1", "update_rate"), ("layers: [nowhere]", "layers"),
     ("body: wheel", "body"), ("topic: 'bad topic'", "topic"), ("colour: red", "colour")],
)
def test_a_bad_setting_fails_the_model_in_one_line_naming_the_key(tmp_path: Path, setting: str, key: str) -> None:
    folder = TWO_ROOMS.parent
    (tmp_path / "robot.model.yaml").write_text(
        "bodies:\n  - name: base\n    type: dynamic\n    footprints: [{type: circle, radius: 0.25, density: 10}]\n"
        f"plugins:\n  - {{type: Sonar, name: sonar, body: base, {setting}}}\n"
    )
    (tmp_path / "world.yaml").write_text(
        f"properties: {{}}\nlayers:\n  - {{name: walls, map: {folder / 'rooms.yaml'}}}\n"
        "models:\n  - {name: robot, model: robot.model.yaml}\n"
    )
    with pytest.raises(ConfigError) as raised:
        World.from_file(tmp_path / "world.yaml")
    message = str(raised.value)
    assert f'"{key}"' in message and "robot.model.yaml" in message and "\n" not in message, message
