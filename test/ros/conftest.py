"""Fixtures for in-process ROS tests: a private rclpy context, the server node and a client node."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterator

import pytest
from rclpy.context import Context
from rclpy.node import Node
from rclpy.parameter import Parameter

from sim_server.ros.executor import CachedWaitSetExecutor
from sim_server.node_view import live_view_of
from sim_server.ros.server_node import SimServerNode
from test.conftest import LOAD_WORLD_TESTS, REPO_ROOT

#: The demo office with 55 people and the cleaner (config/worlds/crowd).
CROWD_WORLD = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"

#: Upper bound (wall seconds) for waiting on a condition; tests never assert on timing.
WAIT_LIMIT = 20.0


def make_server(context: Context, **params) -> SimServerNode:
    overrides = [Parameter(name, value=value) for name, value in params.items()]
    return SimServerNode(context=context, parameter_overrides=overrides, live_view=live_view_of)


class Harness:
    """The server, a client node on the same executor, and helpers that run the step loop."""

    def __init__(self, context: Context, world_path: Path, **params) -> None:
        params.setdefault("update_rate", 0.0)
        params.setdefault("show_viz", False)
        self.server = make_server(context, world_path=str(world_path), **params)
        self.client = Node("test_client", context=context)
        self.executor = CachedWaitSetExecutor(context=context)
        self.executor.add_node(self.server)
        self.executor.add_node(self.client)

    def run_until(self, condition: Callable[[], bool], what: str = "condition") -> None:
        """Run the server loop until ``condition()`` holds (fails after :data:`WAIT_LIMIT`)."""
        deadline = time.monotonic() + WAIT_LIMIT
        self.server.run(self.executor, stop=lambda: condition() or time.monotonic() > deadline)
        assert condition(), f"timed out waiting for {what}"

    def run_ticks(self, ticks: int) -> None:
        """Run exactly ``ticks`` iterations of the server loop."""
        remaining = [ticks]

        def stop() -> bool:
            remaining[0] -= 1
            return remaining[0] < 0

        self.server.run(self.executor, stop=stop)

    def call(self, service_type, name: str, request):
        """Call a service of the server and return the response."""
        client = self.client.create_client(service_type, name)
        self.run_until(lambda: client.service_is_ready(), f"service {name}")
        future = client.call_async(request)
        self.run_until(future.done, f"response of {name}")
        self.client.destroy_client(client)
        return future.result()

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=0)
        self.client.destroy_node()
        self.server.destroy_node()


@pytest.fixture
def harness(ros_context: Context) -> Iterator[Harness]:
    h = Harness(ros_context, LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml", show_viz=True)
    yield h
    h.close()


@pytest.fixture
def crowd(ros_context: Context) -> Iterator[Harness]:
    """The server on the office with people (seeded)."""
    h = Harness(ros_context, CROWD_WORLD, seed=3)
    yield h
    h.close()
