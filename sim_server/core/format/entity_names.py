"""Rules for the names of models, the ROS namespaces they are placed in, and their plugins'
topics and frames.

A model's name becomes part of TF frame ids, marker namespaces and topic names, and its namespace
prefixes every topic of its plugins, so both are checked before anything is built: a name that
ROS would refuse halfway through creating a model's publishers never gets that far.
"""

from __future__ import annotations

import re

from sim_server.core.limits import MAX_NAME_LENGTH

#: Letters, digits, ``_``, ``-`` and ``.``: safe in frame ids, marker namespaces and file names.
_MODEL_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
#: ROS 2 namespace: tokens of letters, digits and ``_`` not starting with a digit, joined by ``/``.
_NAMESPACE = re.compile(r"/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*")


#: A ROS 2 topic as a plugin may name it: relative, absolute (``/``) or private (``~/``), tokens of
#: letters, digits and ``_`` not starting with a digit (``{}`` substitutions are not offered).
_TOPIC = re.compile(r"(~/|/)?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*")


def shown_name(text: str) -> str:
    """``text`` quoted for a message, cut to 40 characters (a request may carry megabytes)."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


def topic_problem(topic: str) -> str | None:
    """Why ``topic`` cannot name a ROS 2 topic, or None when it can."""
    if len(topic) > 2 * MAX_NAME_LENGTH:
        return f"topic {shown_name(topic)} has {len(topic)} characters, more than the limit of {2 * MAX_NAME_LENGTH}"
    if not _TOPIC.fullmatch(topic):
        return (
            f"topic {shown_name(topic)} is not a ROS topic name: tokens of letters, digits and _ (not starting "
            "with a digit) joined by /, optionally after / or ~/"
        )
    return None


def frame_id(namespace: str, name: str) -> str:
    """The TF frame id of ``name`` (a body, a sensor's frame) in a model's ``namespace``, by the
    reference's rule: ``<namespace>_<name>``, ``name`` alone without a namespace; a leading
    ``/`` means global (``/map`` is ``map``)."""
    if name.startswith("/"):
        return name[1:]
    return f"{namespace}_{name}" if namespace else name


def frame_problem(frame: str) -> str | None:
    """Why ``frame`` cannot be a TF frame id, or None when it can."""
    if not frame or any(c.isspace() for c in frame) or len(frame) > 2 * MAX_NAME_LENGTH:
        return f"frame {shown_name(frame)} is not a frame id: 1 to {2 * MAX_NAME_LENGTH} characters, no spaces"
    return None


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
