"""The viewer's services: ``/spawn_model``, ``/delete_model``, ``/move_model``, ``/pause``,
``/resume``, ``/step_world`` and ``/reset_world``, named and shaped as the ROS node's.

Requests and answers are JSON (Foxglove's "Service Call" panel sends JSON to a server that
supports it), described by JSON schemas. Every answer is ``{"success": bool, "message": str}``:
a request that cannot be carried out (bad JSON, an unknown key, a value of the wrong type, not
finite or out of range, a model that does not exist) answers ``success: false`` with one line
naming what is at fault, and the simulation runs on. Requests are carried out between steps by
the thread that steps the world (:mod:`sim_server.live.requests`). Units: metres, radians.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable

import foxglove
from foxglove import MessageSchema, Schema, Service, ServiceSchema

from sim_server.core import limits
from sim_server.core.errors import RequestError, one_line
from sim_server.core.geometry import Pose2D
from sim_server.core.control import Reply, SimulationControl, check_spawnable
from sim_server.live.requests import Requests

#: Wall seconds a request may take once started (spawning loads a file).
ANSWER_WAIT = 30.0
#: Wall seconds a step_world request may take once started (it steps in slices between the
#: loop's other work); then it stops where it got to.
STEP_ANSWER_WAIT = 120.0
#: The encoding of requests and answers.
JSON = "json"

_POSE = {
    "type": "object", "additionalProperties": False,
    "properties": {"x": {"type": "number", "description": "m"}, "y": {"type": "number", "description": "m"},
                   "theta": {"type": "number", "description": "rad"}},
}
_NAME = {"type": "string", "maxLength": limits.MAX_NAME_LENGTH}
_ANSWER = {
    "type": "object",
    "properties": {"success": {"type": "boolean"}, "message": {"type": "string"}},
    "required": ["success", "message"],
}


@dataclass(frozen=True)
class _Kind:
    """One service: its request's keys (JSON schema properties), the required ones, and what it
    does with a checked request (on the step loop's thread)."""

    name: str
    properties: dict
    required: tuple[str, ...]
    run: Callable[[SimulationControl, dict, Reply], None]
    answer_wait: float = ANSWER_WAIT

    def schema(self) -> dict:
        return {"type": "object", "additionalProperties": False, "properties": self.properties,
                "required": list(self.required)}


def _done(reply: Reply, message: str) -> None:
    reply.finish(True, message)


def _spawn(control: SimulationControl, request: dict) -> str:
    check_spawnable(control, request["yaml_path"])
    return control.spawn_model(request["yaml_path"], request["name"], request.get("ns", ""), request["pose"])


KINDS = (
    _Kind("spawn_model", {"yaml_path": {"type": "string", "maxLength": limits.MAX_PATH_CHARS}, "name": _NAME,
                          "ns": _NAME, "pose": _POSE}, ("yaml_path", "name"),
          lambda control, r, reply: _done(reply, _spawn(control, r))),
    _Kind("delete_model", {"name": _NAME}, ("name",),
          lambda control, r, reply: _done(reply, control.delete_model(r["name"]))),
    _Kind("move_model", {"name": _NAME, "pose": _POSE}, ("name", "pose"),
          lambda control, r, reply: _done(reply, control.move_model(r["name"], r["pose"]))),
    _Kind("pause", {}, (), lambda control, r, reply: _done(reply, control.set_paused(True))),
    _Kind("resume", {}, (), lambda control, r, reply: _done(reply, control.set_paused(False))),
    _Kind("step_world", {"steps": {"type": "integer", "minimum": 1, "maximum": limits.MAX_STEPS_PER_REQUEST}}, (),
          lambda control, r, reply: control.step(r.get("steps", 1), reply), STEP_ANSWER_WAIT),
    _Kind("reset_world", {}, (), lambda control, r, reply: _done(reply, control.reset())),
)


def _reject_constant(name: str) -> float:
    raise RequestError(f"{name} is not a number JSON allows (numbers must be finite)")


def parse(kind: _Kind, encoding: str, payload: bytes) -> dict:
    """The checked request of ``kind`` from a client's ``payload`` (RequestError, one line)."""
    if encoding != JSON:
        raise RequestError(f'requests must be encoded as "{JSON}", got "{one_line(encoding, 40)}"')
    if len(payload) > limits.MAX_VIEW_REQUEST_BYTES:
        raise RequestError(f"a request must be at most {limits.MAX_VIEW_REQUEST_BYTES} bytes, got {len(payload)}")
    try:
        request = json.loads(payload.decode("utf-8") or "{}", parse_constant=_reject_constant) if payload.strip() else {}
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise RequestError(f"the request is not JSON: {one_line(str(error), 120)}") from None
    if not isinstance(request, dict):
        raise RequestError(f"the request must be a JSON object, got {type(request).__name__}")
    unknown = sorted(set(request) - set(kind.properties))
    if unknown:
        known = ", ".join(kind.properties) or "none"
        raise RequestError(f"{kind.name}: unknown key(s) {', '.join(repr(one_line(k, 40)) for k in unknown[:5])} (known: {known})")
    missing = [key for key in kind.required if key not in request]
    if missing:
        raise RequestError(f"{kind.name}: missing key(s) {', '.join(missing)}")
    checked: dict[str, Any] = {}
    for key, value in request.items():
        checked[key] = _check(kind.name, key, kind.properties[key], value)
    if "pose" in kind.properties:
        checked["pose"] = checked.get("pose", Pose2D())
    return checked


def _check(service: str, key: str, schema: dict, value: Any) -> Any:
    what = f"{service}: {key}"
    if schema is _POSE:
        if not isinstance(value, dict):
            raise RequestError(f"{what} must be an object with x, y and theta, got {one_line(repr(value), 60)}")
        unknown = sorted(set(value) - {"x", "y", "theta"})
        if unknown:
            raise RequestError(f"{what}: unknown key(s) {', '.join(repr(one_line(k, 40)) for k in unknown[:5])} (known: x, y, theta)")
        numbers = [_number(f"{what}.{axis}", value.get(axis, 0.0)) for axis in ("x", "y", "theta")]
        return Pose2D(*numbers)
    if schema.get("type") == "string":
        if not isinstance(value, str):
            raise RequestError(f"{what} must be a string, got {one_line(repr(value), 60)}")
        if len(value) > schema["maxLength"]:
            raise RequestError(f"{what} must be at most {schema['maxLength']} characters, got {len(value)}")
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"{what} must be a whole number, got {one_line(repr(value), 60)}")
    if not schema["minimum"] <= value <= schema["maximum"]:
        raise RequestError(f"{what} must be from {schema['minimum']} to {schema['maximum']}, got {one_line(str(value), 40)}")
    return value


def _number(what: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RequestError(f"{what} must be a finite number, got {one_line(repr(value), 60)}")
    return float(value)


def _encoded(success: bool, message: str) -> bytes:
    return json.dumps({"success": success, "message": message}).encode()


def _json_schema(name: str, schema: dict) -> MessageSchema:
    return MessageSchema(encoding=JSON, schema=Schema(name=name, encoding="jsonschema", data=json.dumps(schema).encode()))


def services(requests: Requests, control: Callable[[], SimulationControl]) -> list[Service]:
    """The viewer's services, each answering through ``requests`` with what ``control()`` (the
    simulation of the moment) does."""

    def handler(kind: _Kind) -> Callable[[foxglove.ServiceRequest], bytes]:
        def handle(call: foxglove.ServiceRequest) -> bytes:
            try:
                request = parse(kind, call.encoding, call.payload)
            except RequestError as error:
                return _encoded(False, str(error))
            success, message = requests.call(lambda reply: kind.run(control(), request, reply), kind.answer_wait, kind.name,
                                             call.client_id)
            return _encoded(success, message)

        return handle

    return [
        Service("/" + kind.name, schema=ServiceSchema(
            f"sim_server/{kind.name}", request=_json_schema(f"sim_server/{kind.name}/Request", kind.schema()),
            response=_json_schema(f"sim_server/{kind.name}/Response", _ANSWER),
        ), handler=handler(kind))
        for kind in KINDS
    ]
