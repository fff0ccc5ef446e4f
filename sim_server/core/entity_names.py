"""Rules for the names of models and the ROS namespaces they are placed in.

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


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def model_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a model, or None when it can."""
    if not name:
        return "model name must not be empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"model name {_shown(name)} has {len(name)} characters, more than the limit of {MAX_NAME_LENGTH}"
    if not _MODEL_NAME.fullmatch(name):
        return f"model name {_shown(name)} may only hold letters, digits, '_', '-' and '.'"
    return None


def namespace_problem(namespace: str) -> str | None:
    """Why ``namespace`` cannot be a model's ROS namespace, or None when it can ("" is none)."""
    if not namespace:
        return None
    if len(namespace) > MAX_NAME_LENGTH:
        return (
            f"namespace {_shown(namespace)} has {len(namespace)} characters, more than the limit of {MAX_NAME_LENGTH}"
        )
    if not _NAMESPACE.fullmatch(namespace):
        return (
            f"namespace {_shown(namespace)} is not a ROS namespace (names of letters, digits and '_', "
            "not starting with a digit, separated by '/')"
        )
    return None
