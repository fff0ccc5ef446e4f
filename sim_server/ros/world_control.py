"""World control: step_world and reset_world services and the ~/stats topic.

``step_world`` (sim_msgs/StepWorld) advances exactly ``steps`` physics steps while the world is
paused and answers once they are done; ``reset_world`` (std_srvs/Empty) returns the world to its
loaded state without restarting the process.

A step request is queued, not carried out inside its callback: the server's loop runs its steps
in slices of :data:`STEP_SLICE` wall seconds between which it serves every other callback, logs
and notices a shutdown, so a request of millions of steps blocks nothing. A request still
queued when the world is resumed or reset, or the server shuts down, answers false. ``~/stats`` (sim_msgs/WorldStats) reports sim time,
real-time factor, step times, iterations, overruns and the paused flag about once a second.
"""

from __future__ import annotations

import logging
from typing import Callable

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.task import Future
from std_srvs.srv import Empty

from sim_msgs.msg import WorldStats
from sim_msgs.srv import StepWorld
from sim_server.core.errors import RequestError
from sim_server.core.timing.step_queue import STEP_SLICE, StepQueue, StepRequest, check_steps
from sim_server.core.timing.step_timing import StepStatistics
from sim_server.core.timing.timekeeper import NANOSECONDS_PER_SECOND
from sim_server.core.world import World
from sim_server.ros.services import answer
from sim_server.ros.world_user import WorldUser

LOGGER = logging.getLogger("sim_server")

#: Wall seconds between ~/stats messages.
STATS_PUB_PERIOD = 1.0


class _StepRequest(StepRequest):
    """A queued step_world request whose ``future`` completes with None when all steps are
    done, or with the reason they stopped."""

    def __init__(self, steps: int, on_step: Callable[[int], None] | None = None,
                 stop_reason: Callable[[], str | None] | None = None) -> None:
        self.future = Future()
        super().__init__(steps, self.future.set_result, on_step=on_step, stop_reason=stop_reason)


class WorldControl(WorldUser):
    """The world-control services and statistics topic of the server node.

    Args:
        node: the server node.
        world: its world.
        step_once: advances the world one step (the node's, which also times it).
        after_reset: called once the world was reset (to re-publish /clock, re-time the loop).
    """

    def __init__(self, node: Node, world: World, step_once: Callable[[], None], after_reset: Callable[[], None]) -> None:
        self._node = node
        self._world = world
        self._after_reset = after_reset
        self._services = [
            # Its own group: while a request awaits its steps, the node's default (mutually
            # exclusive) group stays free for every other callback; a second request waits its turn.
            node.create_service(
                StepWorld, "step_world", self._step_world, callback_group=MutuallyExclusiveCallbackGroup()
            ),
            node.create_service(Empty, "reset_world", self._reset_world),
        ]
        self._stats_publisher = node.create_publisher(WorldStats, "~/stats", 10)
        self.statistics = StepStatistics()
        self._window_wall: float | None = None
        self._window_sim_ns = 0
        self._steps = StepQueue(step_once)

    def check_steps(self, steps: int) -> None:
        """RequestError unless ``steps`` can be queued now: 1 to the limit, the world paused
        (and loaded)."""
        self.check_world_loaded()
        check_steps(steps, self._world.time.paused, unsigned=True)

    def queue_steps(
        self, steps: int, on_step: Callable[[int], None] | None = None,
        stop_reason: Callable[[], str | None] | None = None,
    ) -> _StepRequest:
        """Queue ``steps`` steps (checked with :meth:`check_steps`) for the server's loop; await
        the result's ``future``: None once all are done, else why they stopped. ``on_step`` is
        called with the number done after each step; ``stop_reason`` before each, and a reason
        it gives ends the request there (a cancelled action)."""
        queued = _StepRequest(steps, on_step=on_step, stop_reason=stop_reason)
        self.queue(queued)
        return queued

    def queue(self, request: StepRequest) -> None:
        """Queue ``request`` (its steps checked with :meth:`check_steps`) for the server's loop."""
        self._steps.add(request)

    def use_world(self, world: World, loaded: bool = True) -> None:
        """Step ``world`` from now on; steps queued for the world before are answered: stopped."""
        self.abort_queued_steps("the world was replaced")
        super().use_world(world, loaded)
        self._window_wall = None

    def reset(self, sim_time: bool = True, state: bool = True, spawned: bool = True) -> None:
        """Return the world to its loaded state: all of it (the default), or some of its parts:
        ``spawned`` deletes the models spawn requests added, ``state`` puts every model back at
        the pose it entered the world at, at rest, and ``sim_time`` sets sim time back to 0. Queued
        steps are answered: stopped. RequestError when no world is loaded."""
        self.check_world_loaded()
        self.abort_queued_steps("the world was reset")
        if sim_time and state and spawned:
            self._world.reset()
        else:
            if spawned:
                self._world.delete_spawned_models()
            if state:
                self._world.restore_models()
            if sim_time:
                self._world.time.reset()
        if sim_time:
            self._after_reset()
        self._window_wall = None

    async def _step_world(self, request: StepWorld.Request, response: StepWorld.Response) -> StepWorld.Response:
        def check() -> str:
            self.check_steps(request.steps)
            return ""

        what = f"step_world {request.steps}"
        if not answer(response, check, what).success:
            return response
        queued = self.queue_steps(request.steps)
        reason = await queued.future

        def report() -> str:
            if reason is not None:
                raise RequestError(f"stopped after {queued.done} of {queued.steps} step(s): {reason}")
            return f"stepped {queued.steps} time(s) to sim time {self._world.time.sim_time:.9f} s"

        return answer(response, report, what)

    @property
    def stepping(self) -> bool:
        """Whether step_world requests wait for their steps."""
        return self._steps.stepping

    def run_queued_steps(self, budget: float = STEP_SLICE) -> None:
        """Carry out queued step_world requests for about ``budget`` wall seconds."""
        self._steps.run(budget)

    def abort_queued_steps(self, reason: str) -> int:
        """Answer every queued step_world request with ``reason`` (the world was resumed, ...);
        the answers go out when callbacks are served next. Returns how many were answered."""
        return self._steps.abort(reason)

    def _reset_world(self, request: Empty.Request, response: Empty.Response) -> Empty.Response:
        def reset() -> str:
            self.reset()
            return "reset"

        outcome = answer(StepWorld.Response(), reset, "reset_world")
        if outcome.success:
            LOGGER.info("world reset to its loaded state")
        return response

    def publish_stats(self, now: float, overruns: int) -> None:
        """Publish the statistics of the window since the last call (``now``: monotonic seconds)."""
        time = self._world.time
        if self._window_wall is None:
            self._window_wall, self._window_sim_ns = now, time.time_ns
            return
        wall = now - self._window_wall
        sim = (time.time_ns - self._window_sim_ns) / NANOSECONDS_PER_SECOND
        stats = self.statistics
        self._stats_publisher.publish(
            WorldStats(
                sim_time=time.sim_time,
                real_time_factor=sim / wall if wall > 0 else 0.0,
                mean_step_time=stats.mean,
                max_step_time=stats.maximum,
                iterations=time.iterations,
                overruns=overruns,
                paused=time.paused,
            )
        )
        stats.reset()
        self._window_wall, self._window_sim_ns = now, time.time_ns
