"""Simulation states of the standard interface and the transitions between them (no rclpy).

The world has a pause flag and a step count; the standard's states map onto them and onto one
more fact, whether the simulation was *stopped* (paused and reset: set_simulation_state STOPPED,
a loaded world, a reset of time while paused) with no step and no pause or resume since:

* PLAYING while sim time runs;
* STOPPED while paused, stopped and not stepped since;
* PAUSED while paused otherwise: a server launched with ``start_paused`` is PAUSED (the user asked
  to start paused), and so is a STOPPED simulation asked to pause, which the definition allows:
  "Stopped simulation can be played. It can also be paused, which means starting simulation in a
  paused state immediately, without any time steps";
* NO_WORLD after unload_world (until load_world).

QUITTING ends the server; from PLAYING or PAUSED it stops the simulation first (pause and reset),
as the definition expects. Without a world only QUITTING is a transition.
Loading happens at once (LOADING_WORLD is never the state), and a request for NO_WORLD or
LOADING_WORLD is refused as unsupported: unload_world and load_world do that.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class SimulationState(IntEnum):
    """The values of ``simulation_interfaces/msg/SimulationState``."""

    STOPPED = 0
    PLAYING = 1
    PAUSED = 2
    QUITTING = 3
    NO_WORLD = 4
    LOADING_WORLD = 5


class Refusal(IntEnum):
    """Why a transition is refused: ``Result`` codes and those of ``SetSimulationState``."""

    FEATURE_UNSUPPORTED = 0
    OPERATION_FAILED = 4
    ALREADY_IN_TARGET_STATE = 101
    INCORRECT_TRANSITION = 103


class Step(IntEnum):
    """What a transition does, in order."""

    PAUSE = 0
    RESET = 1
    PLAY = 2
    QUIT = 3


@dataclass(frozen=True)
class Transition:
    """The steps to take (when ``refusal`` is None), or why not (``refusal`` and ``message``)."""

    steps: tuple[Step, ...] = ()
    refusal: Refusal | None = None
    message: str = ""


def state_of(paused: bool, iterations: int, loaded: bool = True, stopped: bool = False) -> SimulationState:
    """The state of a world that is ``paused`` (or not) after ``iterations`` steps since it was
    loaded or reset, ``stopped`` when it was stopped with no pause or resume since; NO_WORLD when
    none is ``loaded``."""
    if not loaded:
        return SimulationState.NO_WORLD
    if not paused:
        return SimulationState.PLAYING
    return SimulationState.STOPPED if stopped and iterations == 0 else SimulationState.PAUSED


def transition(current: SimulationState, target: int) -> Transition:
    """How to go from ``current`` to the requested state ``target`` (any integer a client sent)."""
    try:
        wanted = SimulationState(target)
    except ValueError:
        names = ", ".join(f"{state.value} ({state.name})" for state in SimulationState)
        return Transition(refusal=Refusal.OPERATION_FAILED, message=f"unknown state {target}: the states are {names}")
    if wanted in (SimulationState.NO_WORLD, SimulationState.LOADING_WORLD):
        return Transition(
            refusal=Refusal.FEATURE_UNSUPPORTED,
            message=f"{wanted.name} is not a state to ask for: unload_world and load_world unload and load worlds",
        )
    if current == SimulationState.NO_WORLD and wanted != SimulationState.QUITTING:
        return Transition(
            refusal=Refusal.INCORRECT_TRANSITION,
            message=f"no world is loaded: load one with load_world before {wanted.name}",
        )
    if wanted == current:
        return Transition(refusal=Refusal.ALREADY_IN_TARGET_STATE, message=f"the simulation is already {wanted.name}")
    if wanted == SimulationState.PLAYING:
        return Transition((Step.PLAY,))
    if wanted == SimulationState.PAUSED:  # from STOPPED too: paused, without a step
        return Transition((Step.PAUSE,))
    if wanted == SimulationState.STOPPED:
        return Transition((Step.PAUSE, Step.RESET))
    if current in (SimulationState.PLAYING, SimulationState.PAUSED):  # "stop the simulation first, and then exit"
        return Transition((Step.PAUSE, Step.RESET, Step.QUIT))
    return Transition((Step.PAUSE, Step.QUIT))  # QUITTING when STOPPED or without a world
