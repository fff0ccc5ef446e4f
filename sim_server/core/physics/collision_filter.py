"""Collision layers as Box2D category/mask bits, as the reference simulator assigns them.

Each layer name gets one bit, in the order the world file names them; a fixture collides with
the layers it names (``categoryBits == maskBits``). Box2D filters hold 16 bits, hence at most
16 layers. The name ``all`` stands for every layer.
"""

from __future__ import annotations

from typing import Iterable

from sim_server.core.limits import MAX_LAYERS
#: The layer name that selects every layer.
ALL_LAYERS = "all"


class CollisionFilterRegistry:
    """Assigns one category bit per layer name."""

    def __init__(self) -> None:
        self._bits: dict[str, int] = {}

    @property
    def layer_names(self) -> list[str]:
        """Registered layer names in bit order."""
        return list(self._bits)

    def layer_count(self) -> int:
        """How many layers are registered."""
        return len(self._bits)

    def is_registered(self, name: str) -> bool:
        """Whether ``name`` is a registered layer."""
        return name in self._bits

    def register_layer(self, name: str) -> int:
        """Give ``name`` the next free bit and return it (``ValueError`` when full or taken)."""
        if name in self._bits:
            raise ValueError(f'layer "{name}" is already registered')
        if len(self._bits) >= MAX_LAYERS:
            raise ValueError(f'cannot register layer "{name}": at most {MAX_LAYERS} layers')
        bit = 1 << len(self._bits)
        self._bits[name] = bit
        return bit

    def category_bits(self, names: Iterable[str]) -> tuple[int, list[str]]:
        """The OR of the bits of ``names`` and the list of names that are not layers.

        ``all`` selects every registered layer.
        """
        bits = 0
        unknown: list[str] = []
        for name in names:
            if name == ALL_LAYERS:
                bits |= (1 << len(self._bits)) - 1
            elif name in self._bits:
                bits |= self._bits[name]
            else:
                unknown.append(name)
        return bits, unknown
