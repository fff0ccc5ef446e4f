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
