"""Acting from the viewer: a client of the protocol calls the services (spawn, delete, move,
pause, resume, step, reset) and drives a robot by publishing Twist messages; the requests are
carried out between steps, answered with success and a message, and refused in one line when
they cannot be; commands stop when they run out or their client goes."""

from __future__ import annotations

import threading

import pytest

from sim_server.core import World
from sim_server.core.geometry import Pose2D
from sim_server.live import LiveView
from sim_server.live import requests as requests_module
from sim_server.live import teleop as teleop_module
from sim_server.core.control import WorldSimulation
from sim_server.live.requests import Requests
from test.conftest import REPO_ROOT
from test.live.client import Client, stepping

CROWD_WORLD = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"
TURTLEBOT = "../demo/turtlebot.model.yaml"


@pytest.fixture
def world() -> World:
    made = World.from_file(CROWD_WORLD, step_size=0.005)
    yield made
    made.close()


@pytest.fixture
def served(world: World):
    """A view, a connected client and the loop's work between reads (serve, then ten steps
    unless paused: a caller's own loop)."""
    with LiveView(world, port=0) as view:
        client = Client(view.url)
        loop = stepping(view, world)

        try:
            yield view, client, loop
        finally:
            client.close()


def _command(world: World, model: str = "cleaner1"):
    return next(p.command for p in world.plugins.plugins_of(world.models[model]) if getattr(p, "command", None))


def test_the_services_act_on_the_world_between_steps(world: World, served) -> None:
    view, client, loop = served
    assert {"services", "clientPublish"} <= set(client.server_info["capabilities"])
    assert client.server_info["supportedEncodings"] == ["json"]
    assert client.call("/pause", {}, loop) == {"success": True, "message": "paused"} and world.time.paused
    before = world.time.iterations
    answer = client.call("/step_world", {"steps": 50}, loop)
    assert answer["success"] and world.time.iterations == before + 50, answer
    assert client.call("/move_model", {"name": "cleaner1", "pose": {"x": 14, "y": 1, "theta": 0.5}}, loop)["success"]
    assert world.models["cleaner1"].pose == Pose2D(14.0, 1.0, 0.5)
    spawned = client.call("/spawn_model", {"yaml_path": TURTLEBOT, "name": "bot", "ns": "bot",
                                           "pose": {"x": 20.0, "y": 2.0}}, loop)
    assert spawned["success"] and world.models["bot"].pose.x == 20.0, spawned
    assert client.call("/delete_model", {"name": "bot"}, loop)["success"] and "bot" not in world.models
    assert client.call("/resume", {}, loop)["success"] and not world.time.paused
    client.until(lambda: world.time.iterations > before + 60, loop)
    assert client.call("/pause", {}, loop)["success"] and client.call("/reset_world", {}, loop)["success"]
    assert world.time.iterations == 0 and world.models["cleaner1"].pose == Pose2D(12.0, 0.0, 0.0)


def test_a_view_of_a_paused_world_shows_what_a_request_changed(world: World, served) -> None:
    view, client, loop = served
    client.until(lambda: "/scene" in client.topics(), loop)
    client.subscribe("/scene")
    client.call("/pause", {}, loop)
    client.call("/move_model", {"name": "cleaner1", "pose": {"x": 30.0, "y": 5.0}}, loop)
    iterations = world.time.iterations

    def moved() -> bool:
        footprints = [e for update in client.messages.get("/scene", []) for e in update.entities if e.id == "model/cleaner1"]
        return bool(footprints) and any(abs(p.x - 30.0) < 1.0 for line in footprints[-1].lines for p in line.points)

    client.until(moved, loop)
    assert world.time.iterations == iterations  # shown without a step


REFUSALS = [
    ("/move_model", b"{nope", "not JSON"),
    ("/move_model", b"[1, 2]", "must be a JSON object"),
    ("/move_model", b'{"name": "cleaner1", "pose": {"x": NaN}}', "finite"),
    ("/move_model", b'{"name": "cleaner1", "pose": {"x": Infinity}}', "finite"),
    ("/move_model", {"name": "cleaner1", "pose": {"x": 1e30}}, "pose"),
    ("/move_model", {"name": "cleaner1", "pose": {"x": "1"}}, "pose.x must be a finite number"),
    ("/move_model", {"name": "cleaner1", "pose": [1, 2, 3]}, "must be an object"),
    ("/move_model", {"name": "cleaner1", "pose": {"z": 1}}, "unknown key(s) 'z'"),
    ("/move_model", {"name": "cleaner1"}, "missing key(s) pose"),
    ("/move_model", {"name": "nobody", "pose": {}}, 'model with name "nobody" does not exist'),
    ("/move_model", {"name": 7, "pose": {}}, "name must be a string"),
    ("/move_model", {"name": "x" * 5000, "pose": {}}, "at most 100 characters"),
    ("/move_model", {"name": "cleaner1", "pose": {}, "speed": 3}, "unknown key(s) 'speed'"),
    ("/delete_model", {"name": "nobody"}, "does not exist"),
    ("/spawn_model", {"yaml_path": "/etc/passwd", "name": "p"}, "outside the folders"),
    ("/spawn_model", {"yaml_path": "../../../../../../etc/hostname", "name": "p"}, "outside the folders"),
    ("/spawn_model", {"yaml_path": "nothing.model.yaml", "name": "p"}, "does not exist"),
    ("/spawn_model", {"yaml_path": TURTLEBOT, "name": "cleaner1"}, "cleaner1"),
    ("/spawn_model", {"yaml_path": TURTLEBOT, "name": "p", "pose": {"x": -1e9}}, "pose"),
    ("/step_world", {"steps": 10}, "pause it before stepping"),
    ("/step_world", {"steps": 0}, "steps must be from 1"),
    ("/step_world", {"steps": 2**70}, "steps must be from 1"),
    ("/step_world", {"steps": 1.5}, "whole number"),
    ("/step_world", {"steps": True}, "whole number"),
    ("/pause", b"x" * 70_000, "at most 65536 bytes"),
    ("/pause", b"\xff\xfe", "not JSON"),
    ("/pause", b"[" * 100_000, "at most 65536 bytes"),
    ("/pause", b"[" * 50_000, "not JSON"),
]


@pytest.mark.parametrize(("service", "request_", "fault"), REFUSALS, ids=[f"{s}-{f}" for s, _, f in REFUSALS])
def test_a_request_that_cannot_be_carried_out_is_refused_in_one_line(world: World, served, service, request_, fault) -> None:
    view, client, loop = served
    models = set(world.models)
    answer = client.call(service, request_, loop)
    assert answer["success"] is False and fault in answer["message"], answer
    assert "\n" not in answer["message"] and len(answer["message"]) < 400
    assert set(world.models) == models and not world.time.paused  # nothing half-done
    assert client.call("/pause", {}, loop)["success"]  # and the view goes on


def test_a_request_in_another_encoding_is_refused(world: World, served) -> None:
    view, client, loop = served
    answer = client.call("/pause", b"\x00\x01", loop, encoding="cdr")
    assert answer.get("op") == "serviceCallFailure" or answer["success"] is False, answer
    assert "encoding" in answer["message"] and not world.time.paused, answer


def test_a_long_step_request_runs_in_slices_and_a_resume_stops_it(world: World, served) -> None:
    view, client, loop = served
    client.call("/pause", {}, loop)
    answers = []
    caller = threading.Thread(target=lambda: answers.append(_call_from_another_client(view.url, "/step_world", {"steps": 10_000_000})))
    caller.start()
    try:
        start = world.time.iterations
        client.until(lambda: world.time.iterations > start + 100, loop)  # sliced: this loop still runs
        assert client.call("/resume", {}, loop)["success"]
        client.until(lambda: bool(answers), loop)
    finally:
        caller.join(30)
    assert answers[0]["success"] is False and "stopped after" in answers[0]["message"] and "resumed" in answers[0]["message"]


def _call_from_another_client(url: str, service: str, request: dict) -> dict:
    other = Client(url)
    try:
        return other.call(service, request)
    finally:
        other.close()


def test_a_request_nobody_serves_is_withdrawn_not_carried_out_later(world: World, monkeypatch) -> None:
    monkeypatch.setattr(requests_module, "START_WAIT", 0.3)
    with LiveView(world, port=0) as view:
        client = Client(view.url)
        try:
            answer = client.call("/delete_model", {"name": "cleaner1"})  # nobody calls serve()
            view.serve()
        finally:
            client.close()
    assert answer["success"] is False and "not started" in answer["message"] and "serve()" in answer["message"]
    assert "cleaner1" in world.models


def test_a_flood_of_requests_is_answered_busy_beyond_the_queue() -> None:
    queue = Requests(capacity=2)
    started = threading.Event()
    answers: list[tuple[bool, str]] = []
    threads = [threading.Thread(target=lambda: answers.append(queue.call(lambda r: r.finish(True, "ok"), 5.0, "x")))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    while len(queue._waiting) < 2:
        started.wait(0.01)
    assert queue.call(lambda r: r.finish(True, "ok"), 5.0, "x") == (False, "busy: 2 requests are waiting already; try again")
    queue.serve()
    for thread in threads:
        thread.join(5)
    assert answers == [(True, "ok"), (True, "ok")] and queue.refused == 1


def test_one_clients_flood_leaves_room_for_the_calls_of_others() -> None:
    queue = Requests(capacity=5, per_client=3)
    answers: list[tuple[str, tuple[bool, str]]] = []

    def call(client: str) -> None:
        answers.append((client, queue.call(lambda r: r.finish(True, "ok"), 5.0, "x", client)))

    threads = [threading.Thread(target=call, args=("flood",)) for _ in range(3)]
    for thread in threads:
        thread.start()
    while len(queue._waiting) < 3:
        threading.Event().wait(0.01)
    assert queue.call(lambda r: r.finish(True, "ok"), 5.0, "x", "flood") == (
        False, "busy: 3 requests of this client are waiting already; try again")
    threads += [threading.Thread(target=call, args=(client,)) for client in ("honest", "other")]
    for thread in threads[3:]:
        thread.start()
    while len(queue._waiting) < 5:
        threading.Event().wait(0.01)
    assert queue.call(lambda r: r.finish(True, "ok"), 5.0, "x", "third")[1] == "busy: 5 requests are waiting already; try again"
    queue.serve()
    for thread in threads:
        thread.join(5)
    assert sorted(answers) == [("flood", (True, "ok"))] * 3 + [("honest", (True, "ok")), ("other", (True, "ok"))]
    assert queue.refused == 2 and not queue._of_client  # served: the client may queue again
    thread = threading.Thread(target=call, args=("flood",))
    thread.start()
    while not queue.pending:
        threading.Event().wait(0.01)
    queue.serve()
    thread.join(5)
    assert answers[-1] == ("flood", (True, "ok"))


def test_a_request_that_raises_unexpectedly_is_answered_and_the_loop_goes_on() -> None:
    queue = Requests()
    answers = []
    thread = threading.Thread(target=lambda: answers.append(queue.call(lambda r: 1 / 0, 5.0, "x")))
    thread.start()
    while not queue.pending:
        threading.Event().wait(0.01)
    queue.serve()
    thread.join(5)
    assert answers == [(False, "internal error: ZeroDivisionError: division by zero")]


def test_control_false_offers_neither_services_nor_publishing(world: World) -> None:
    with LiveView(world, port=0, control=False) as view:
        client = Client(view.url)
        try:
            assert not {"services", "clientPublish"} & set(client.server_info["capabilities"])
        finally:
            client.close()


# ---------------------------------------------------------------------------------- driving
def test_a_twist_published_on_cmd_vel_drives_the_robot_and_stops_when_it_runs_out(world: World, served, monkeypatch) -> None:
    monkeypatch.setattr(teleop_module, "COMMAND_HOLD", 1.0)
    view, client, loop = served
    command = _command(world)
    channel = client.advertise("/cmd_vel")
    start = world.models["cleaner1"].pose
    client.publish(channel, {"linear": {"x": 0.8, "y": 0, "z": 0}, "angular": {"x": 0, "y": 0, "z": 0.0}})
    client.until(lambda: command.linear == 0.8, loop)
    client.until(lambda: world.models["cleaner1"].pose.x > start.x + 0.05, loop)  # it drives
    client.until(lambda: command.linear == 0.0, loop)  # nothing more came: stopped


def test_a_stamped_twist_drives_too_and_a_client_going_stops_its_command(world: World, served) -> None:
    view, client, loop = served
    command = _command(world)
    channel = client.advertise("cmd_vel", schema_name="geometry_msgs/msg/TwistStamped")
    client.publish(channel, {"header": {"frame_id": ""}, "twist": {"linear": {"x": -0.4}, "angular": {"z": 0.3}}})
    client.until(lambda: (command.linear, command.angular) == (-0.4, 0.3), loop)
    client.unadvertise(channel)
    client.until(lambda: (command.linear, command.angular) == (0.0, 0.0), loop)


def test_a_command_given_since_by_someone_else_is_not_stopped(world: World, served, monkeypatch) -> None:
    monkeypatch.setattr(teleop_module, "COMMAND_HOLD", 0.2)
    view, client, loop = served
    command = _command(world)
    channel = client.advertise("/cmd_vel")
    client.publish(channel, {"linear": {"x": 0.5}})
    client.until(lambda: command.linear == 0.5, loop)
    command.linear = 0.25  # a script, a ROS node
    deadline = threading.Event()
    threading.Timer(0.6, deadline.set).start()
    client.until(deadline.is_set, loop)
    assert command.linear == 0.25


BAD_MESSAGES = [
    (b"{nope", "not JSON"),
    (b'{"linear": {"x": NaN}}', "linear.x must be a finite number"),
    (b'{"linear": {"x": 1e300}}', "linear.x must be"),
    (b'{"angular": {"z": "fast"}}', "angular.z must be"),
    (b'{"linear": 5}', "linear.x must be"),
    (b"[1, 2]", "not a geometry_msgs/Twist"),
    (b" " * 5000, "at most 4096 bytes"),
]


@pytest.mark.parametrize(("payload", "fault"), BAD_MESSAGES, ids=[f for _, f in BAD_MESSAGES])
def test_a_command_that_cannot_be_used_is_dropped_with_a_warning(world: World, served, payload: bytes, fault: str) -> None:
    view, client, loop = served
    command = _command(world)
    channel = client.advertise("/cmd_vel")
    client.publish(channel, {"linear": {"x": 0.3}})
    client.until(lambda: command.linear == 0.3, loop)
    client.publish(channel, payload)
    client.until(lambda: any(fault in status["message"] for status in client.statuses), loop)
    assert command.linear == 0.3 and view._teleop.dropped == 1  # the previous command holds


def test_commands_on_a_topic_no_drive_listens_to_or_in_another_encoding_are_refused(world: World, served, monkeypatch) -> None:
    monkeypatch.setattr(teleop_module, "ANY_WARNING_PERIOD", 0.0)
    view, client, loop = served
    client.publish(client.advertise("/nobody/cmd_vel"), {"linear": {"x": 1.0}})
    client.publish(client.advertise("/cmd_vel", encoding="cdr"), b"\x00\x01\x00\x00")
    client.publish(99, {"linear": {"x": 1.0}})  # a channel never advertised
    wanted = ["no drive listens on /nobody/cmd_vel (drives: /cmd_vel)", 'not "cdr"']
    client.until(lambda: all(any(text in status["message"] for status in client.statuses) for text in wanted), loop)
    assert _command(world).linear == 0.0


def test_a_robot_spawned_later_can_be_driven_on_its_namespaced_topic(world: World, served) -> None:
    view, client, loop = served
    assert client.call("/spawn_model", {"yaml_path": TURTLEBOT, "name": "bot", "ns": "bot", "pose": {"x": 20.0}}, loop)["success"]
    command = _command(world, "bot")
    client.publish(client.advertise("/bot/cmd_vel"), {"linear": {"x": 0.2}})
    client.until(lambda: command.linear == 0.2, loop)


def test_an_omni_base_strafes_on_linear_y_and_a_car_steers_on_angular_z(monkeypatch) -> None:
    """The vehicles world: linear.y moves the omnidirectional base sideways; the car ignores it
    (it cannot slide) and steers by angular.z; both stop when the commands run out."""
    monkeypatch.setattr(teleop_module, "COMMAND_HOLD", 0.5)
    world = World.from_file(REPO_ROOT / "config" / "worlds" / "vehicles" / "world.yaml", step_size=0.01)
    try:
        with LiveView(world, port=0) as view:
            client = Client(view.url)
            try:
                loop = stepping(view, world)
                omni, car = _command(world, "omni"), _command(world, "car")
                client.publish(client.advertise("/omni/cmd_vel"), {"linear": {"x": 0.0, "y": 0.4}, "angular": {"z": 0.0}})
                client.publish(client.advertise("/car/cmd_vel"), {"linear": {"x": 0.5, "y": 0.7}, "angular": {"z": 0.2}})
                client.until(lambda: omni.lateral == 0.4 and (car.linear, car.angular, car.lateral) == (0.5, 0.2, 0.0), loop)
                start = world.models["omni"].pose
                client.until(lambda: world.models["omni"].pose.y > start.y + 0.02, loop)  # sideways (it faces +x)
                assert abs(world.models["omni"].pose.x - start.x) < 0.01
                client.until(lambda: (omni.lateral, car.linear, car.angular) == (0.0, 0.0, 0.0), loop)  # ran out
            finally:
                client.close()
    finally:
        world.close()


# ---------------------------------------------------------------------------------- run()
def test_run_steps_the_given_sim_time_and_serves_while_paused(world: World) -> None:
    with LiveView(world, port=0) as view:
        view.run(seconds=0.25, speed=0)
        assert world.time.iterations == 50
        client = Client(view.url)
        calls: list[dict] = []

        def act() -> None:
            calls.append(client.call("/pause", {}))
            calls.append(client.call("/step_world", {"steps": 7}))
            calls.append(client.call("/reset_world", {}))

        actor = threading.Thread(target=act)
        actor.start()
        try:
            view.run(speed=0, stop=lambda: len(calls) == 3 or not actor.is_alive())
        finally:
            actor.join(30)
            client.close()
    assert [c["success"] for c in calls] == [True, True, True], calls
    assert world.time.iterations == 0 and world.time.paused


@pytest.mark.parametrize(("arguments", "fault"), [
    ({"seconds": -1.0}, "seconds"), ({"seconds": float("nan")}, "seconds"), ({"speed": -2}, "speed"),
    ({"speed": float("inf")}, "speed"), ({"speed": "fast"}, "speed"),
])
def test_run_refuses_arguments_it_cannot_use(world: World, arguments: dict, fault: str) -> None:
    with LiveView(world, port=0) as view:
        with pytest.raises(ValueError, match=fault):
            view.run(**arguments)


def test_the_in_process_control_follows_a_replaced_world(world: World) -> None:
    control = WorldSimulation(world)
    other = World.from_file(CROWD_WORLD)
    try:
        control.use_world(other)
        assert control.delete_model("cleaner1") == 'deleted model "cleaner1"'
        assert "cleaner1" in world.models and "cleaner1" not in other.models
    finally:
        other.close()
