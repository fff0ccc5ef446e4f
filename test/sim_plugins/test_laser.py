"""Laser against the reference's laser_tests, in-process and over ROS."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim_server.core import ConfigError, Pose2D, World
from test.conftest import PLUGIN_TESTS, plugin

LASER_TESTS = PLUGIN_TESTS / "laser_tests"
NAN = math.nan


def run(world_file: str, steps: int = 10) -> World:
    world = World.from_file(LASER_TESTS / world_file, step_size=1.0)
    world.step(steps)
    return world


def assert_ranges(actual, expected) -> None:
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        if math.isnan(want):
            assert math.isnan(got)
        else:
            assert got == pytest.approx(want, abs=1e-5)


def test_range_test() -> None:
    world = run("range_test/world.yaml")
    front = plugin(world, "robot1", "laser_front")
    assert front.frame_id == "r_laser_front"
    assert_ranges(front.last_ranges, [4.5, 4.4, 4.3])
    assert front.last_intensities is None
    assert_ranges(plugin(world, "robot1", "laser_center").last_ranges, [4.8, 4.7, 4.6, 4.9, 4.8])
    back = plugin(world, "robot1", "laser_back")
    assert_ranges(back.last_ranges, [NAN, 3.2, 3.5, NAN, NAN])
    assert [p.timer.rate for p in (front, plugin(world, "robot1", "laser_center"), back)] == [math.inf, 5000, 1]
    world.close()


def test_clockwise_upside_down() -> None:
    world = run("range_test/world.cw.yaml")
    assert_ranges(plugin(world, "robot1", "laser_front").last_ranges, [4.3, 4.4, 4.5])
    world.close()


def test_asymmetrical_upside_down() -> None:
    world = run("range_test/world.cw.asymmetrical.yaml")
    assert_ranges(plugin(world, "robot1", "laser_flipped").last_ranges, [4.489490, 4.422091, 4.4])
    assert_ranges(plugin(world, "robot1", "laser_normal").last_ranges, [4.489490, 4.605707, 4.777099])
    world.close()


def test_intensities_from_reflectance_layer() -> None:
    world = run("intensity_test/world.yaml")
    front = plugin(world, "robot1", "laser_front")
    center = plugin(world, "robot1", "laser_center")
    back = plugin(world, "robot1", "laser_back")
    assert_ranges(front.last_ranges, [4.5, 4.4, 4.3])
    assert front.last_intensities.tolist() == [0, 0, 0]
    assert_ranges(center.last_ranges, [4.8, 4.7, 4.6, 4.9, 4.8])
    assert center.last_intensities.tolist() == [0, 255, 0, 0, 0]
    assert back.last_intensities.tolist() == [0, 0, 0, 0, 0]
    world.close()


@pytest.mark.parametrize(
    ("case", "facts"),
    [
        ("invalid_A", ['type "Laser"', 'plugins[0] ("laser_center")', 'key "range" is missing']),
        ("invalid_B", ['type "Laser"', 'Invalid "angle" params, must have max > min']),
    ],
)
def test_invalid_configs(case: str, facts: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        World.from_file(LASER_TESTS / case / "world.yaml")
    for fact in facts:
        assert fact in str(info.value)


def box2d_ranges(world: World, scanner) -> list[float | None]:
    """Box2D's own closest-hit ray cast along every beam of ``scanner`` (None: no hit)."""
    from Box2D import b2

    pose = scanner.pose()

    class Closest(b2.rayCastCallback):
        def __init__(self) -> None:
            super().__init__()
            self.fraction = None

        def ReportFixture(self, fixture, point, normal, fraction):  # noqa: N802
            if fixture.sensor or not fixture.filterData.categoryBits & scanner.layer_bits:
                return -1.0
            self.fraction = fraction
            return fraction

    expected: list[float | None] = []
    for angle in scanner.local_angles + pose.theta:
        callback = Closest()
        end = (pose.x + scanner.max_range * math.cos(angle), pose.y + scanner.max_range * math.sin(angle))
        world.physics.RayCast(callback, (pose.x, pose.y), end)
        expected.append(None if callback.fraction is None else callback.fraction * scanner.max_range)
    return expected


def assert_matches_box2d(world: World, scanner, scene) -> np.ndarray:
    """Every beam of ``scanner`` agrees with Box2D's own closest-hit ray cast (1e-4 m)."""
    scanner.noise_std_dev = 0.0
    ranges, _ = scanner.scan(scene, world.time.iterations)
    for measured, expected in zip(ranges, box2d_ranges(world, scanner)):
        if expected is None:
            assert math.isnan(measured)
        else:
            assert measured == pytest.approx(expected, abs=1e-4)
    return ranges


def test_matches_box2d_ray_casts_on_every_beam() -> None:
    """The batch caster agrees with Box2D's own ray cast on a 1081-beam office scan."""
    from test.conftest import DEMO_WORLD

    world = World.from_file(DEMO_WORLD)
    world.step(3)
    laser = plugin(world, "cleaner1", "laser_front")
    ranges = assert_matches_box2d(world, laser.scanner, laser.scene)
    assert np.isfinite(ranges).sum() > 500
    world.close()


def test_static_models_are_seen_exactly() -> None:
    """Static models are indexed with the walls; moving ones are tested directly: both exact."""
    from sim_server.core.geometry import Pose2D
    from sim_server.core.sensing.laser_scanner import LaserScanner, scene_of
    from test.conftest import DATA_DIR

    world = World.from_file(DATA_DIR / "levels" / "world.yaml")
    world.move_model("R2", Pose2D(-1.0, 2.0, 0.0))  # a moving model in view
    world.step(2)
    scene = scene_of(world)
    assert len(scene.static.fixed.polygons) == 3 and len(scene.moving(world.time.iterations).circles) >= 1
    for x, y in ((-1.0, 5.5), (9.0, 6.0), (18.0, 1.0)):
        world.move_model("R1", Pose2D(x, y, 0.3))
        world.step()
        scanner = LaserScanner(world.models["R1"].first_body.physics_body, Pose2D(), -math.pi, math.pi, 0.01, 15.0, 0xFFFF)
        ranges = assert_matches_box2d(world, scanner, scene)
        assert np.isfinite(ranges).sum() > 100
    world.close()


LEVEL_STATICS_WORLD = """
properties: {}
layers:
  - {name: ground, map: ground.yaml}
models:
  - {name: R1, model: robot.model.yaml, pose: [-20, 0, 0]}
  - {name: A, model: block.model.yaml, pose: [-1.3, 2.7, 0.7]}
  - {name: B, model: block.model.yaml, pose: [2.9, -1.1, -2.1]}
  - {name: C, model: post.model.yaml, pose: [1.7, 3.3, 0.3]}
  - {name: D, model: block.model.yaml, pose: [0.3, -3.7, 1.1]}
levels:
  - {name: L1, pose: [0, 0], size: [10, 10], buffer: 2, refs: [A, B, C]}
  - {name: L2, pose: [0, -4], size: [2, 2], buffer: 0, refs: [D]}
performers:
  - {name: perf1, ref: R1, size: [2, 2]}
"""
POST_MODEL = """
bodies:
  - name: post
    type: static
    pose: [0.1, -0.2, 0.3]
    footprints:
      - {type: circle, center: [0.05, 0.1], radius: 0.25, density: 1}
      - {type: polygon, density: 1, points: [[0.3, 0.0], [0.5, 0.1], [0.35, 0.4]]}
"""


def test_level_static_models_are_shown_and_hidden_exactly(tmp_path) -> None:
    """Static models of levels are placed once (as Box2D places them) and shown or hidden as
    their levels load and unload: every beam agrees with Box2D throughout."""
    import shutil

    from sim_server.core.geometry import Pose2D
    from sim_server.core.sensing.laser_scanner import LaserScanner, _ModelShapes, scene_of
    from test.conftest import DATA_DIR

    for name in ("ground.yaml", "ground.dat", "block.model.yaml", "robot.model.yaml"):
        shutil.copy(DATA_DIR / "levels" / name, tmp_path / name)
    (tmp_path / "post.model.yaml").write_text(POST_MODEL)
    (tmp_path / "world.yaml").write_text(LEVEL_STATICS_WORLD)
    world = World.from_file(tmp_path / "world.yaml", enable_levels=True)
    scene = scene_of(world)
    statics = scene._level_statics
    assert set(statics.entries) == {"A", "B", "C", "D"}

    def scan_from(x: float, y: float) -> np.ndarray:
        world.move_model("R1", Pose2D(x, y, 0.0))
        world.step()
        scanner = LaserScanner(world.models["R1"].first_body.physics_body, Pose2D(), -math.pi, math.pi, 0.005, 12.0, 0xFFFF)
        return assert_matches_box2d(world, scanner, scene)

    scan_from(-20.0, 0.0)
    assert statics.shown == set()
    scan_from(-5.5, 0.5)  # L1 loads
    assert statics.shown == {"A", "B", "C"}
    for name in ("A", "B", "C"):  # placed exactly as gathering them from Box2D would
        model = world.models[name]
        p0, p1 = statics.entries[name][2]
        gathered = _ModelShapes(model)
        body_poses = [(b.position[0], b.position[1], b.angle) for b in gathered.bodies]
        from sim_server.core.sensing.raycast import place_shapes

        polygons, circles = place_shapes(
            np.array(body_poses), gathered.polygons, gathered.polygon_body, gathered.circles, gathered.circle_body
        )
        assert np.array_equal(np.sort(polygons.reshape(len(polygons), -1), axis=1),
                              np.sort(statics.shapes.polygons[p0:p1].reshape(p1 - p0, -1), axis=1))
        c0, c1 = statics.entries[name][3]
        assert np.array_equal(circles, statics.shapes.circles[c0:c1])
    scan_from(0.0, -4.5)  # inside L1 and L2
    assert statics.shown == {"A", "B", "C", "D"}
    scan_from(-20.0, 0.0)  # both unload: nothing of them is seen
    assert statics.shown == set()
    scan_from(-5.5, 0.5)
    world.move_model("B", Pose2D(-2.0, -2.0, 0.4))  # moved away from where its level put it
    assert "B" not in statics.shown
    scan_from(-5.0, 0.0)
    world.close()


def test_lasers_of_different_rates_scan_at_their_own_rates(tmp_path, monkeypatch) -> None:
    """The batch groups lasers by rate, and follows robots that come and go."""
    from sim_plugins.laser import Laser

    def robot(rate: str) -> str:
        return (
            "bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.2, density: 1}]\n"
            f"plugins:\n  - {{type: Laser, name: laser, body: base, range: 5, update_rate: {rate}, "
            "angle: {min: -1.0, max: 1.0, increment: 0.5}}\n"
        )

    for rate in ("10", "5", ".inf"):
        (tmp_path / f"r{rate.strip('.')}.model.yaml").write_text(robot(rate))
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nmodels:\n  - {name: fast, model: r10.model.yaml, pose: [0, 0, 0]}\n"
        "  - {name: slow, model: r5.model.yaml, pose: [2, 0, 0]}\n"
    )
    scans: list[str] = []
    cast = Laser._scan_and_publish
    monkeypatch.setattr(
        Laser,
        "_scan_and_publish",
        staticmethod(lambda lasers, time: (scans.extend(laser.context.model.name for laser in lasers), cast(lasers, time))),
    )
    world = World.from_file(tmp_path / "world.yaml", step_size=0.01)
    world.step(100)  # 1 s
    assert (scans.count("fast"), scans.count("slow")) == (10, 5)
    world.spawn_model(tmp_path / "rinf.model.yaml", "every", pose=Pose2D(4.0, 0.0, 0.0))
    world.delete_model("slow")
    scans.clear()
    world.step(100)
    assert (scans.count("fast"), scans.count("slow"), scans.count("every")) == (10, 0, 100)
    world.close()


@pytest.mark.parametrize("seed", range(4))
def test_crowds_of_moving_shapes_are_seen_exactly(tmp_path, seed: int) -> None:
    """With many moving shapes near a laser, beams test only the shapes of their direction
    sector: still every beam as Box2D casts it, shapes touching the laser's origin included."""
    from sim_server.core.geometry import Pose2D
    from sim_server.core.sensing.laser_scanner import LaserScanner, scene_of

    (tmp_path / "disc.model.yaml").write_text(
        "bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.3, density: 1}]\n"
    )
    (tmp_path / "box.model.yaml").write_text(
        "bodies:\n  - name: base\n    footprints: [{type: polygon, density: 1, "
        "points: [[-0.4, -0.2], [0.4, -0.2], [0.5, 0.3], [-0.3, 0.25]]}]\n"
    )
    # A layer, so that footprints have a collision category; its one wall is far off.
    (tmp_path / "walls.txt").write_text("100 100 101 100\n")
    (tmp_path / "walls.yaml").write_text("type: line_segments\ndata: walls.txt\nscale: 1.0\norigin: [0, 0, 0]\n")
    rng = np.random.default_rng(seed)
    lines = ["properties: {}", "layers:\n  - {name: walls, map: walls.yaml}", "models:"]
    for index in range(60):
        x, y, theta = rng.uniform(-8.0, 8.0), rng.uniform(-8.0, 8.0), rng.uniform(-math.pi, math.pi)
        kind = "disc" if index % 2 else "box"
        lines.append(f"  - {{name: m{index}, model: {kind}.model.yaml, pose: [{x:.3f}, {y:.3f}, {theta:.3f}]}}")
    (tmp_path / "world.yaml").write_text("\n".join(lines) + "\n")
    world = World.from_file(tmp_path / "world.yaml")
    world.step()
    scene = scene_of(world)
    for index in (0, 1, 7, 30):
        body = world.models[f"m{index}"].first_body.physics_body
        # From the body's centre, and from a point just off it (inside other shapes' circles).
        for origin in (Pose2D(), Pose2D(0.6, 0.0, 0.5)):
            scanner = LaserScanner(body, origin, -math.pi, math.pi, 0.005, 12.0, 0xFFFF)
            ranges, _ = scanner.scan(scene, world.time.iterations)
            expected = np.array([math.nan if r is None else r for r in box2d_ranges(world, scanner)])
            assert np.array_equal(np.isnan(ranges), np.isnan(expected))  # the same beams hit
            difference = np.abs(ranges - expected)[np.isfinite(expected)]
            # A shape missed would be decimetres off at least; Box2D's single precision puts a
            # few beams grazing these tilted edges up to 2e-3 m off (so did the caster before
            # sectors, whose ranges and hit bits the sectored one reproduces bit for bit).
            assert difference.max() < 5e-3 and (difference < 1e-4).mean() > 0.99
            assert np.isfinite(ranges).sum() > 300
    world.close()


def test_scans_cast_on_several_threads_equal_the_serial_cast(tmp_path, monkeypatch) -> None:
    """A large batch is shared out among numba's threads: every range and hit bit as serial."""
    import functools

    from sim_server.core.geometry import Pose2D
    from sim_server.core.sensing import laser_scanner, raycast
    from sim_server.core.sensing.laser_scanner import LaserScanner, scan_all, scene_of

    (tmp_path / "disc.model.yaml").write_text("bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.3, density: 1}]\n")
    (tmp_path / "walls.txt").write_text("-9 -9 9 -9\n9 -9 9 9\n9 9 -9 9\n-9 9 -9 -9\n0 -3 2 4\n")
    (tmp_path / "walls.yaml").write_text("type: line_segments\ndata: walls.txt\nscale: 1.0\norigin: [0, 0, 0]\n")
    rng = np.random.default_rng(5)
    models = "".join(
        f"  - {{name: m{i}, model: disc.model.yaml, pose: [{rng.uniform(-8, 8):.3f}, {rng.uniform(-8, 8):.3f}, 0]}}\n"
        for i in range(40)
    )
    (tmp_path / "world.yaml").write_text("properties: {}\nlayers:\n  - {name: walls, map: walls.yaml}\nmodels:\n" + models)
    world = World.from_file(tmp_path / "world.yaml")
    world.step()
    scene = scene_of(world)
    scanners = [
        LaserScanner(world.models[f"m{i}"].first_body.physics_body, Pose2D(0.4, 0.0, 0.0), -2.0, 2.0, 0.01, 15.0, 0xFFFF)
        for i in range(40)
    ]
    serial = scan_all(scanners, scene, world.time.iterations)
    monkeypatch.setattr(laser_scanner, "cast_scans", functools.partial(raycast.cast_scans, parallel=True))
    threaded = scan_all(scanners, scene, world.time.iterations)
    for (ranges, bits), (ranges_threaded, bits_threaded) in zip(serial, threaded):
        assert np.array_equal(ranges, ranges_threaded, equal_nan=True) and np.array_equal(bits, bits_threaded)
    assert sum(int(np.isfinite(ranges).sum()) for ranges, _ in serial) > 10000
    world.close()
