"""Shared test fixtures and paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# A DDS domain of this test run only, for the in-process nodes and the servers the tests start:
# a server or another test run on the machine (domain 0 by default) must not answer, nor be
# discovered (a soak test measured its memory growing while another run's nodes came and went).
# Fast DDS's shared-memory ports are still shared by every process of the machine, whatever the
# domain; forcing UDP instead (FASTDDS_BUILTIN_TRANSPORTS=UDPv4) made that soak grow by itself.
# The ros2 CLI tests choose theirs from 101 up; this one is 1 to 100. Discovery stays as ROS's
# default (multicast): restricted to this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST),
# an action client of a long run once did not find its server within 20 s.
os.environ["ROS_DOMAIN_ID"] = str(1 + os.getpid() % 100)

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = Path(__file__).resolve().parent / "data"
FLATLAND_DATA = DATA_DIR / "flatland"
LOAD_WORLD_TESTS = FLATLAND_DATA / "load_world_tests"
DEMO_WORLD = REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml"


@pytest.fixture
def ros_context():
    """A private rclpy context for one test (rclpy imported only by the tests that use it)."""
    import rclpy
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)
PLUGIN_TESTS = FLATLAND_DATA / "plugins"
PLUGIN_MANAGER_TESTS = FLATLAND_DATA / "plugin_manager_tests"


def plugin(world, model_name: str, plugin_name: str):
    """The plugin ``plugin_name`` of model ``model_name``."""
    return world.plugins.find(world.models[model_name], plugin_name)
