"""Shared test fixtures and paths."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = Path(__file__).resolve().parent / "data"
FLATLAND_DATA = DATA_DIR / "flatland"
LOAD_WORLD_TESTS = FLATLAND_DATA / "load_world_tests"
DEMO_WORLD = REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml"


@pytest.fixture
def simple_world_path() -> Path:
    """The reference's simple_test_A world."""
    return LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml"
PLUGIN_TESTS = FLATLAND_DATA / "plugins"
PLUGIN_MANAGER_TESTS = FLATLAND_DATA / "plugin_manager_tests"


def plugin(world, model_name: str, plugin_name: str):
    """The plugin ``plugin_name`` of model ``model_name``."""
    return world.plugins.find(world.models[model_name], plugin_name)
