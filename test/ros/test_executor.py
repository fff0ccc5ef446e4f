"""The cached-wait-set executor serves every kind of callback as rclpy's single-threaded one does."""

from __future__ import annotations

import time
from typing import Callable

from geometry_msgs.msg import Twist, Vector3
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_srvs.srv import Trigger

from sim_server.ros.executor import CachedWaitSetExecutor
from test.ros.conftest import WAIT_LIMIT


def twist(speed: float) -> Twist:
    return Twist(linear=Vector3(x=speed))


def spin_until(executor: CachedWaitSetExecutor, condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT_LIMIT
    while not condition() and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    return condition()


def test_subscriptions_services_timers_and_changes(ros_context) -> None:
    node = Node("executor_test", context=ros_context)
    executor = CachedWaitSetExecutor(context=ros_context)
    executor.add_node(node)
    try:
        received: dict[int, list[float]] = {}
        subscriptions = [
            node.create_subscription(Twist, f"robot{i}/cmd_vel", lambda m, i=i: received.setdefault(i, []).append(m.linear.x), 10)
            for i in range(50)
        ]
        publishers = {i: node.create_publisher(Twist, f"robot{i}/cmd_vel", 10) for i in (3, 49)}
        spin_until(executor, lambda: all(p.get_subscription_count() for p in publishers.values()))
        for i, publisher in publishers.items():
            publisher.publish(twist(float(i)))
        assert spin_until(executor, lambda: received.get(3) == [3.0] and received.get(49) == [49.0])

        # Entities made after the wait set was built are served; destroyed ones are not.
        late: list[float] = []
        node.create_subscription(Twist, "late/cmd_vel", lambda m: late.append(m.linear.x), 10)
        late_publisher = node.create_publisher(Twist, "late/cmd_vel", 10)
        spin_until(executor, lambda: late_publisher.get_subscription_count() > 0)
        node.destroy_subscription(subscriptions[3])
        publishers[3].publish(Twist())
        late_publisher.publish(twist(7.0))
        assert spin_until(executor, lambda: late == [7.0])
        executor.spin_once(timeout_sec=0.1)
        assert received[3] == [3.0]

        ticks: list[int] = []
        timer = node.create_timer(0.01, lambda: ticks.append(1))
        assert spin_until(executor, lambda: len(ticks) >= 3)
        node.destroy_timer(timer)

        service = node.create_service(Trigger, "ask", lambda request, response: setattr(response, "message", "answered") or response)
        client = node.create_client(Trigger, "ask")
        assert spin_until(executor, client.service_is_ready)
        future = client.call_async(Trigger.Request())
        assert spin_until(executor, future.done)
        assert future.result().message == "answered"
        node.destroy_client(client)
        node.destroy_service(service)

        async_calls: list[float] = []

        async def on_message(message: Twist) -> None:
            async_calls.append(message.linear.x)

        node.create_subscription(Twist, "async/cmd_vel", on_message, 10)
        async_publisher = node.create_publisher(Twist, "async/cmd_vel", 10)
        spin_until(executor, lambda: async_publisher.get_subscription_count() > 0)
        async_publisher.publish(twist(2.5))
        assert spin_until(executor, lambda: async_calls == [2.5])

        started = time.monotonic()
        executor.spin_once(timeout_sec=0.0)  # nothing ready: returns without waiting
        assert time.monotonic() - started < WAIT_LIMIT
    finally:
        executor.shutdown(timeout_sec=0)
        node.destroy_node()


def test_qos_events_are_delivered(ros_context) -> None:
    """Event handlers are waited on less often, but their events arrive."""
    node = Node("executor_events_test", context=ros_context)
    executor = CachedWaitSetExecutor(context=ros_context)
    executor.add_node(node)
    try:
        events = []
        node.create_subscription(
            Twist, "strict", lambda m: None, QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE),
            event_callbacks=SubscriptionEventCallbacks(incompatible_qos=events.append),
        )
        node.create_publisher(Twist, "strict", QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
        assert spin_until(executor, lambda: len(events) > 0)
    finally:
        executor.shutdown(timeout_sec=0)
        node.destroy_node()


def test_the_installed_rclpy_has_what_the_cached_executor_builds_on(ros_context) -> None:
    from sim_server.ros import executor

    assert executor.cached_wait_set_problem() is None
    made, problem = executor.make_executor(context=ros_context)
    assert isinstance(made, CachedWaitSetExecutor) and problem is None
    made.shutdown(timeout_sec=0)


def test_an_rclpy_without_it_gets_its_own_executor(ros_context, monkeypatch) -> None:
    """By feature: a missing method or another _make_handler is named, and the server serves its
    callbacks with rclpy's SingleThreadedExecutor instead (an older or newer rclpy)."""
    from rclpy.executors import SingleThreadedExecutor

    from sim_server.ros import executor, server_node
    from test.conftest import LOAD_WORLD_TESTS
    from test.ros.conftest import make_server

    class Without(SingleThreadedExecutor):
        _take_waitable = None

    class OtherHandler(SingleThreadedExecutor):
        def _make_handler(self, entity, node, take_from_wait_list, call_coroutine):  # Humble's shape
            raise NotImplementedError

    assert "_take_waitable" in executor.cached_wait_set_problem(Without)
    assert "call_coroutine" in executor.cached_wait_set_problem(OtherHandler)
    monkeypatch.setattr(executor, "cached_wait_set_problem", lambda: "rclpy's executor has no _make_handler")
    made, problem = executor.make_executor(context=ros_context)
    assert type(made) is SingleThreadedExecutor and "_make_handler" in problem
    made.shutdown(timeout_sec=0)

    made_types = []

    def recording(context=None):
        made, problem = executor.make_executor(context=context)
        made_types.append(type(made))
        return made, problem

    monkeypatch.setattr(server_node, "make_executor", recording)
    server = make_server(ros_context, world_path=str(LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml"), update_rate=0.0)
    try:
        ticks = [0]

        def stop() -> bool:
            ticks[0] += 1
            return ticks[0] > 50

        server.run(stop=stop)  # with an executor of its own: rclpy's
        assert made_types == [SingleThreadedExecutor] and server.world.time.iterations > 0
    finally:
        server.destroy_node()
