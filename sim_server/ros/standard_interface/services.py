"""The standard simulation interface's services on the server node (``simulation_interfaces``).

They sit in the node's private namespace, as Gazebo's sit under ``/gzserver``
(``/sim_server/get_simulator_features`` and so on for the default node name): here the features,
the simulation state, stepping and reset; the entities' in :mod:`.entities`. Each goes through
the operations the Flatland-style services use (pause and resume, reset, the queued stepping of
``step_world``, spawning and deleting models), with the same checks; a request that cannot be
carried out answers with the standard's result code and a message, and the server runs on.
"""

from __future__ import annotations

import logging
from typing import Callable

from rclpy.action import ActionServer, CancelResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from simulation_interfaces.msg import Result, SimulationState as SimulationStateMsg, SimulatorFeatures
from simulation_interfaces.action import SimulateSteps
from simulation_interfaces.srv import (
    GetSimulationState, GetSimulatorFeatures, ResetSimulation, SetSimulationState, StepSimulation,
)

from sim_server.core.format.world_file import WorldSpec
from sim_server.core.world import World
from sim_server.ros.services import WorldServices
from sim_server.ros.standard_interface.entities import SPAWN_FORMAT, EntityServices
from sim_server.ros.standard_interface.entity_info import EntityInfos
from sim_server.ros.standard_interface.entity_queries import EntityQueries
from sim_server.ros.standard_interface.results import answer, refuse
from sim_server.ros.standard_interface.simulation_state import SimulationState, Step, state_of, transition
from sim_server.ros.standard_interface.spawnables import Spawnables
from sim_server.ros.standard_interface.worlds import Worlds
from sim_server.ros.world_control import WorldControl
from sim_server.ros.world_user import WorldUser

LOGGER = logging.getLogger("sim_server")

#: The standard's features this server supports (SimulatorFeatures constants).
FEATURES = (
    SimulatorFeatures.SPAWNING,
    SimulatorFeatures.DELETING,
    SimulatorFeatures.SPAWNING_RESOURCE_STRING,
    SimulatorFeatures.SPAWNING_ENTITIES,
    SimulatorFeatures.ENTITY_BOUNDS,
    SimulatorFeatures.ENTITY_BOUNDS_BOX,
    SimulatorFeatures.ENTITY_BOUNDS_CONVEX,
    SimulatorFeatures.ENTITY_CATEGORIES,
    SimulatorFeatures.ENTITY_TAGS,
    SimulatorFeatures.ENTITY_STATE_GETTING,
    SimulatorFeatures.ENTITY_STATE_SETTING,
    SimulatorFeatures.ENTITY_INFO_GETTING,
    SimulatorFeatures.ENTITY_INFO_SETTING,
    SimulatorFeatures.SPAWNABLES,
    SimulatorFeatures.WORLD_INFO_GETTING,
    SimulatorFeatures.WORLD_LOADING,
    SimulatorFeatures.WORLD_RESOURCE_STRING,
    SimulatorFeatures.WORLD_TAGS,
    SimulatorFeatures.WORLD_UNLOADING,
    SimulatorFeatures.NAMED_POSES,
    SimulatorFeatures.POSE_BOUNDS,
    SimulatorFeatures.AVAILABLE_WORLDS,
    SimulatorFeatures.SIMULATION_RESET,
    SimulatorFeatures.SIMULATION_RESET_TIME,
    SimulatorFeatures.SIMULATION_RESET_STATE,
    SimulatorFeatures.SIMULATION_RESET_SPAWNED,
    SimulatorFeatures.SIMULATION_STATE_GETTING,
    SimulatorFeatures.SIMULATION_STATE_SETTING,
    SimulatorFeatures.SIMULATION_STATE_PAUSE,
    SimulatorFeatures.STEP_SIMULATION_SINGLE,
    SimulatorFeatures.STEP_SIMULATION_MULTIPLE,
    SimulatorFeatures.STEP_SIMULATION_ACTION,
)
#: Why the steps of a cancelled SimulateSteps goal stopped.
CANCELLED = "the goal was cancelled"
#: The reset scopes' bits (ResetSimulation.Request); SCOPE_DEFAULT (0) and SCOPE_ALL (255) are all of them.
RESET_BITS = (
    ResetSimulation.Request.SCOPE_TIME | ResetSimulation.Request.SCOPE_STATE | ResetSimulation.Request.SCOPE_SPAWNED
)
CUSTOM_INFO = (
    "sim_server: a 2D simulator (Box2D) of Flatland-format worlds. Flatland-style services beside "
    "these: spawn_model, delete_model, move_model, pause, resume, step_world, reset_world."
)


class StandardInterface(WorldUser):
    """Creates the standard interface's services on ``node``.

    Args:
        node: the server node.
        world: its world.
        world_services: the Flatland-style services (pause and resume).
        world_control: stepping and reset.
        request_stop: ends the server's loop (QUITTING).
        load_world: replaces the world by the one a world spec describes (load_world).
        unload_world: replaces the world by an empty stand-in (unload_world).
        resource_paths: folders (separated by ':') searched for model and world files.
    """

    def __init__(
        self, node: Node, world: World, world_services: WorldServices, world_control: WorldControl,
        request_stop: Callable[[], None],
        load_world: Callable[[WorldSpec], World],
        unload_world: Callable[[], World],
        resource_paths: str = "",
    ) -> None:
        self._node = node
        self._world = world
        self._world_services = world_services
        self._world_control = world_control
        self._request_stop = request_stop
        #: world_services.pause_requests when the simulation was last stopped (paused and reset);
        #: None when it was not, or was paused or resumed since (see simulation_state).
        self._stopped_at: int | None = None
        self._services = [
            node.create_service(GetSimulatorFeatures, "~/get_simulator_features", self._get_features),
            node.create_service(GetSimulationState, "~/get_simulation_state", self._get_state),
            node.create_service(SetSimulationState, "~/set_simulation_state", self._set_state),
            # Its own group, as step_world's: the other callbacks are served while it waits.
            node.create_service(
                StepSimulation, "~/step_simulation", self._step, callback_group=MutuallyExclusiveCallbackGroup()
            ),
            node.create_service(ResetSimulation, "~/reset_simulation", self._reset),
        ]
        self.entities = EntityServices(node, world)
        self.infos = EntityInfos(node, world)
        self.queries = EntityQueries(node, world, self.infos, self.entities.entity_state)
        self.spawnables = Spawnables(node, world, resource_paths)
        self.worlds = Worlds(node, world, resource_paths, load_world, unload_world)
        # Its own group too: a goal awaiting its steps leaves the other callbacks free.
        self._simulate_steps: ActionServer | None = ActionServer(
            node, SimulateSteps, "~/simulate_steps", execute_callback=self._simulate,
            cancel_callback=lambda goal: CancelResponse.ACCEPT, callback_group=MutuallyExclusiveCallbackGroup(),
        )

    def close(self) -> None:
        """Destroy the simulate_steps action server: rclpy's ``Node.destroy_node`` leaves a node's
        action servers (and with them its DDS endpoints) to the garbage collector."""
        if self._simulate_steps is not None:
            self._simulate_steps.destroy()
            self._simulate_steps = None

    def use_world(self, world: World, loaded: bool = True) -> None:
        """Serve ``world`` from now on (load_world or unload_world replaced the world)."""
        super().use_world(world, loaded)
        self._stopped_at = self._world_services.pause_requests if loaded else None  # "left in a Stopped state"
        for part in self._parts:
            part.use_world(world, loaded)

    @property
    def names(self) -> list[str]:
        """Fully qualified names of the services offered."""
        return super().names + [name for part in self._parts for name in part.names]

    @property
    def _parts(self) -> tuple[WorldUser, ...]:
        """The entity and world services, each a part of their own."""
        return (self.entities, self.infos, self.queries, self.spawnables, self.worlds)

    @property
    def state(self) -> SimulationState:
        """The simulation's state now."""
        time = self._world.time
        stopped = self._stopped_at is not None and self._stopped_at == self._world_services.pause_requests
        return state_of(time.paused, time.iterations, self._world_loaded, stopped)

    def _get_features(self, request: GetSimulatorFeatures.Request, response: GetSimulatorFeatures.Response):
        response.features = SimulatorFeatures(
            features=sorted(FEATURES), spawn_formats=[SPAWN_FORMAT], custom_info=CUSTOM_INFO
        )
        return response

    def _get_state(self, request: GetSimulationState.Request, response: GetSimulationState.Response):
        response.state = SimulationStateMsg(state=int(self.state))
        response.result = Result(result=Result.RESULT_OK)
        return response

    def _set_state(self, request: SetSimulationState.Request, response: SetSimulationState.Response):
        target = request.state.state
        what = f"set_simulation_state {target}"
        plan = transition(self.state, target)
        if plan.refusal is not None:
            refuse(response.result, int(plan.refusal), plan.message, what)
            return response

        def carry_out() -> None:
            for step in plan.steps:
                if step == Step.PAUSE:  # when STOPPED, this makes it PAUSED
                    self._world_services.set_paused(True)
                elif step == Step.PLAY:
                    self._world_services.set_paused(False)
                elif step == Step.RESET:
                    self._world_control.reset()
                    self._stopped_at = self._world_services.pause_requests
                elif step == Step.QUIT:
                    LOGGER.info("the simulation is quitting (set_simulation_state QUITTING)")
                    self._request_stop()

        answer(response.result, carry_out, what)
        return response

    def _reset(self, request: ResetSimulation.Request, response: ResetSimulation.Response):
        scope = request.scope
        what = f"reset_simulation {scope}"
        if scope in (ResetSimulation.Request.SCOPE_DEFAULT, ResetSimulation.Request.SCOPE_ALL):
            scope = RESET_BITS
        if scope & ~RESET_BITS:
            message = (
                f"scope {scope}: bits {scope & ~RESET_BITS} are no scope the standard defines "
                "(SCOPE_TIME 1, SCOPE_STATE 2, SCOPE_SPAWNED 4, or SCOPE_DEFAULT 0 and SCOPE_ALL 255 for all)"
            )
            refuse(response.result, Result.RESULT_FEATURE_UNSUPPORTED, message, what)
            return response
        Scope = ResetSimulation.Request

        def reset() -> None:
            self._world_control.reset(
                sim_time=bool(scope & Scope.SCOPE_TIME), state=bool(scope & Scope.SCOPE_STATE),
                spawned=bool(scope & Scope.SCOPE_SPAWNED),
            )
            if scope & Scope.SCOPE_TIME and self._world.time.paused:  # paused and reset: STOPPED
                self._stopped_at = self._world_services.pause_requests

        answer(response.result, reset, what)
        return response

    async def _simulate(self, goal: ServerGoalHandle) -> SimulateSteps.Result:
        """SimulateSteps: the steps of step_simulation, with feedback after each step; a cancel
        request stops them before the next step."""
        steps = goal.request.steps
        what = f"simulate_steps {steps}"
        outcome = SimulateSteps.Result()
        if answer(outcome.result, lambda: self._world_control.check_steps(steps), what).result != Result.RESULT_OK:
            goal.abort()
            return outcome

        def feedback(done: int) -> None:
            goal.publish_feedback(SimulateSteps.Feedback(completed_steps=done, remaining_steps=steps - done))

        def cancelled() -> str | None:
            return CANCELLED if goal.is_cancel_requested else None

        queued = self._world_control.queue_steps(steps, on_step=feedback, stop_reason=cancelled)
        reason = await queued.future
        if reason is None:
            goal.succeed()
        else:
            message = f"stopped after {queued.done} of {steps} step(s): {reason}"
            refuse(outcome.result, Result.RESULT_OPERATION_FAILED, message, what)
            if reason == CANCELLED:
                goal.canceled()
            else:
                goal.abort()
        return outcome

    async def _step(self, request: StepSimulation.Request, response: StepSimulation.Response):
        what = f"step_simulation {request.steps}"
        answer(response.result, lambda: self._world_control.check_steps(request.steps), what)
        if response.result.result != Result.RESULT_OK:
            return response
        queued = self._world_control.queue_steps(request.steps)
        reason = await queued.future
        if reason is not None:
            message = f"stopped after {queued.done} of {queued.steps} step(s): {reason}"
            refuse(response.result, Result.RESULT_OPERATION_FAILED, message, what)
        return response
