"""The simulation server node: one thread stepping the world, publishing /clock and serving ROS.

Each tick of :meth:`SimServerNode.run` runs the world's before-step hooks, the Box2D step,
advances sim time by ``step_size``, publishes ``/clock``, runs the after-step hooks and then
serves pending ROS callbacks (services, subscriptions) until the tick's wall-clock deadline.
At ``update_rate`` 0 it steps as fast as it can and serves callbacks every
:data:`FAST_MODE_SERVICE_PERIOD` seconds. While paused, sim time and /clock stop, services
still answer and world plugins' phase hooks run with a step size of 0.

Serving callbacks costs rclpy time in proportion to the number of subscriptions and services
(a world of hundreds of robots has hundreds of cmd_vel subscriptions). The loop measures that
cost and serves at most as often as keeps it under :data:`MAX_SERVICE_SHARE` of the wall time;
between services a paced loop sleeps until its deadline.
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import InvalidParameterException

from rclpy.executors import Executor, ExternalShutdownException, ShutdownException
from rclpy.executors import TimeoutException
from rclpy.node import Node
from rosgraph_msgs.msg import Clock

from sim_server.core.errors import ConfigError
from sim_server.core.format.entity_names import SERVER_NODE_NAME
from sim_server.core.format.world_file import DEFAULT_POSITION_ITERATIONS, DEFAULT_VELOCITY_ITERATIONS, WorldSpec
from sim_server.core.format.yaml_preprocessor import YamlPreprocessor
from sim_server.core.timing.step_timing import Pacer, StepStatistics
from sim_server.core.timing.timekeeper import NANOSECONDS_PER_SECOND, TimeKeeper
from sim_server.core.world import World
from sim_server.ros import logging_bridge
from sim_server.core.format.ros2_cdr import clock_cdr
from sim_server.ros.executor import make_executor
from sim_server.ros.levels import LevelsInterface
from sim_server.ros.parameters import ServerParameters, declare_server_parameters
from sim_server.ros.services import WorldServices
from sim_server.ros.standard_interface.compatibility import REMEDY, interface_problem
from sim_server.ros.pedestrians import PedestrianPublisher
from sim_server.ros.social_metrics import SocialMetricsPublisher
from sim_server.ros.state_datapacks import StateDatapacks
from sim_server.ros.subscriber_check import SubscriberCheck, refresh_all
from sim_server.ros.visualization import DebugVisualization
from sim_server.ros.world_control import STATS_PUB_PERIOD, WorldControl

if TYPE_CHECKING:
    from sim_server.ros.standard_interface.services import StandardInterface

#: Wall seconds between the log lines with sim time, real-time factor and step statistics.
STATS_LOG_PERIOD = 5.0
#: Wall seconds between callback servicing when running as fast as possible (update_rate 0).
FAST_MODE_SERVICE_PERIOD = 0.005
#: Largest share of wall time spent polling rclpy for callbacks (outside of paused ticks).
MAX_SERVICE_SHARE = 0.1
#: Wall seconds the loop waits for callbacks per tick while paused.
PAUSED_TICK = 0.02
#: Wall seconds the stopping server keeps serving, to send the answers of aborted step_world requests.
SHUTDOWN_ANSWER_TIME = 0.2
#: The file name (never read) of the empty stand-in world while none is loaded.
NO_WORLD_FILE = "no_world"
#: Most callbacks served in one go, so a flood of requests cannot stall the simulation.
MAX_CALLBACKS_PER_TICK = 100


def _describe_entity(entity: Any) -> str:
    """What a callback belongs to, for messages: ``subscription /r1/cmd_vel`` and the like."""
    for kind, attribute in (("subscription", "topic_name"), ("service", "srv_name"), ("client", "srv_name")):
        name = getattr(entity, attribute, None)
        if name is not None and kind in type(entity).__name__.lower():
            return f"{kind} {name}"
    return type(entity).__name__ if entity is not None else "unknown"


class LiveViewPart(Protocol):
    """What the node does with its live view (a :class:`sim_server.live.LiveView`, made by the
    ``live_view`` it is given): serve its clients between steps, follow a world loaded anew,
    close it."""

    def serve(self) -> None: ...

    def use_world(self, world: World) -> None: ...

    def close(self) -> None: ...


class SimServerNode(Node):
    """The ``sim_server`` node: loads the world named by ``world_path`` and runs it; with
    ``live_view`` (``sim_server.node_view.live_view_of``: ``python -m sim_server`` gives it) the
    live view its foxglove parameters ask for.

    Raises:
        ConfigError: a parameter or the world is invalid (the message is one line).
    """

    def __init__(
        self, node_name: str = SERVER_NODE_NAME, live_view: "Callable[[SimServerNode], LiveViewPart | None] | None" = None,
        **node_kwargs,
    ) -> None:
        super().__init__(node_name, **node_kwargs)
        self.visualization: DebugVisualization | None = None
        self.world: World | None = None
        self.live_view: LiveViewPart | None = None  # when the foxglove parameters ask for one
        self._stop_requested = False
        self._log_handler = logging_bridge.attach(self)
        try:
            self._make(live_view)
        except BaseException:  # a world that does not load, a stop signal meanwhile: nothing is left half made
            self.destroy_node()
            raise

    def _make(self, live_view: "Callable[[SimServerNode], LiveViewPart | None] | None") -> None:
        """The world, its publishers, services and live view (``__init__``'s caller releases
        what was made if this raises)."""
        self.params: ServerParameters = declare_server_parameters(self)
        self.world = World.from_file(
            self.params.world_path,
            self.params.step_size,
            YamlPreprocessor(self.lookup_parameter),
            ros_node=self,
            seed=self.params.seed,
            enable_levels=self.params.enable_levels,
        )
        self._clock_publisher = self.create_publisher(Clock, "/clock", 10)
        self._clock_listened = SubscriberCheck(self._clock_publisher)
        #: Wall seconds between /clock messages at least (0: every step), the earliest time of
        #: the next, and whether a step's time is still unpublished.
        self._clock_period = 1.0 / self.params.clock_pub_rate if self.params.clock_pub_rate else 0.0
        self._next_clock = 0.0
        self._clock_pending = False
        self._clock_wall: Callable[[], float] = time.monotonic  # the throttle's clock (tests replace it)
        self.world.after_step_hooks.insert(0, self._publish_clock)
        self.world.time.paused = self.params.start_paused
        self.live_view = live_view(self) if live_view is not None else self._no_live_view()
        self.world_services = WorldServices(self, self.world, self._on_pause_changed)
        self.world_control = WorldControl(self, self.world, self.step_once, self._after_reset)
        self.standard_interface = self._standard_interface()
        self.state_datapacks = StateDatapacks(self, self.world, self.params.state_pub_rate)
        self.pedestrians = PedestrianPublisher(self, self.world)
        self.social_metrics = SocialMetricsPublisher(self, self.world)
        self.levels = LevelsInterface(self, self.world)
        self.visualization = (
            DebugVisualization(
                self, self.world, lambda: self.world.time.time_ns, line_width=self.params.marker_line_width
            )
            if self.params.show_viz
            else None
        )
        self.pacer = Pacer(self.params.update_rate)
        self.step_stats = StepStatistics()
        self.real_time_factor = 0.0
        #: Measured wall seconds of one poll of rclpy for callbacks (moving average).
        self._poll_cost = 0.0
        self._window_wall = time.monotonic()
        self._window_sim_ns = 0

    def _standard_interface(self) -> "StandardInterface | None":
        """The standard simulation interface's services, or None (with a warning saying why and
        what to do) where the installed simulation_interfaces cannot serve them."""
        problem = interface_problem()
        if problem is not None:
            self.get_logger().warning(f"the standard simulation interface is off: {problem}; {REMEDY}")
            return None
        from sim_server.ros.standard_interface.services import StandardInterface

        return StandardInterface(
            self, self.world, self.world_services, self.world_control, self.request_stop, self.load_world,
            self.unload_world, self.params.resource_paths,
        )

    def lookup_parameter(self, name: str) -> tuple[bool, Any]:
        """``param()`` of the YAML preprocessor: this node's parameter ``name``.

        ``/robot/speed`` and ``robot/speed`` name the parameter ``robot.speed``. A parameter not
        yet declared is declared (dynamically typed), which picks up a ``-p`` override.
        """
        parameter_name = name.strip("/").replace("/", ".")
        if not parameter_name:
            return False, None
        if not self.has_parameter(parameter_name):
            try:
                self.declare_parameter(
                    parameter_name,
                    descriptor=ParameterDescriptor(
                        description="Read by a world, model or map file through param().", dynamic_typing=True
                    ),
                )
            except (InvalidParameterException, ValueError, TypeError):
                return False, None
        value = self.get_parameter(parameter_name).value
        return value is not None, value

    # ------------------------------------------------------------------ per-step work
    def _publish_clock(self, timekeeper: TimeKeeper) -> None:
        """After each step: publish the sim time on /clock, at most ``clock_pub_rate`` times a
        wall second (a step in between leaves it pending for :meth:`_flush_clock`)."""
        if not self._clock_listened():
            return  # nobody follows sim time yet: a subscriber gets the next step's
        if self._clock_period:
            now = self._clock_wall()
            if now < self._next_clock:
                self._clock_pending = True
                return
            self._next_clock = now + self._clock_period
        self._clock_pending = False
        self._clock_publisher.publish(clock_cdr(timekeeper.time_ns))

    def _flush_clock(self) -> None:
        """Publish the latest sim time if a step left it unpublished (before services answer,
        and when the world pauses or stops, followers must see where it is)."""
        if self._clock_pending:
            self._clock_pending = False
            self._next_clock = self._clock_wall() + self._clock_period
            self._clock_publisher.publish(clock_cdr(self.world.time.time_ns))

    def _on_pause_changed(self, paused: bool) -> None:
        self.get_logger().info("simulation paused" if paused else "simulation resumed")
        if not paused:
            self.pacer.restart()

    @property
    def paused(self) -> bool:
        """Whether sim time is stopped."""
        return self.world.time.paused

    def step_once(self) -> None:
        """Advance the world one step and record how long it took."""
        started = time.perf_counter()
        self.world.step()
        duration = time.perf_counter() - started
        self.step_stats.record(duration)
        self.world_control.statistics.record(duration)

    def _step_until(self, until: float) -> None:
        """Step back to back until the monotonic time ``until`` (at least once) or a stop request,
        recording the steps' durations once for the whole burst (unpaced runs: the loop's own
        checks then cost once per burst, not once per step)."""
        step = self.world.step
        clock = time.monotonic
        count, total, longest = 0, 0.0, 0.0
        started = clock()
        while True:
            step()
            now = clock()
            duration = now - started
            count += 1
            total += duration
            if duration > longest:
                longest = duration
            if now >= until or self._stop_requested:
                break
            started = now
        self.step_stats.add(count, total, longest)
        self.world_control.statistics.add(count, total, longest)

    def load_world(self, spec: WorldSpec) -> World:
        """Replace the world by the one ``spec`` describes (with the node's step size, seed and
        levels setting), STOPPED: paused at sim time 0. The services stay and act on the new
        world; the old world's models, plugins (their topics) and markers go; steps queued for
        it are answered: stopped. The ``world_path`` parameter keeps naming the first world.

        Raises:
            ConfigError: the new world cannot be built (its files); the old world stays as it was.
        """
        params = self.params
        new_world = World.from_spec(
            spec, params.step_size, self.world.preprocessor, ros_node=self, seed=params.seed,
            enable_levels=params.enable_levels,
        )
        self._replace_world(new_world, loaded=True)
        self.get_logger().info(f"loaded world {spec.path} ({len(new_world.models)} models), stopped")
        return new_world

    def unload_world(self) -> World:
        """Replace the world by an empty stand-in (no layers, models or plugins; paused) until
        :meth:`load_world`: nothing can be spawned, stepped or played meanwhile. Its path is in
        the unloaded world's folder, where relative paths and searches keep starting."""
        folder = Path(self.world.spec.path).parent
        empty = WorldSpec(folder / NO_WORLD_FILE, DEFAULT_VELOCITY_ITERATIONS, DEFAULT_POSITION_ITERATIONS, (), (), ())
        stand_in = World.from_spec(empty, self.params.step_size, self.world.preprocessor, ros_node=self)
        self._replace_world(stand_in, loaded=False)
        self.get_logger().info("unloaded the world: none is loaded")
        return stand_in

    def _replace_world(self, new_world: World, loaded: bool) -> None:
        if self.visualization is not None:
            self.visualization.close()
            self.visualization = None
        self.levels.close()
        self.world.close()
        self.world = new_world
        new_world.after_step_hooks.insert(0, self._publish_clock)
        if self.live_view is not None:
            self.live_view.use_world(new_world)
        for part in (self.world_services, self.world_control, self.state_datapacks, self.levels, self.pedestrians,
                     self.social_metrics):
            part.use_world(new_world, loaded)
        self.world_services.set_paused(True)
        if self.standard_interface is not None:  # after the pause: the loaded world is STOPPED
            self.standard_interface.use_world(new_world, loaded)
        if self.params.show_viz:
            self.visualization = DebugVisualization(
                self, new_world, lambda: self.world.time.time_ns, line_width=self.params.marker_line_width
            )
        self._after_reset()

    def _after_reset(self) -> None:
        self._publish_clock(self.world.time)  # tell sim-time followers that time went back to 0
        self.pacer.restart()
        # The real-time factor's window starts again: sim time went back.
        self._window_wall, self._window_sim_ns = time.monotonic(), self.world.time.time_ns

    @property
    def service_names(self) -> list[str]:
        """Fully qualified names of every service the node offers."""
        return (
            self.world_services.names + self.world_control.names + self.state_datapacks.names + self.levels.names
            + (self.standard_interface.names if self.standard_interface is not None else [])
        )

    # ------------------------------------------------------------------ the loop
    def request_stop(self) -> None:
        """Make :meth:`run` return at the end of its current tick (safe from a signal handler)."""
        self._stop_requested = True

    def run(self, executor: Executor | None = None, stop: Callable[[], bool] | None = None) -> None:
        """Step and serve until the context shuts down or ``stop()`` returns true.

        Args:
            executor: the executor to serve callbacks with (if None, a private
                :class:`~sim_server.ros.executor.CachedWaitSetExecutor`, whose polls stay cheap with thousands of
                subscriptions, or rclpy's SingleThreadedExecutor where the installed rclpy
                lacks what it builds on: :func:`~sim_server.ros.executor.make_executor`); other nodes added to it are
                served by the same thread.
            stop: polled once per tick (at ``update_rate`` 0 a tick is a burst of steps up to
                the next serving of callbacks, :data:`FAST_MODE_SERVICE_PERIOD` seconds or more).
        """
        own_executor = executor is None
        if executor is None:
            executor, problem = make_executor(context=self.context)
            if problem is not None:
                self.get_logger().warning(f"serving callbacks with rclpy's SingleThreadedExecutor: {problem}")
            executor.add_node(self)
        viz_period = 1.0 / self.params.viz_pub_rate
        now = time.monotonic()
        next_viz = now
        next_stats = now + STATS_LOG_PERIOD
        next_stats_message = now
        next_service = now
        self._window_wall, self._window_sim_ns = now, self.world.time.time_ns
        self.pacer.restart()
        try:
            running = self.context.ok()
            while running and not self._stop_requested and not (stop is not None and stop()):
                if self.live_view is not None:
                    self.live_view.serve()  # what its clients asked for, between steps
                if self.paused:
                    if self.world_control.stepping:
                        self.world_control.run_queued_steps()
                    else:
                        self.world.idle()
                else:
                    if self.world_control.stepping:
                        self.world_control.abort_queued_steps("the world was resumed")
                    if self.pacer.paced:
                        self.step_once()
                    else:
                        due = min(next_stats, next_stats_message, next_service)
                        self._step_until(due if self.visualization is None else min(due, next_viz))
                now = time.monotonic()
                if self.visualization is not None and now >= next_viz:
                    self.visualization.publish_models()
                    next_viz = now + viz_period
                if now >= next_stats:
                    self.log_statistics(now)
                    self.forget_destroyed_entities()
                    next_stats = now + STATS_LOG_PERIOD
                if now >= next_stats_message:
                    self.world_control.publish_stats(now, self.pacer.overruns)
                    next_stats_message = now + STATS_PUB_PERIOD
                if self.paused:
                    # While step_world requests run, serve what is ready and go back to stepping.
                    self._serve_until(executor, now if self.world_control.stepping else now + PAUSED_TICK)
                    running = self.context.ok()
                elif now >= next_service:
                    deadline = self.pacer.next_deadline() if self.pacer.paced else now
                    self._serve_until(executor, deadline)
                    next_service = now + max(FAST_MODE_SERVICE_PERIOD, self._poll_cost / MAX_SERVICE_SHARE)
                    running = self.context.ok()  # a shutdown is noticed when callbacks are served
                elif self.pacer.paced:
                    pause = self.pacer.next_deadline() - time.monotonic()
                    if pause > 0.0:
                        time.sleep(pause)
        except (ExternalShutdownException, ShutdownException):
            pass
        finally:
            self._flush_clock()
            if self._stop_requested and self.world_control.abort_queued_steps("the server is shutting down"):
                # Send those answers before the node goes.
                self._serve_until(executor, time.monotonic() + SHUTDOWN_ANSWER_TIME)
            if own_executor:
                executor.remove_node(self)
                executor.shutdown(timeout_sec=0)

    def _serve_until(self, executor: Executor, deadline: float) -> None:
        """Run ready callbacks, waiting for more until ``deadline`` (monotonic seconds).

        The first poll does not wait; its duration updates the measured cost of polling.
        """
        self._flush_clock()
        served_late = 0
        first = True
        served: set[Any] = set()  # the handlers run, kept so that identities stay unique
        while True:
            remaining = deadline - time.monotonic()
            started = time.perf_counter()
            try:
                handler, entity, _ = executor.wait_for_ready_callbacks(timeout_sec=0.0 if first else max(remaining, 0.0))
            except TimeoutException:
                handler = None
            if first:
                self._poll_cost = 0.8 * self._poll_cost + 0.2 * (time.perf_counter() - started)
            if handler is None:
                if first and remaining > 0.0:
                    first = False
                    continue  # nothing ready yet: wait for the rest of the tick
                return
            first = False
            # rclpy offers a coroutine callback that awaits (a queued step_world) again in every
            # round of waiting: once it comes back late, nothing new is ready.
            resumed = handler in served
            served.add(handler)
            refresh_all()  # a callback (step_world after subscribing, say): ask for subscribers again
            try:
                handler()
                exception = handler.exception()
            except SystemExit as exc:  # rclpy's tasks catch Exception only
                exception = exc
            if exception is not None:
                if isinstance(exception, (ExternalShutdownException, ShutdownException)):
                    raise exception
                # A plugin's (or any) callback that raises must not take the server down.
                self.get_logger().error(
                    f"a ROS callback ({_describe_entity(entity)}) raised; the simulation goes on: "
                    f"{type(exception).__name__}: {exception}\n"
                    + "".join(traceback.format_exception(type(exception), exception, exception.__traceback__))
                )
            if resumed and remaining <= 0.0:
                return
            if remaining <= 0.0:
                served_late += 1
                if served_late >= MAX_CALLBACKS_PER_TICK:
                    return

    def forget_destroyed_entities(self) -> None:
        """Drop the dead weak references that rclpy's callback group keeps of every destroyed
        subscription, publisher and timer (ros2/rclpy#1356: about 1 KiB per spawn/delete)."""
        group = self.default_callback_group
        group.entities = {reference for reference in group.entities if reference() is not None}

    def log_statistics(self, now: float | None = None) -> None:
        """Log sim time, real-time factor and step-time statistics of the window just ended."""
        now = time.monotonic() if now is None else now
        wall = now - self._window_wall
        sim_ns = self.world.time.time_ns - self._window_sim_ns
        self.real_time_factor = (sim_ns / NANOSECONDS_PER_SECOND) / wall if wall > 0 else 0.0
        stats = self.step_stats
        self.get_logger().info(
            f"sim time {self.world.time.sim_time:.2f} s | real-time factor {self.real_time_factor:.2f} | "
            f"{stats.count} steps, step time mean {stats.mean * 1e3:.3f} ms, max {stats.maximum * 1e3:.3f} ms | "
            f"overruns {self.pacer.overruns}" + (" | paused" if self.paused else "")
        )
        stats.reset()
        self._window_wall, self._window_sim_ns = now, self.world.time.time_ns

    def _no_live_view(self) -> None:
        """None, when the foxglove parameters ask for no live view.

        Raises:
            ConfigError: they ask for one, and the node was made without a way to make it.
        """
        if self.params.foxglove or self.params.foxglove_record:
            raise ConfigError(
                "live view (parameters foxglove, foxglove_record): this server node was made without one "
                "(python -m sim_server has it: sim_server.node_view.live_view_of)"
            )

    def destroy_node(self) -> None:
        """Release markers, the world and the log bridge, then the node."""
        if getattr(self, "live_view", None) is not None:
            self.live_view.close()
            self.live_view = None
        if self.visualization is not None:
            self.visualization.close()
            self.visualization = None
        if getattr(self, "standard_interface", None) is not None:
            self.standard_interface.close()
        if getattr(self, "levels", None) is not None:
            self.levels.close()
        if self.world is not None:
            self.world.close()
            self.world = None
        if self._log_handler is not None:
            logging_bridge.detach(self._log_handler)
            self._log_handler = None
        super().destroy_node()
