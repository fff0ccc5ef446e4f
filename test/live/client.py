"""A client of the Foxglove WebSocket protocol for the tests, written from the protocol's
specification (github.com/foxglove/ws-protocol), not from the server's code: JSON control
messages, binary message data (opcode 1: subscription id, receive time, payload) and time
(opcode 2), payloads decoded with the protobuf schemas the server advertises; service calls
(client opcode 2: service id, call id, encoding; answers with server opcode 3, or a
``serviceCallFailure``) and client publish (``advertise``, then client opcode 1: channel id,
payload)."""

from __future__ import annotations

import base64
import json
import struct
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from websockets.sync.client import connect

#: The subprotocols a client offers (the SDK's own and the published one).
SUBPROTOCOLS = ["foxglove.sdk.v1", "foxglove.websocket.v1"]
MESSAGE_DATA, TIME, SERVICE_RESPONSE = 0x01, 0x02, 0x03
CLIENT_MESSAGE_DATA, SERVICE_CALL_REQUEST = 0x01, 0x02


def message_class(schema_name: str, schema: bytes) -> Any:
    """The protobuf class of ``schema_name`` from a serialized FileDescriptorSet."""
    files = descriptor_pb2.FileDescriptorSet.FromString(schema)
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(schema_name))


def decoder(channel: dict) -> Callable[[bytes], Any]:
    """The decoder of an advertised channel's messages: protobuf classes from the schema, or
    ROS 2 CDR through mcap-ros2-support's decoder of the ros2msg schema."""
    if channel["encoding"] == "protobuf":
        assert channel["schemaEncoding"] == "protobuf"
        return message_class(channel["schemaName"], base64.b64decode(channel["schema"])).FromString
    assert (channel["encoding"], channel["schemaEncoding"]) == ("cdr", "ros2msg"), channel
    from mcap.records import Schema
    from mcap_ros2.decoder import DecoderFactory

    schema = Schema(id=channel["id"], name=channel["schemaName"], encoding="ros2msg", data=channel["schema"].encode())
    return DecoderFactory().decoder_for("cdr", schema)


@dataclass
class Client:
    """A connected client: what the server said and sent, by topic."""

    url: str
    server_info: dict = field(default_factory=dict)
    channels: dict[int, dict] = field(default_factory=dict)
    messages: dict[str, list] = field(default_factory=dict)
    times: list[int] = field(default_factory=list)
    services: dict[str, dict] = field(default_factory=dict)
    answers: dict[int, Any] = field(default_factory=dict)
    _subscriptions: dict[int, dict] = field(default_factory=dict)
    _classes: dict[int, Any] = field(default_factory=dict)
    statuses: list[dict] = field(default_factory=list)
    _calls: int = 0

    def __post_init__(self) -> None:
        self._connection = connect(self.url, subprotocols=SUBPROTOCOLS, open_timeout=10)
        self.socket = self._connection.__enter__()
        self.server_info = json.loads(self.socket.recv(timeout=10))
        assert self.server_info["op"] == "serverInfo"

    def topics(self) -> set[str]:
        return {channel["topic"] for channel in self.channels.values()}

    def subscribe(self, *topics: str) -> None:
        """Subscribe to ``topics`` (advertised already: see :meth:`until`)."""
        wanted = []
        for channel_id, channel in self.channels.items():
            if channel["topic"] in topics:
                subscription = len(self._subscriptions) + 1
                self._subscriptions[subscription] = channel
                wanted.append({"id": subscription, "channelId": channel_id})
        self.socket.send(json.dumps({"op": "subscribe", "subscriptions": wanted}))

    def _handle(self, frame: Any) -> None:
        if isinstance(frame, str):
            message = json.loads(frame)
            if message["op"] == "advertise":
                for channel in message["channels"]:
                    self.channels[channel["id"]] = channel
            elif message["op"] == "unadvertise":
                for channel_id in message["channelIds"]:
                    self.channels.pop(channel_id, None)
            elif message["op"] == "advertiseServices":
                for service in message["services"]:
                    self.services[service["name"]] = service
            elif message["op"] == "serviceCallFailure":
                self.answers[message["callId"]] = message
            elif message["op"] == "status":
                self.statuses.append(message)
            return
        if frame[0] == SERVICE_RESPONSE:
            _, call_id, length = struct.unpack_from("<III", frame, 1)
            assert frame[13:13 + length] == b"json"
            self.answers[call_id] = json.loads(frame[13 + length:])
            return
        if frame[0] == TIME:
            self.times.append(struct.unpack_from("<Q", frame, 1)[0])
        elif frame[0] == MESSAGE_DATA:
            subscription, _ = struct.unpack_from("<IQ", frame, 1)
            channel = self._subscriptions[subscription]
            if subscription not in self._classes:
                self._classes[subscription] = decoder(channel)
            self.messages.setdefault(channel["topic"], []).append(self._classes[subscription](frame[13:]))

    def until(self, done: Callable[[], bool], between: Callable[[], None] = lambda: None, timeout: float = 20.0) -> None:
        """Read what comes, calling ``between`` (a few steps of the world) whenever nothing is
        waiting, until ``done()``; fail after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < deadline, f"gave up waiting; topics {sorted(self.topics())}, got {sorted(self.messages)}"
            try:
                self._handle(self.socket.recv(timeout=0.05))
            except TimeoutError:
                between()

    def call(self, service: str, request: Any, between: Callable[[], None] = lambda: None, encoding: str = "json",
             timeout: float = 30.0) -> Any:
        """Call ``service`` with ``request`` (a JSON-able object, or bytes sent as they are) and
        return its answer (a dict; a ``serviceCallFailure`` message if it failed), calling
        ``between`` (the step loop) while waiting."""
        self.until(lambda: service in self.services, between, timeout)
        self._calls += 1
        call_id = self._calls
        payload = request if isinstance(request, bytes) else json.dumps(request).encode()
        header = struct.pack("<BIII", SERVICE_CALL_REQUEST, self.services[service]["id"], call_id, len(encoding))
        self.socket.send(header + encoding.encode() + payload)
        self.until(lambda: call_id in self.answers, between, timeout)
        return self.answers.pop(call_id)

    def advertise(self, topic: str, schema_name: str = "geometry_msgs/Twist", encoding: str = "json") -> int:
        """Advertise a channel to publish on; returns its id."""
        self._calls += 1
        self.socket.send(json.dumps({"op": "advertise", "channels": [
            {"id": self._calls, "topic": topic, "encoding": encoding, "schemaName": schema_name}]}))
        return self._calls

    def unadvertise(self, channel_id: int) -> None:
        self.socket.send(json.dumps({"op": "unadvertise", "channelIds": [channel_id]}))

    def publish(self, channel_id: int, message: Any) -> None:
        """Publish ``message`` (a JSON-able object, or bytes sent as they are) on a channel."""
        payload = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.socket.send(struct.pack("<BI", CLIENT_MESSAGE_DATA, channel_id) + payload)

    def close(self) -> None:
        self._connection.__exit__(None, None, None)


def stepping(view: Any, world: Any, steps: int = 10) -> Callable[[], None]:
    """A caller's own loop, for :meth:`Client.until`'s ``between``: the view serves its clients,
    then the world steps ``steps`` times unless it is paused."""

    def loop() -> None:
        view.serve()
        if not world.time.paused:
            world.step(steps)

    return loop
