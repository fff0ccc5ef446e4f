"""Replicas: copies of one world side by side in one physics world.

Many copies of a world (for learning: one robot each) step together when they share one Box2D
world and one ray-casting scene: one ``Step`` moves them all, plugins of a type run as one batch,
and all lasers are cast in one compiled call. The copies are laid on a grid, ``spacing`` metres
apart, far enough that their bodies never touch and no laser reaches a neighbour, as long as
everything stays within the world's extent (its walls and its models' start poses) plus the
margin. Copy ``i`` of model ``name`` is ``name_i`` (its namespace too); layers keep their names
(a name stands for a collision category, shared by all copies).

Pure data: :class:`sim_server.core.world.World` places the copies.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from sim_server.core.geometry import Pose2D

#: Most copies of one world (each copy is a set of Box2D bodies; 4096 rooms of the learning world
#: take about 4 to 8 s to load here).
MAX_REPLICAS = 4096
#: Least gap between neighbouring copies' extents (m).
MIN_MARGIN = 1.0
#: Largest margin (m): copies are laid in float64 coordinates that Box2D reads as float32.
MAX_MARGIN = 10_000.0


@dataclass(frozen=True)
class Replicas:
    """How many copies of a world, and how far apart.

    Attributes:
        count: copies (1: the world as it is, names unchanged).
        margin: gap between neighbouring copies' extents (m); make it longer than the longest
            laser's range so that no laser sees another copy.
    """

    count: int = 1
    margin: float = 10.0

    def __post_init__(self) -> None:
        if not isinstance(self.count, int) or isinstance(self.count, bool) or not 1 <= self.count <= MAX_REPLICAS:
            raise ValueError(f"replicas: count must be a whole number from 1 to {MAX_REPLICAS}, got {self.count!r}")
        margin = self.margin
        if not isinstance(margin, (int, float)) or isinstance(margin, bool) or not MIN_MARGIN <= margin <= MAX_MARGIN:
            raise ValueError(f"replicas: margin must be from {MIN_MARGIN:g} to {MAX_MARGIN:g} m, got {margin!r}")

    @property
    def columns(self) -> int:
        """Copies per row of the grid (rows fill up first along x)."""
        return math.ceil(math.sqrt(self.count))

    def offsets(self, extent: tuple[float, float, float, float]) -> tuple[Pose2D, ...]:
        """Where each copy's world frame lies, for a world of ``extent`` (x_min, y_min, x_max,
        y_max in m): copy 0 stays where the world is."""
        if self.count == 1:
            return (Pose2D(),)
        x_min, y_min, x_max, y_max = extent
        spacing = max(x_max - x_min, y_max - y_min) + self.margin
        columns = self.columns
        return tuple(Pose2D(float((i % columns) * spacing), float((i // columns) * spacing), 0.0) for i in range(self.count))

    def name(self, name: str, index: int) -> str:
        """Copy ``index``'s name for ``name`` (a model or namespace); "" stays ""."""
        if self.count == 1 or not name:
            return name
        return f"{name}_{index}"


def extent(boxes: Iterable[tuple[float, float, float, float]], points: Iterable[tuple[float, float]]) -> tuple[float, float, float, float]:
    """The box (x_min, y_min, x_max, y_max, m) around world-frame ``boxes`` (of the same form)
    and ``points``; a world with neither is a point at the origin."""
    xs: list[float] = []
    ys: list[float] = []
    for x_min, y_min, x_max, y_max in boxes:
        xs += [x_min, x_max]
        ys += [y_min, y_max]
    for x, y in points:
        xs.append(x)
        ys.append(y)
    if not xs:
        return (0.0, 0.0, 0.0, 0.0)
    return (min(xs), min(ys), max(xs), max(ys))
