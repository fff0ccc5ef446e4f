"""The example world, loaded afresh for each test and closed after it."""

from __future__ import annotations

import pytest

from sim_example_plugins import TWO_ROOMS
from sim_server.core import World

#: The step the tests run the world at (s).
STEP_SIZE = 0.01


@pytest.fixture
def world() -> World:
    made = World.from_file(TWO_ROOMS, step_size=STEP_SIZE)
    yield made
    made.close()
