"""ROS naming helpers: entity names (layers, models) as visible, unique topic name tokens.

A layer or model gets debug topics named after it (``~/debug/layer/<token>``,
``~/debug/model/<token>``). ROS 2 accepts only letters, digits and ``_`` in a token, not a
leading digit, and *hides* every name that has a token starting with ``_`` (``ros2 topic list``
and ``ros2 node info`` leave it out without ``--include-hidden-topics``). So an entity name
becomes its token by this rule (:func:`topic_token`):

1. ASCII letters and digits stay; every run of other characters (``_``, ``-``, ``.``, spaces,
   ``/``, ``~``, ``{}``, non-ASCII letters, ...) becomes one ``_``.
2. ``_`` at the start and at the end is dropped (a leading one would hide the topic).
3. A token starting with a digit gets the entity's kind in front: layer ``2d`` becomes
   ``layer_2d``, model ``3pi`` becomes ``model_3pi``.
4. A name with no letter or digit left (``"~~"``, ``"地图"``) becomes ``<kind>_<hash>``, the hash
   being the first 8 hexadecimal digits of the SHA-256 of the name's UTF-8 bytes.

A name of ASCII letters, digits and single inner ``_`` that starts with a letter (``walls``,
``cleaner1``, ``R1``, ``front_laser``) is its own token. Different names can map
to one token (``a.b`` and ``a-b`` both give ``a_b``): :class:`TopicTokens` keeps tokens unique
per kind. The first entity to appear gets the plain token; another one whose token is taken gets
``_<hash>`` appended (its name's hash as above; then ``_2``, ``_3``, ... in the unlikely case that
is taken too). A token stays with its name as long as the name holds it (for a model, as long as
its topic exists, including the time a deleted model's topic is kept), so the result depends only
on the order in which entities appear, which is the world file's order for the entities it lists.
"""

from __future__ import annotations

import hashlib
import re

#: The debug marker topics of every layer and of every model (relative to the server node).
ALL_LAYERS_TOPIC = "~/debug/layers"
ALL_MODELS_TOPIC = "~/debug/models"
#: Every pedestrian's state, and their markers (sim_server.ros.pedestrians).
PEDESTRIANS_TOPIC = "~/pedestrians"
PEDESTRIAN_MARKERS_TOPIC = "~/debug/pedestrians"
SOCIAL_METRICS_TOPIC = "~/social_metrics"
#: Every run of characters that may not stand in a token (``_`` included, so runs collapse).
_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")
#: Hex digits of the name's hash used in tokens.
HASH_DIGITS = 8


def name_hash(name: str) -> str:
    """The first :data:`HASH_DIGITS` hex digits of the SHA-256 of ``name`` (UTF-8; lone surrogates
    kept as they are)."""
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_DIGITS]


def topic_token(name: str, kind: str = "entity") -> str:
    """``name`` as a valid ROS 2 topic name token that does not hide its topic (see the module doc).

    Args:
        name: any string (a layer's or model's name).
        kind: what the name belongs to (``layer``, ``model``): the prefix of a token that would
            start with a digit or be empty. It must itself be a valid token starting with a letter.
    """
    token = _SEPARATORS.sub("_", name).strip("_")
    if not token:
        return f"{kind}_{name_hash(name)}"
    if token[0].isdigit():
        return f"{kind}_{token}"
    return token


class TopicTokens:
    """Unique tokens for the names of one kind of entity (see the module doc).

    Args:
        kind: ``layer`` or ``model``; the prefix of tokens that need one.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._by_name: dict[str, str] = {}
        self._by_token: dict[str, str] = {}

    def claim(self, name: str) -> str:
        """The token of ``name``: the one it holds, or a new one no other name holds."""
        token = self._by_name.get(name)
        if token is not None:
            return token
        base = topic_token(name, self.kind)
        token = base
        if token in self._by_token:
            token = f"{base}_{name_hash(name)}"
            suffix = 2
            while token in self._by_token:
                token = f"{base}_{name_hash(name)}_{suffix}"
                suffix += 1
        self._by_name[name] = token
        self._by_token[token] = name
        return token

    def release(self, name: str) -> None:
        """``name`` no longer holds its token (its topic is gone)."""
        token = self._by_name.pop(name, None)
        if token is not None:
            del self._by_token[token]

    def __len__(self) -> int:
        return len(self._by_name)
