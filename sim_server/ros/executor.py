"""A single-threaded executor whose wait set is built once, for nodes with thousands of entities.

rclpy's executors rebuild their wait set from every entity of every node on each poll, in
Python, and match ready entities with list look-ups: with a thousand robots (a thousand
``cmd_vel`` subscriptions and two thousand QoS event handlers) one poll takes most of a second.
:class:`CachedWaitSetExecutor` keeps the entities, their handles (held in use) and the wait set
between polls and rebuilds them only when a node's entities change; a poll then costs the C calls
that re-add the handles, the wait, and a dictionary look-up per ready entity.

Callbacks run exactly as under :class:`rclpy.executors.SingleThreadedExecutor` (the same
handler tasks, so coroutine callbacks and callback groups behave the same); only the waiting is
different:

* QoS event handlers (incompatible QoS, deadlines, liveliness: two per publisher and
  subscription by default) cost more in a wait than everything else together, and their news is
  never urgent: they are waited on at most every :data:`EVENT_POLL_PERIOD` seconds (an event
  stays pending until it is taken, so none is lost).
* Entities whose callback group cannot take them right now stay in the wait set and are skipped
  when ready. Entities destroyed by a callback served earlier in the same round are skipped too
  (their handles refuse to be used once destruction was requested, as under rclpy's executor).

It builds on internals of rclpy's executor (its handler making and taking methods, of Jazzy's
rclpy 7 and Kilted's 9). :func:`make_executor` checks for them by feature, the one place that
does, and falls back to rclpy's own SingleThreadedExecutor where they are not as this module uses
them (an older or a newer rclpy): slower polls with thousands of entities, the same callbacks.
"""

from __future__ import annotations

import contextlib
import inspect
import time
from typing import Any, Callable, Generator, Optional, Union

try:
    from rclpy.event_handler import EventHandler
except ImportError:  # rclpy before Iron (Humble's 3.x) names it QoSEventHandler
    from rclpy.qos_event import QoSEventHandler as EventHandler  # type: ignore[no-redef]
from rclpy.executors import ConditionReachedException, ExternalShutdownException, ShutdownException
from rclpy.executors import SingleThreadedExecutor, TimeoutException
from rclpy.exceptions import InvalidHandle
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.utilities import timeout_sec_to_nsec
from rclpy.waitable import NumberOfEntities

#: rclpy executor methods the cached executor calls, and the parameters of _make_handler it passes.
RCLPY_INTERNALS = (
    "_make_handler", "_take_timer", "_take_subscription", "_take_client", "_take_service",
    "_take_guard_condition", "_take_waitable", "can_execute", "_wait_for_ready_callbacks",
)
MAKE_HANDLER_PARAMETERS = ["entity", "node", "take_from_wait_list"]
#: The entity lists of a node, in the order they are kept.
_KINDS = ("subscriptions", "timers", "clients", "services", "guards", "waitables")
#: Wall seconds between waits that include the QoS event handlers.
EVENT_POLL_PERIOD = 2.0


class _Entities:
    """The entities of some nodes, their handles held in use, and one wait set for all of them."""

    def __init__(self, executor: "CachedWaitSetExecutor", nodes: list[Any]) -> None:
        self.nodes = list(nodes)
        self.snapshot = _snapshot(self.nodes)
        self._in_use = contextlib.ExitStack()
        self.subscriptions: dict[int, tuple[Any, Any]] = {}
        self.timers: dict[int, tuple[Any, Any]] = {}
        self.clients: dict[int, tuple[Any, Any]] = {}
        self.services: dict[int, tuple[Any, Any]] = {}
        self.node_guards: list[tuple[Any, Any]] = []
        #: Waitables that are waited on every time, and the QoS event handlers.
        self.waitables: list[tuple[Any, Any]] = []
        self.event_handlers: list[tuple[Any, Any]] = []
        self._handles: dict[str, list[Any]] = {"subscription": [], "timer": [], "client": [], "service": []}
        # Entities the waitables add to the wait set (the event handlers' events apart).
        extra = NumberOfEntities()
        event_handler_events = 0
        for node, lists in zip(self.nodes, self.snapshot):
            subscriptions, timers, clients, services, guards, waitables = lists
            for kind, entities, by_pointer in (
                ("subscription", subscriptions, self.subscriptions),
                ("timer", timers, self.timers),
                ("client", clients, self.clients),
                ("service", services, self.services),
            ):
                for entity in entities:
                    if self._hold(entity.handle):
                        by_pointer[entity.handle.pointer] = (entity, node)
                        self._handles[kind].append(entity.handle)
            self.node_guards += [(guard, node) for guard in guards if self._hold(guard.handle)]
            for waitable in waitables:
                if not self._hold(waitable):
                    continue
                counts = waitable.get_num_entities()
                if isinstance(waitable, EventHandler):
                    event_handler_events += counts.num_events
                    self.event_handlers.append((waitable, node))
                else:
                    extra += counts
                    self.waitables.append((waitable, node))
        context = executor._context  # noqa: SLF001 - the executor's own context
        self._in_use.enter_context(context.handle)
        sizes = (
            len(self._handles["subscription"]) + extra.num_subscriptions,
            len(self.node_guards) + 2 + extra.num_guard_conditions,  # + the executor's wake and sigint guards
            len(self._handles["timer"]) + extra.num_timers,
            len(self._handles["client"]) + extra.num_clients,
            len(self._handles["service"]) + extra.num_services,
        )
        self.wait_set = _rclpy.WaitSet(*sizes, extra.num_events, context.handle)
        self.wait_set_with_events = _rclpy.WaitSet(*sizes, extra.num_events + event_handler_events, context.handle)

    def _hold(self, resource: Any) -> bool:
        """Hold a handle (or waitable) in use until :meth:`release`; False if it is being destroyed."""
        try:
            self._in_use.enter_context(resource)
        except InvalidHandle:
            return False
        return True

    def still_current(self, nodes: list[Any]) -> bool:
        """Whether the nodes and their entities are the ones this wait set was built for."""
        return nodes == self.nodes and _snapshot(nodes) == self.snapshot

    def fill(self, executor_guards: list[Any], with_events: bool) -> Any:
        """A wait set cleared and given every entity again (rcl_wait empties the slots that are
        not ready), with or without the QoS event handlers."""
        wait_set = self.wait_set_with_events if with_events else self.wait_set
        wait_set.clear_entities()
        for handle in self._handles["subscription"]:
            wait_set.add_subscription(handle)
        for handle in self._handles["client"]:
            wait_set.add_client(handle)
        for handle in self._handles["service"]:
            wait_set.add_service(handle)
        for handle in self._handles["timer"]:
            wait_set.add_timer(handle)
        for guard, _ in self.node_guards:
            if guard._executor_triggered:  # noqa: SLF001 - triggered but not handled: trigger again
                guard.trigger()
            wait_set.add_guard_condition(guard.handle)
        for guard in executor_guards:
            wait_set.add_guard_condition(guard.handle)
        for waitable, _ in self.waitables:
            waitable.add_to_wait_set(wait_set)
        if with_events:
            for handler, _ in self.event_handlers:
                handler.add_to_wait_set(wait_set)
        return wait_set

    def ready_waitables(self, wait_set: Any, with_events: bool) -> list[tuple[Any, Any]]:
        """The waitables (and event handlers, when waited on) with work after a wait."""
        ready = [(w, n) for w, n in self.waitables if w.is_ready(wait_set)]
        if with_events:
            ready += [(h, n) for h, n in self.event_handlers if h.is_ready(wait_set)]
        return ready

    def release(self) -> None:
        """Stop holding the handles (entities destroyed meanwhile are destroyed now)."""
        self._in_use.close()


def _timer_ready(timer: Any) -> bool:
    try:
        with timer.handle:
            return timer.handle.is_timer_ready()
    except InvalidHandle:  # destroyed by a callback served earlier in this round
        return False


def _snapshot(nodes: list[Any]) -> list[tuple[list[Any], ...]]:
    return [tuple(list(getattr(node, kind)) for kind in _KINDS) for node in nodes]


class CachedWaitSetExecutor(SingleThreadedExecutor):
    """:class:`SingleThreadedExecutor` with a wait set kept between polls (see the module doc)."""

    def __init__(self, *, context: Any = None) -> None:
        super().__init__(context=context)
        self._entities: _Entities | None = None
        self._next_event_poll = 0.0

    def _current_entities(self, nodes: list[Any]) -> _Entities:
        entities = self._entities
        if entities is None or not entities.still_current(nodes):
            if entities is not None:
                entities.release()
            entities = self._entities = _Entities(self, nodes)
        return entities

    def shutdown(self, timeout_sec: Optional[float] = None) -> bool:
        """Release the held handles, then shut down as every executor does."""
        if self._entities is not None:
            self._entities.release()
            self._entities = None
        return super().shutdown(timeout_sec)

    def remove_node(self, node: Any) -> None:
        """Stop serving ``node`` (its handles are released at once)."""
        if self._entities is not None:
            self._entities.release()
            self._entities = None
        super().remove_node(node)

    def _wait_for_ready_callbacks(
        self,
        timeout_sec: Optional[Union[float, Any]] = None,
        nodes: Optional[list[Any]] = None,
        condition: Callable[[], bool] = lambda: False,
    ) -> Generator[tuple[Any, Any, Any], None, None]:
        timeout = getattr(timeout_sec, "timeout", timeout_sec)
        timeout_nsec = timeout_sec_to_nsec(timeout)
        deadline = None if timeout_nsec < 0 else time.monotonic_ns() + timeout_nsec
        yielded_work = False
        while not yielded_work and not self._is_shutdown and not condition():
            nodes_to_use = list(nodes) if nodes is not None else self.get_nodes()
            with self._tasks_lock:
                tasks = list(self._tasks)
            if tasks:
                for task, entity, node in tasks:
                    if not task.executing() and not task.done() and (node is None or node in nodes_to_use):
                        yielded_work = True
                        yield task, entity, node
                with self._tasks_lock:
                    self._tasks = [t for t in self._tasks if not t[0].done() and not t[0].cancelled()]
            entities = self._current_entities(nodes_to_use)
            executor_guards = [guard for guard in (self._guard, self._sigint_gc) if guard is not None]
            with_events = time.monotonic() >= self._next_event_poll
            if with_events:
                self._next_event_poll = time.monotonic() + EVENT_POLL_PERIOD
            wait_set = entities.fill(executor_guards, with_events)
            wait_ns = -1 if deadline is None else max(deadline - time.monotonic_ns(), 0)
            if not with_events and wait_ns != 0:
                # A blocking wait without the event handlers waits no longer than their next turn.
                until_events = max(int((self._next_event_poll - time.monotonic()) * 1e9), 0)
                wait_ns = until_events if wait_ns < 0 else min(wait_ns, until_events)
            wait_set.wait(0 if yielded_work else wait_ns)
            if self._is_shutdown:
                raise ShutdownException()
            if not self._context.ok():
                raise ExternalShutdownException()
            guards_ready = set(wait_set.get_ready_entities("guard_condition"))
            for guard, _ in entities.node_guards:
                if guard.handle.pointer in guards_ready:
                    guard._executor_triggered = True  # noqa: SLF001 - as rclpy's executor marks them
            ready_waitables = entities.ready_waitables(wait_set, with_events)
            for pointers, by_pointer, take in (
                (wait_set.get_ready_entities("timer"), entities.timers, self._take_timer),
                (wait_set.get_ready_entities("subscription"), entities.subscriptions, self._take_subscription),
                (wait_set.get_ready_entities("client"), entities.clients, self._take_client),
                (wait_set.get_ready_entities("service"), entities.services, self._take_service),
            ):
                for pointer in pointers:
                    found = by_pointer.get(pointer)
                    if found is None:
                        continue
                    entity, node = found
                    if take == self._take_timer and not _timer_ready(entity):
                        continue  # a cancelled timer (rcl reports it ready), or one being destroyed
                    if self.can_execute(entity):
                        yielded_work = True
                        yield self._make_handler(entity, node, take), entity, node
            for guard, node in entities.node_guards:
                if guard._executor_triggered and self.can_execute(guard):  # noqa: SLF001
                    yielded_work = True
                    yield self._make_handler(guard, node, self._take_guard_condition), guard, node
            for waitable, node in ready_waitables:
                if waitable.callback_group.can_execute(waitable):
                    yielded_work = True
                    yield self._make_handler(waitable, node, self._take_waitable), waitable, node
            if not yielded_work and deadline is not None and time.monotonic_ns() >= deadline:
                raise TimeoutException()
        if self._is_shutdown:
            raise ShutdownException()
        if condition():
            raise ConditionReachedException()


def cached_wait_set_problem(executor_type: type = SingleThreadedExecutor) -> str | None:
    """Why :class:`CachedWaitSetExecutor` cannot run on the installed rclpy (None when it can):
    an executor method it calls is missing, or ``_make_handler`` takes other parameters."""
    missing = [name for name in RCLPY_INTERNALS if not callable(getattr(executor_type, name, None))]
    if missing:
        return f"rclpy's executor has no {', '.join(missing)}"
    parameters = list(inspect.signature(executor_type._make_handler).parameters)[1:]
    if parameters != MAKE_HANDLER_PARAMETERS:
        return f"rclpy's Executor._make_handler takes {parameters}, not {MAKE_HANDLER_PARAMETERS}"
    return None


def make_executor(context: Any = None) -> tuple[SingleThreadedExecutor, str | None]:
    """The server's executor: a :class:`CachedWaitSetExecutor`, or rclpy's SingleThreadedExecutor
    where the installed rclpy lacks what the cached one builds on; with the reason for the latter."""
    problem = cached_wait_set_problem()
    if problem is not None:
        return SingleThreadedExecutor(context=context), problem
    return CachedWaitSetExecutor(context=context), None
