"""ROS naming helpers: turning entity names into valid topic name tokens."""

from __future__ import annotations

import re

_INVALID_TOKEN_CHARS = re.compile(r"[^A-Za-z0-9_]")


def topic_token(name: str) -> str:
    """Make ``name`` a valid ROS 2 topic name token.

    Characters other than letters, digits and ``_`` become ``_``, and a token that would start
    with a digit gets a leading ``_`` (so layer ``2d`` is published under ``.../layer/_2d``).
    """
    token = _INVALID_TOKEN_CHARS.sub("_", name)
    if not token or token[0].isdigit():
        token = "_" + token
    return token
