"""``make demo``: run the bundled office world headless and drive it through ROS from outside.

Starts the server as its own process (as ``ros2 run`` would), then, from this process over
real ROS 2 topics and services: waits for /clock, spawns a model, moves it, deletes it, tries
a failing call, pauses and resumes, drives the cleaner robot through cmd_vel while reading its
odometry and laser scans, lets the world run for a while and prints sim time, real-time factor
and the topics and services offered. Exit code 0 when every step behaved.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import rclpy
from geometry_msgs.msg import Pose2D, Twist
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import LaserScan
from std_srvs.srv import Empty

from sim_msgs.msg import Levels
from sim_msgs.srv import DeleteModel, MoveModel, SpawnModel

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WORLD = REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml"
TUNNEL_WORLD = REPO_ROOT / "config" / "worlds" / "tunnel" / "world.yaml"
#: Wall seconds to wait for anything the server should do promptly.
RESPONSE_TIMEOUT = 30.0


class DemoClient:
    """A client node that talks to the server over ROS."""

    def __init__(self) -> None:
        self.node = Node("sim_demo_client")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.clock_ns = -1
        self.clock_count = 0
        self.node.create_subscription(Clock, "/clock", self._on_clock, 10)

    def _on_clock(self, msg: Clock) -> None:
        self.clock_ns = msg.clock.sec * 1_000_000_000 + msg.clock.nanosec
        self.clock_count += 1

    def spin_until(self, condition: Callable[[], bool], timeout: float = RESPONSE_TIMEOUT) -> bool:
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.05)
        return condition()

    def spin_for(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.05)

    def call(self, service_type, name: str, request):
        client = self.node.create_client(service_type, name)
        if not client.wait_for_service(timeout_sec=RESPONSE_TIMEOUT):
            raise RuntimeError(f"service {name} did not appear")
        future = client.call_async(request)
        if not self.spin_until(future.done):
            raise RuntimeError(f"service {name} did not answer")
        self.node.destroy_client(client)
        return future.result()


def _start_server(world: Path, *parameters: str) -> subprocess.Popen:
    """The server as its own process, on ``world`` with extra ``name:=value`` parameters."""
    arguments = ["--ros-args", "-p", f"world_path:={world}"]
    for parameter in parameters:
        arguments += ["-p", parameter]
    return subprocess.Popen([sys.executable, "-m", "sim_server", *arguments], env=dict(os.environ))


def _shut_down(client: "DemoClient", server: subprocess.Popen) -> None:
    """Stop the client, then the server (Ctrl-C, as a user would)."""
    client.node.destroy_node()
    rclpy.try_shutdown()
    server.send_signal(signal.SIGINT)
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()


def _verdict(what: str, failures: list[str]) -> int:
    print(f"{what} finished: " + ("all steps behaved." if not failures else f"{len(failures)} step(s) FAILED."))
    return 0 if not failures else 1


def _check(ok: bool, text: str, failures: list[str]) -> None:
    print(f"  [{'ok' if ok else 'FAILED'}] {text}")
    if not ok:
        failures.append(text)


def run_demo(world: Path, run_seconds: float) -> int:
    """Run the demo; returns the exit code."""
    print(f"Starting sim_server on {world}")
    server = _start_server(world)
    failures: list[str] = []
    rclpy.init()
    client = DemoClient()
    try:
        _check(client.spin_until(lambda: client.clock_count > 0), "server publishes /clock", failures)
        if failures:
            return 1
        spawn = client.call(
            SpawnModel,
            "/spawn_model",
            SpawnModel.Request(yaml_path="turtlebot.model.yaml", name="visitor", ns="visitor", pose=Pose2D(x=2.0, y=3.0)),
        )
        _check(spawn.success, f"spawn_model visitor at (2, 3): {spawn.message}", failures)
        move = client.call(MoveModel, "/move_model", MoveModel.Request(name="visitor", pose=Pose2D(x=5.0, y=-2.0, theta=1.57)))
        _check(move.success, f"move_model visitor: {move.message}", failures)
        bad = client.call(MoveModel, "/move_model", MoveModel.Request(name="nobody", pose=Pose2D()))
        _check(not bad.success, f"move_model nobody is refused: {bad.message}", failures)
        client.call(Empty, "/pause", Empty.Request())
        client.spin_for(0.3)
        paused_at = client.clock_ns
        client.spin_for(0.5)
        _check(client.clock_ns == paused_at, f"pause freezes /clock at {paused_at / 1e9:.3f} s", failures)
        client.call(Empty, "/resume", Empty.Request())
        _check(client.spin_until(lambda: client.clock_ns > paused_at), "resume restarts /clock", failures)
        delete = client.call(DeleteModel, "/delete_model", DeleteModel.Request(name="visitor"))
        _check(delete.success, f"delete_model visitor: {delete.message}", failures)

        # Drive the cleaner (TricycleDrive: linear.x is the wheel speed, angular.z the steering
        # angle) and watch its odometry and its 1081-beam laser.
        scans: list[LaserScan] = []
        odometry: list[Odometry] = []
        client.node.create_subscription(LaserScan, "/scan", scans.append, 10)
        client.node.create_subscription(Odometry, "/odometry/ground_truth", odometry.append, 10)
        command = client.node.create_publisher(Twist, "/cmd_vel", 1)
        client.spin_until(lambda: bool(odometry) and bool(scans))
        start = odometry[-1].pose.pose.position if odometry else None
        drive = Twist()
        drive.linear.x, drive.angular.z = 0.5, 0.3
        for _ in range(20):  # 2 s of wall time
            command.publish(drive)
            client.spin_for(0.1)
        command.publish(Twist())
        end = odometry[-1].pose.pose.position if odometry else None
        moved = math.hypot(end.x - start.x, end.y - start.y) if start and end else 0.0
        _check(moved > 0.3, f"cmd_vel drives cleaner1: it moved {moved:.2f} m", failures)
        if scans:
            hits = sum(1 for r in scans[-1].ranges if math.isfinite(r))
            _check(len(scans[-1].ranges) == 1081, f"/scan: {len(scans)} scans of {len(scans[-1].ranges)} beams, "
                   f"{hits} hits, frame {scans[-1].header.frame_id}", failures)
        else:
            _check(False, "/scan publishes laser scans", failures)

        print(f"Letting the world run for {run_seconds:.0f} s of wall time...")
        start_wall, start_sim = time.monotonic(), client.clock_ns
        client.spin_for(run_seconds)
        wall = time.monotonic() - start_wall
        rtf = (client.clock_ns - start_sim) / 1e9 / wall
        print(f"  sim time {client.clock_ns / 1e9:.2f} s, real-time factor {rtf:.2f} (update_rate 200 Hz)")
        if not 0.9 <= rtf <= 1.1:
            print("  (note: the real-time factor is off 1.0; is the machine busy?)")

        topics = sorted(name for name, _ in client.node.get_topic_names_and_types())
        services = sorted(
            name for name, _ in client.node.get_service_names_and_types()
            if name.startswith("/sim_server/debug") or not name.startswith(("/sim_server/", "/sim_demo_client/"))
        )
        print("Topics offered:\n" + "\n".join(f"  {t}" for t in topics))
        print("Services offered:\n" + "\n".join(f"  {s}" for s in services))
    finally:
        _shut_down(client, server)
    return _verdict("Demo", failures)


def run_tunnel_demo(seconds: float) -> int:
    """Two robots drive down the streamed 300 m tunnel; print the tunnel sections as they stream."""
    print(f"Starting sim_server on {TUNNEL_WORLD} with levels enabled, as fast as possible")
    server = _start_server(TUNNEL_WORLD, "enable_levels:=true", "update_rate:=0.0", "show_viz:=false")
    failures: list[str] = []
    rclpy.init()
    client = DemoClient()
    level_sets: list[list[str]] = []
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
    client.node.create_subscription(Levels, "/sim_server/levels", lambda m: level_sets.append(list(m.loaded)), latched)
    poses: dict[str, float] = {}
    for robot in ("scout", "hauler"):
        client.node.create_subscription(
            Odometry, f"/{robot}/odometry/ground_truth",
            lambda m, name=robot: poses.__setitem__(name, m.pose.pose.position.x), 10,
        )
    try:
        _check(client.spin_until(lambda: bool(level_sets) and len(poses) == 2), "levels and odometry arrive", failures)
        print(f"  loaded at the start: {', '.join(level_sets[-1])}")
        commands = {name: client.node.create_publisher(Twist, f"/{name}/cmd_vel", 1) for name in ("scout", "hauler")}
        speeds = {"scout": 2.0, "hauler": 1.5}
        deadline = time.monotonic() + seconds
        shown = 0
        while time.monotonic() < deadline and poses.get("hauler", 0.0) < 280.0:
            for name, publisher in commands.items():
                twist = Twist()
                twist.linear.x = speeds[name]
                publisher.publish(twist)
            client.spin_for(0.2)
            if len(level_sets) > shown:
                shown = len(level_sets)
                sections = sorted({int(level.split("[")[1].split(",")[0]) for level in level_sets[-1]})
                print(f"  scout x={poses.get('scout', 0):6.1f} m, hauler x={poses.get('hauler', 0):6.1f} m: "
                      f"tunnel sections {sections[0] * 20}-{(sections[-1] + 1) * 20} m loaded"
                      if sections else "  no section loaded")
        travelled = poses.get("hauler", 0.0)
        _check(travelled > 40.0, f"the robots drove down the tunnel (hauler at {travelled:.0f} m)", failures)
        _check(len(level_sets) > 3, f"tunnel sections streamed in and out ({len(level_sets)} changes)", failures)
        first = set(level_sets[0]) if level_sets else set()
        _check(bool(level_sets) and not first & set(level_sets[-1]), "the sections behind the robots are gone", failures)
    finally:
        _shut_down(client, server)
    return _verdict("Tunnel demo", failures)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", type=Path, default=DEFAULT_WORLD, help="world file (default: the office demo)")
    parser.add_argument("--seconds", type=float, default=10.0, help="wall seconds to let the world run")
    parser.add_argument("--tunnel", action="store_true", help="run the level-streaming tunnel demo instead")
    args = parser.parse_args(argv)
    if args.tunnel:
        return run_tunnel_demo(args.seconds)
    return run_demo(args.world.resolve(), args.seconds)


if __name__ == "__main__":
    sys.exit(main())
