"""Clients that send garbage, lie about ids, send too much or too often: the view refuses them
without harm to the step loop or to the other clients; its services and client channels take
only what they document (nobody can read files or run code: see also test_control)."""

from __future__ import annotations

import json
import math
import os
import threading

import pytest
from websockets.sync.client import connect

from sim_server.core import World
from sim_server.live import LiveView
from test.conftest import REPO_ROOT
from test.live.client import SUBPROTOCOLS, Client, stepping

CROWD_WORLD = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"


def _call(service: int, call: int, payload: bytes, encoding: bytes = b"json") -> bytes:
    """A service call request frame (client opcode 2)."""
    return bytes([0x02]) + service.to_bytes(4, "little") + call.to_bytes(4, "little") + len(encoding).to_bytes(4, "little") + encoding + payload

#: What hostile clients send, each as a list of frames (text or binary).
ATTACKS = {
    "not json": ["{{{ nope"],
    "json of no operation": [json.dumps({"hello": "world"})],
    "unknown operation": [json.dumps({"op": "runCode", "code": "import os; os.remove('/')"})],
    "subscribe to channels that do not exist": [json.dumps({"op": "subscribe", "subscriptions": [{"id": 1, "channelId": 999999}]})],
    "subscription ids of every kind": [json.dumps({"op": "subscribe", "subscriptions": [{"id": -1, "channelId": "x"}, {"id": 2**70, "channelId": None}]})],
    "unsubscribe what was never subscribed": [json.dumps({"op": "unsubscribe", "subscriptionIds": [5, 6, 7]})],
    "advertise 2,000 channels": [json.dumps({"op": "advertise", "channels": [
        {"id": k, "topic": f"/t{k}/cmd_vel", "encoding": "json", "schemaName": "geometry_msgs/msg/Twist"} for k in range(2000)]})],
    "advertise channels of every kind": [json.dumps({"op": "advertise", "channels": [
        {"id": -1, "topic": None}, {"id": "x", "topic": "/cmd_vel", "encoding": 5}, {"id": 2**70, "topic": "/cmd_vel"}]})],
    "publish a flood of garbage on cmd_vel": [json.dumps({"op": "advertise", "channels": [
        {"id": 1, "topic": "/cmd_vel", "encoding": "json", "schemaName": "geometry_msgs/msg/Twist"}]})]
        + [bytes([0x01]) + (1).to_bytes(4, "little") + payload for payload in
           [b'{"linear": {"x": NaN}}', b"{", os.urandom(100), b'{"linear": {"x": 1e308}}', b" " * 100_000] * 400],
    "publish on channels never advertised": [bytes([0x01]) + k.to_bytes(4, "little") + b"{}" for k in range(500)],
    "call services that do not exist": [_call(service, 1, b"{}") for service in range(100, 200)],
    "a flood of service calls of every service": [_call(service, call, b"{}") for call in range(40) for service in range(1, 20)],
    "service calls of garbage": [_call(service, 1, payload) for service in range(1, 20)
                                 for payload in (b"{", b"[" * 60_000, os.urandom(200), b'{"steps": 1e400}', b"\x00" * 70_000)],
    "service call frames cut short": [bytes([0x02]), bytes([0x02, 1, 0]), bytes([0x02]) + (1).to_bytes(4, "little") * 2 + (2**31).to_bytes(4, "little") + b"js"],
    "fetch an asset (a file of the server's)": [json.dumps({"op": "fetchAsset", "uri": "file:///etc/passwd", "requestId": 1})],
    "binary garbage": [os.urandom(64), bytes([0xFF]) * 3, b""],
    "a megabyte of text": ["x" * 1_000_000],
    "a flood of subscriptions": [json.dumps({"op": "subscribe", "subscriptions": [{"id": k, "channelId": 1}]}) for k in range(2000)],
}


@pytest.fixture
def world() -> World:
    made = World.from_file(CROWD_WORLD, step_size=0.005)
    yield made
    made.close()


def _hostile(url: str, frames: list) -> None:
    """Send ``frames`` and read what comes back for a moment (the server may close the socket)."""
    try:
        with connect(url, subprotocols=SUBPROTOCOLS, open_timeout=10, max_size=2**24) as socket:
            for frame in frames:
                socket.send(frame)
            for _ in range(20):
                socket.recv(timeout=0.05)
    except Exception:  # closed by the server, or nothing more to read: both are fine
        pass


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_hostile_client_harms_neither_the_loop_nor_other_clients(world: World, attack: str) -> None:
    with LiveView(world, port=0) as view:
        assert "assets" not in _server_capabilities(view.url)  # no client can fetch files
        honest = Client(view.url)
        loop = stepping(view, world)

        try:
            honest.until(lambda: {"/scene", "/scene/static"} <= honest.topics())
            honest.subscribe("/scene", "/scene/static")
            attacker = threading.Thread(target=_hostile, args=(view.url, ATTACKS[attack]))
            attacker.start()
            while attacker.is_alive():  # the loop serves while the attack goes on
                loop()
                attacker.join(0.01)
            before = world.time.iterations
            assert honest.call("/resume", {}, loop)["success"]  # whatever the attack paused
            honest.until(lambda: len(honest.messages.get("/scene", [])) >= 3, between=loop)
            assert world.time.iterations > before  # the loop went on
            shown = {entity.id for topic in ("/scene", "/scene/static") for update in honest.messages.get(topic, [])
                     for entity in update.entities}
            assert "layer/2d" in shown  # the honest client still sees the world
            assert set(world.models) == {"cleaner1"} and all(math.isfinite(v) for v in vars(world.models["cleaner1"].pose).values())
        finally:
            honest.close()


def _server_capabilities(url: str) -> list[str]:
    client = Client(url)
    try:
        return client.server_info["capabilities"]
    finally:
        client.close()


def test_many_clients_at_once_are_served(world: World) -> None:
    with LiveView(world, port=0) as view:
        clients = [Client(view.url) for _ in range(8)]
        try:
            for client in clients:
                client.until(lambda c=client: "/tf" in c.topics())
                client.subscribe("/tf")
            for client in clients:
                client.until(lambda c=client: len(c.messages.get("/tf", [])) >= 2, between=lambda: world.step(10))
        finally:
            for client in clients:
                client.close()


def test_a_client_that_never_reads_does_not_hold_the_loop(world: World) -> None:
    """A client subscribed to everything that reads nothing: the SDK drops its oldest messages
    (the view keeps 256 per client); the world keeps stepping."""
    with LiveView(world, port=0, rate=1000.0) as view:
        with connect(view.url, subprotocols=SUBPROTOCOLS, open_timeout=10) as socket:
            socket.recv(timeout=10)  # serverInfo
            advertised = json.loads(socket.recv(timeout=10))
            socket.send(json.dumps({"op": "subscribe", "subscriptions": [
                {"id": k + 1, "channelId": channel["id"]} for k, channel in enumerate(advertised["channels"])]}))
            honest = Client(view.url)
            try:
                honest.until(lambda: "/tf" in honest.topics())
                honest.subscribe("/tf")
                honest.until(lambda: len(honest.messages.get("/tf", [])) >= 5, between=lambda: world.step(200))
            finally:
                honest.close()
            world.step(2000)  # 2,000 updates of the whole scene to a client that reads none
    assert world.time.iterations >= 2000
