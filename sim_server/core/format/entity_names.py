"""Rules for the names of models, the ROS namespaces they are placed in, and their plugins'
topics and frames.

A model's name becomes part of TF frame ids, marker namespaces and topic names, and its namespace
prefixes every topic of its plugins, so both are checked before anything is built: a name that
ROS would refuse halfway through creating a model's publishers never gets that far.
"""

from __future__ import annotations

import re

from sim_server.core.limits import MAX_FRAME_LENGTH, MAX_NAME_LENGTH, MAX_TOPIC_LENGTH

#: Letters, digits, ``_``, ``-`` and ``.``: safe in frame ids, marker namespaces and file names.
_MODEL_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
#: ROS 2 namespace: tokens of letters, digits and ``_`` not starting with a digit, joined by ``/``.
_NAMESPACE = re.compile(r"/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*")


#: A ROS 2 topic as a plugin may name it: relative, absolute (``/``) or private (``~/``), tokens of
#: letters, digits and ``_`` not starting with a digit (``{}`` substitutions are not offered).
_TOPIC = re.compile(r"(~/|/)?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*")
#: What marks a topic as absolute, a topic as private to the server's node, a frame as global.
GLOBAL_MARK, PRIVATE_MARK = "/", "~/"
#: Separates a model's name from a body's, joint's or plugin's in datapack names ("robot::base").
SCOPE = "::"
#: The server node's name, unless remapped: a plugin's private topic ``~/x`` is ``/sim_server/x``.
SERVER_NODE_NAME = "sim_server"


def shown_name(text: str) -> str:
    """``text`` quoted for a message, cut to 40 characters (a request may carry megabytes)."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


def topic_problem(topic: str) -> str | None:
    """Why ``topic`` cannot name a ROS 2 topic, or None when it can: at most
    :data:`~sim_server.core.limits.MAX_TOPIC_LENGTH` characters, tokens of letters, digits and
    ``_`` (not starting with a digit) joined by single ``/``, optionally after ``/`` (absolute)
    or ``~/`` (private to the server's node)."""
    if len(topic) > MAX_TOPIC_LENGTH:
        return f"topic {shown_name(topic)} has {len(topic)} characters, more than the limit of {MAX_TOPIC_LENGTH}"
    if not _TOPIC.fullmatch(topic):
        return (
            f"topic {shown_name(topic)} is not a ROS topic name: tokens of letters, digits and _ (not starting "
            "with a digit) joined by /, optionally after / or ~/"
        )
    return None


def plugin_topic(namespace: str, topic: str) -> str:
    """The name a plugin of a model in ``namespace`` gives ``topic`` (one :func:`topic_problem`
    accepts): ``<namespace>/<topic>``; an absolute (``/scan``) or private (``~/scan``: the
    server node's own, as rclpy expands it) topic and every topic without a namespace as it is."""
    namespace = namespace.strip("/")
    if topic.startswith((GLOBAL_MARK, PRIVATE_MARK)) or not namespace:
        return topic
    return f"{namespace}/{topic}"


def frame_id(namespace: str, name: str) -> str:
    """The TF frame id of ``name`` (a body, a sensor's frame) in a model's ``namespace``, by the
    reference's rule: ``<namespace>_<name>``, ``name`` alone without a namespace; a leading
    ``/`` means global (``/map`` is ``map``)."""
    if name.startswith(GLOBAL_MARK):
        return name[1:]
    return f"{namespace}_{name}" if namespace else name


def frame_problem(frame: str) -> str | None:
    """Why ``frame`` cannot name a TF frame, or None when it can: at most
    :data:`~sim_server.core.limits.MAX_FRAME_LENGTH` characters, after the reference's one
    leading ``/`` (global, dropped by :func:`frame_id`) not empty, no whitespace or control
    characters, and no empty segment between ``/`` (tf2 refuses ids that start with ``/`` and
    whitespace breaks its tools)."""
    if len(frame) > MAX_FRAME_LENGTH:
        return f"frame {shown_name(frame)} has {len(frame)} characters, more than the limit of {MAX_FRAME_LENGTH}"
    bare = frame[len(GLOBAL_MARK):] if frame.startswith(GLOBAL_MARK) else frame
    if not bare:
        why = "it is empty"
    elif not all(c.isprintable() and not c.isspace() for c in bare):
        why = "it holds whitespace or control characters"
    elif "" in bare.split("/"):
        why = "it has an empty segment (a second leading /, // or a trailing /)"
    else:
        return None
    return f"frame {shown_name(frame)} is not a TF frame id: {why}"


def model_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a model, or None when it can."""
    if not name:
        return "model name must not be empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"model name {shown_name(name)} has {len(name)} characters, more than the limit of {MAX_NAME_LENGTH}"
    if not _MODEL_NAME.fullmatch(name):
        return f"model name {shown_name(name)} may only hold letters, digits, '_', '-' and '.'"
    return None


def namespace_problem(namespace: str) -> str | None:
    """Why ``namespace`` cannot be a model's ROS namespace, or None when it can ("" is none)."""
    if not namespace:
        return None
    if len(namespace) > MAX_NAME_LENGTH:
        return (
            f"namespace {shown_name(namespace)} has {len(namespace)} characters, more than the limit of {MAX_NAME_LENGTH}"
        )
    if not _NAMESPACE.fullmatch(namespace):
        return (
            f"namespace {shown_name(namespace)} is not a ROS namespace (names of letters, digits and '_', "
            "not starting with a digit, separated by '/')"
        )
    return None
