"""The standard's simulation states over the world's pause flag, and every transition, as the
definition's comments (msg/SimulationState.msg) give them."""

from __future__ import annotations

import pytest

from sim_server.ros.standard_interface.simulation_state import Refusal, SimulationState, Step, state_of, transition

S = SimulationState
#: (current, target) -> the steps, or the refusal.
EXPECTED = {
    (S.PLAYING, S.PAUSED): (Step.PAUSE,),
    (S.PLAYING, S.STOPPED): (Step.PAUSE, Step.RESET),
    (S.PLAYING, S.QUITTING): (Step.PAUSE, Step.RESET, Step.QUIT),  # "stop the simulation first, and then exit"
    (S.PAUSED, S.PLAYING): (Step.PLAY,),
    (S.PAUSED, S.STOPPED): (Step.PAUSE, Step.RESET),
    (S.PAUSED, S.QUITTING): (Step.PAUSE, Step.RESET, Step.QUIT),
    (S.STOPPED, S.PLAYING): (Step.PLAY,),
    (S.STOPPED, S.PAUSED): (Step.PAUSE,),  # "It can also be paused ... without any time steps"
    (S.STOPPED, S.QUITTING): (Step.PAUSE, Step.QUIT),
    (S.NO_WORLD, S.PLAYING): Refusal.INCORRECT_TRANSITION,
    (S.NO_WORLD, S.PAUSED): Refusal.INCORRECT_TRANSITION,
    (S.NO_WORLD, S.STOPPED): Refusal.INCORRECT_TRANSITION,
    (S.NO_WORLD, S.QUITTING): (Step.PAUSE, Step.QUIT),
}


def test_state_of() -> None:
    assert state_of(False, 0) == state_of(False, 5) == state_of(False, 0, stopped=True) == S.PLAYING
    assert state_of(True, 0, stopped=True) == S.STOPPED
    assert state_of(True, 0) == S.PAUSED  # paused at the start, not stopped: start_paused
    assert state_of(True, 1) == state_of(True, 1, stopped=True) == S.PAUSED  # stepped since
    assert state_of(True, 0, loaded=False, stopped=True) == state_of(False, 9, loaded=False) == S.NO_WORLD


@pytest.mark.parametrize("current", [S.PLAYING, S.PAUSED, S.STOPPED, S.NO_WORLD])
@pytest.mark.parametrize("target", range(256))
def test_every_transition(current: SimulationState, target: int) -> None:
    plan = transition(current, target)
    if target > S.LOADING_WORLD:
        assert plan.refusal == Refusal.OPERATION_FAILED and f"unknown state {target}" in plan.message
    elif target in (S.NO_WORLD, S.LOADING_WORLD):
        assert plan.refusal == Refusal.FEATURE_UNSUPPORTED
    elif target == current:
        assert plan.refusal == Refusal.ALREADY_IN_TARGET_STATE and current.name in plan.message
    else:
        expected = EXPECTED[(current, S(target))]
        if isinstance(expected, Refusal):
            assert plan.refusal == expected and plan.steps == () and plan.message
        else:
            assert plan.refusal is None and plan.steps == expected
