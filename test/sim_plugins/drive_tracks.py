"""Shared by the drive tests: a world of drives run with random commands, one model leaving
mid-run, recorded step by step (to compare body access in memory with SWIG, batches with the
plain hook)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from sim_server.core import World
from sim_server.core.plugins.api import Plugin
from sim_server.core.physics import body_memory


@dataclass(frozen=True)
class DriveRun:
    """How :func:`track` drives a world.

    Attributes:
        plugin: the drive plugin's name in every model.
        seed: the world's seed.
        every: steps between new random commands (linear within +-``linear``, angular within
            +-``angular``, and sideways within +-``lateral`` when it is not 0, drawn from
            ``command_seed``).
        leaving: the model deleted before step ``leaves_at``.
        row: what is recorded of each drive after each step.
    """

    plugin: str
    seed: int
    command_seed: int
    every: int
    linear: float
    angular: float
    leaving: str
    leaves_at: int
    row: Callable[[Any], tuple]
    lateral: float = 0.0


def track(world_file: Path, steps: int, in_memory: bool, run: DriveRun) -> list:
    """Per step and drive (in name order): the name and ``run.row`` of the drive."""
    body_memory.use_memory_access(None if in_memory else False)
    try:
        world = World.from_file(world_file, step_size=0.01, seed=run.seed)
        drives = {name: world.plugins.find(model, run.plugin) for name, model in world.models.items()}
        rng = np.random.default_rng(run.command_seed)
        rows = []
        for step in range(steps):
            if step % run.every == 0:
                for drive in drives.values():
                    drive.command.linear = rng.uniform(-run.linear, run.linear)
                    drive.command.angular = rng.uniform(-run.angular, run.angular)
                    if run.lateral:
                        drive.command.lateral = rng.uniform(-run.lateral, run.lateral)
            if step == run.leaves_at:
                world.delete_model(run.leaving)
                del drives[run.leaving]
            world.step()
            rows += [(name, *run.row(drive)) for name, drive in sorted(drives.items())]
        world.close()
        return rows
    finally:
        body_memory.use_memory_access(None)


def body_row(drive: Any) -> tuple:
    """The drive's body: x, y, angle, linear velocity along x and angular velocity."""
    body = drive.body
    return body.position.x, body.position.y, body.angle, body.linearVelocity.x, body.angularVelocity


@contextlib.contextmanager
def plain_hooks(plugin_class: type) -> Iterator[None]:
    """Worlds loaded meanwhile call each plugin's own hook: the class has no batch hook (the
    plugin API's default, whether the class or a base class defined one)."""
    own = plugin_class.__dict__.get("before_physics_step_batch")
    plugin_class.before_physics_step_batch = Plugin.__dict__["before_physics_step_batch"]
    try:
        yield
    finally:
        if own is None:
            del plugin_class.before_physics_step_batch
        else:
            plugin_class.before_physics_step_batch = own
