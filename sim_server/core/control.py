"""What a client may ask of a simulation: spawn, delete and move models, pause, resume, step
and reset. :class:`SimulationControl` is the small protocol the live view calls (always on the
thread that steps the world); :class:`WorldSimulation` fulfils it for a world stepped in-process
(the ROS node's services use it too), and the server node has its own
(:class:`sim_server.node_view.NodeSimulation`), so the view's requests act as the node's
services do. A request's answer is a :class:`Reply`, given once, maybe steps later.

Every method raises :class:`~sim_server.core.errors.SimError` (a one-line message) for a request
it refuses; nothing is half-done then. Units: metres, radians.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

from sim_server.core.errors import RequestError, one_line
from sim_server.core.geometry import Pose2D
from sim_server.core.timing.step_queue import StepQueue, StepRequest, check_steps

if TYPE_CHECKING:
    from sim_server.core.world import World


class Reply:
    """The answer of one request: given once, by :meth:`finish`; a request may finish later than
    its action returns (steps run by the loop over many ticks)."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self.success = False
        self.message = ""
        #: Set when the caller stopped waiting: an action still running should stop.
        self.abandoned = False
        self.started = False

    def finish(self, success: bool, message: str) -> None:
        """Give the answer (a second one is ignored)."""
        if not self._done.is_set():
            self.success, self.message = success, message
            self._done.set()

    @property
    def finished(self) -> bool:
        return self._done.is_set()

    def wait(self, seconds: float) -> bool:
        """Whether the answer came within ``seconds``."""
        return self._done.wait(seconds)


class SimulationControl(Protocol):
    """The requests of the viewer, carried out on the step loop's thread."""

    @property
    def paused(self) -> bool:
        """Whether sim time stands still."""

    def spawn_model(self, yaml_path: str, name: str, namespace: str, pose: Pose2D) -> str:
        """Add the model of ``yaml_path`` as ``name``; returns what was done (one line)."""

    def delete_model(self, name: str) -> str:
        """Remove the model (or pedestrian) ``name``."""

    def move_model(self, name: str, pose: Pose2D) -> str:
        """Put the model ``name`` at ``pose``."""

    def set_paused(self, paused: bool) -> str:
        """Pause or resume sim time."""

    def step(self, steps: int, reply: Reply) -> None:
        """Queue ``steps`` physics steps (the world paused); finish ``reply`` when they are
        done, or with why they stopped (also when ``reply.abandoned`` is set)."""

    def spawn_folders(self) -> list[Path]:
        """The folders (resolved) whose model files clients may spawn."""

    def model_path(self, yaml_path: str) -> Path:
        """The file a spawn request names (relative: against the world file's folder)."""

    def reset(self) -> str:
        """Return the world to its loaded state."""


def answering(steps: int, reply: Reply, sim_time: Callable[[], float]) -> StepRequest:
    """A step request that answers ``reply`` when it ends (how far it got, ``sim_time()`` in
    seconds) and stops once the caller stopped waiting."""
    request = StepRequest(steps, finished=lambda reason: None)

    def finished(reason: str | None) -> None:
        if reason is None:
            reply.finish(True, f"stepped {request.steps} time(s) to sim time {sim_time():.9f} s")
        else:
            reply.finish(False, f"stopped after {request.done} of {request.steps} step(s): {reason}")

    request.finished = finished
    request.stop_reason = lambda: "the caller stopped waiting" if reply.abandoned else None
    return request


def world_folders(world: "World") -> list[Path]:
    """The folders of ``world``'s files, resolved: the world file's and those of the model
    files it and its models were loaded from."""
    folders = {world.spec.path.parent}
    folders.update(entry.model_path.parent for entry in world.spec.models)
    folders.update(model.spec.path.parent for model in world.models.values())
    return sorted({folder.resolve() for folder in folders})


def check_spawnable(control: SimulationControl, yaml_path: str) -> None:
    """RequestError unless the model file ``yaml_path`` lies (symbolic links followed) in one
    of the control's :meth:`~SimulationControl.spawn_folders`: a client of the view must not
    read other files, which a failed load would quote."""
    path = control.model_path(yaml_path).resolve()
    folders = control.spawn_folders()
    if not any(path.is_relative_to(folder) for folder in folders):
        shown = ", ".join(f'"{folder}"' for folder in folders[:5]) + (" ..." if len(folders) > 5 else "")
        raise RequestError(
            f'"{one_line(yaml_path, 200)}" is outside the folders live view clients may spawn from ({shown}: the '
            "world's and its models'; on ROS also resource_paths)"
        )


class WorldSimulation:
    """:class:`SimulationControl` for a world stepped in-process (by :meth:`LiveView.run
    <sim_server.live.view.LiveView.run>` or the caller's loop, which must call the view's
    ``serve()``: steps asked for are carried out there, in slices)."""

    def __init__(self, world: "World") -> None:
        self.world = world
        self.steps = StepQueue(lambda: self.world.step())

    @property
    def paused(self) -> bool:
        return self.world.time.paused

    def spawn_folders(self) -> list[Path]:
        return world_folders(self.world)

    def model_path(self, yaml_path: str) -> Path:
        return self.world.model_path(yaml_path)

    def use_world(self, world: "World") -> None:
        """Act on ``world`` from now on (steps asked of the old one stop)."""
        self.steps.abort("the world was replaced")
        self.world = world

    def spawn_model(self, yaml_path: str, name: str, namespace: str, pose: Pose2D) -> str:
        model = self.world.spawn_model(yaml_path, name, namespace, pose)
        return f'spawned model "{model.name}" from "{model.spec.path}"'

    def delete_model(self, name: str) -> str:
        return f'deleted {self.world.delete_entity(name)} "{name}"'

    def move_model(self, name: str, pose: Pose2D) -> str:
        self.world.move_model(name, pose)
        return f'moved model "{name}" to ({pose.x:g}, {pose.y:g}, {pose.theta:g})'

    def set_paused(self, paused: bool) -> str:
        if not paused:
            self.steps.abort("the world was resumed")
        self.world.time.paused = paused
        return "paused" if paused else "resumed"

    def step(self, steps: int, reply: Reply) -> None:
        check_steps(steps, self.paused)
        self.steps.add(answering(steps, reply, lambda: self.world.time.sim_time))

    def reset(self) -> str:
        self.steps.abort("the world was reset")
        self.world.reset()
        return "reset to the loaded state"
