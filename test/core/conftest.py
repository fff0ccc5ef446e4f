"""Fixtures the core's tests share: the key reference's recorded reads and catalogue (made once
per run: recording loads every exemplar world, model and plugin)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim_server.core.format.key_catalog import Catalog, KeyRecorder, build_catalog
from sim_server.core.key_reference import record_exemplars


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[KeyRecorder, Path]:
    """The reads of the key reference's exemplars, and the folder they were written in."""
    folder = tmp_path_factory.mktemp("exemplars")
    return record_exemplars(folder), folder


@pytest.fixture(scope="session")
def catalog(recorded: tuple[KeyRecorder, Path]) -> Catalog:
    """The key reference's catalogue."""
    return build_catalog(recorded[0].reads)
