"""In-process velocity commands: the setters and set_all refuse what must not reach the world."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from sim_server.core import World, limits
from sim_server.core.physics.replicas import Replicas
from sim_server.learning.task import DEFAULT_WORLD
from sim_plugins.velocity_command import VelocityCommand

BAD = [math.nan, math.inf, -math.inf, limits.SPEED.high * 1.01, -limits.SPEED.high * 1.01, 1e300]


@pytest.fixture
def commands() -> Iterator[list[VelocityCommand]]:
    world = World.from_file(DEFAULT_WORLD, replicas=Replicas(3))
    try:
        yield [world.plugins.find(model, "drive").command for model in world.models.values()]
    finally:
        world.close()


def test_set_all_sets_every_command_at_once(commands: list[VelocityCommand]) -> None:
    changes = VelocityCommand.changes
    VelocityCommand.set_all(commands, [0.5, -1.0, 2.0], [0.1, 0.0, -3.0])
    assert [(c.linear, c.angular) for c in commands] == [(0.5, 0.1), (-1.0, 0.0), (2.0, -3.0)]
    assert VelocityCommand.changes > changes  # the drives read the commands again


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("which", ["linear", "angular"])
def test_a_bad_value_sets_nothing_and_is_named(commands: list[VelocityCommand], bad: float, which: str) -> None:
    VelocityCommand.set_all(commands, [0.1, 0.2, 0.3], [0.0, 0.0, 0.0])
    linear, angular = [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]
    (linear if which == "linear" else angular)[1] = bad
    with pytest.raises(ValueError, match=f"{which} command must be a finite number"):
        VelocityCommand.set_all(commands, linear, angular)
    assert [c.linear for c in commands] == [0.1, 0.2, 0.3]
    with pytest.raises(ValueError, match=f"{which} command must be a finite number"):
        setattr(commands[0], which, bad)
    assert commands[0].linear == 0.1 and commands[0].angular == 0.0


def test_lengths_must_agree(commands: list[VelocityCommand]) -> None:
    with pytest.raises(ValueError, match="3 commands, 2 linear and 3 angular values"):
        VelocityCommand.set_all(commands, [0.0, 0.0], [0.0, 0.0, 0.0])


@pytest.mark.parametrize(
    "make, fault",
    [
        (lambda c: (c[:2] + [None], [0.5] * 3, [0.0] * 3), "TwistCommand objects only"),
        (lambda c: (c, "123", [0.0] * 3), "linear values must be a list"),
        (lambda c: (c, {1: 2, 3: 4, 5: 6}, [0.0] * 3), "linear values must be a list"),
        (lambda c: (c, [True, 0.0, 0.0], [0.0] * 3), "linear command must be"),
        (lambda c: (c, [0.0] * 3, ["0.5", 0.0, 0.0]), "angular command must be"),
        (lambda c: (c, [0.0] * 3, 5), "angular values must be a list"),
    ],
)
def test_set_all_refuses_what_is_not_commands_and_numbers(commands: list[VelocityCommand], make, fault: str) -> None:
    VelocityCommand.set_all(commands, [0.1, 0.2, 0.3], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=fault):
        VelocityCommand.set_all(*make(commands))
    assert [c.linear for c in commands] == [0.1, 0.2, 0.3]
