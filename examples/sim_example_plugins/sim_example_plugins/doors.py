"""Doors: sliding doors that open and close on a schedule, a world plugin.

Each door is a model (``model``: a model file, relative to the world file's folder) that the
plugin adds as the world loads, at its closed pose, and slides between its ``closed`` and
``open`` poses ([x, y, yaw], m and rad, world frame) at ``speed`` (m/s, 0.5): closed for
``closed_for`` s, then opening, open for ``open_for`` s, then closing, and so on (``closed_for``
0: it starts opening at once). A door is a kinematic body: lasers, sonars and pictures see it, and
it pushes whatever stands in its way, as a real motorised door would (people walk around the
walls of their layers, not around doors).

World file::

    plugins:
      - type: Doors
        name: doors
        model: door.model.yaml
        doors:
          - {name: door1, closed: [0, 0, 0], open: [0, 1.3, 0], closed_for: 5, open_for: 5}

In-process, :meth:`Doors.hold` keeps a door open or closed (it slides there and stays) and
:meth:`Doors.follow_schedule` gives it back to its schedule; :meth:`Doors.state` says where it is.
The schedule runs on sim time, so a run is the same every time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sim_server.core.plugins import (
    ConfigError, EntityError, Pose2D, RequestError, UpdateInfo, WorldPlugin, YamlReader, limits,
)

#: What a door is doing.
CLOSED, OPENING, OPEN, CLOSING = "closed", "opening", "open", "closing"
#: Doors one plugin may drive.
MAX_DOORS = 100
SPEED = limits.Range(0.0, 100.0, "m/s", open_low=True)


@dataclass
class Door:
    """One door: its model's name, its two poses, its schedule (s) and speed (m/s)."""

    name: str
    closed_pose: Pose2D
    open_pose: Pose2D
    closed_for: float
    open_for: float
    speed: float
    #: 0 (closed) to 1 (open): how far along its path it is.
    opening: float = 0.0
    #: Held open (True) or closed (False) by request; None: on its schedule.
    held: bool | None = None

    @property
    def travel(self) -> float:
        """The path's length (m)."""
        return math.hypot(self.open_pose.x - self.closed_pose.x, self.open_pose.y - self.closed_pose.y)

    def wanted_open(self, sim_time: float) -> bool:
        """Whether the door should be open (or opening) at ``sim_time`` (s)."""
        if self.held is not None:
            return self.held
        slide = self.travel / self.speed
        period = self.closed_for + self.open_for + 2.0 * slide
        phase = sim_time % period if period > 0.0 else 0.0
        return self.closed_for <= phase < self.closed_for + slide + self.open_for

    def pose(self) -> Pose2D:
        """Where it is along its path now."""
        f = self.opening
        c, o = self.closed_pose, self.open_pose
        return Pose2D(c.x + f * (o.x - c.x), c.y + f * (o.y - c.y), c.theta + f * (o.theta - c.theta))


class Doors(WorldPlugin):
    """Adds its doors as the world loads and slides them on their schedules (see the module)."""

    def on_initialize(self, config: YamlReader) -> None:
        world = self.context.world
        model_file = config.get_str("model")
        entries = config.get_map_list("doors")
        if not entries or len(entries) > MAX_DOORS:
            raise config.error(f"must list 1 to {MAX_DOORS} doors, got {len(entries)}", "doors")
        self.doors: dict[str, Door] = {}
        for entry in entries:
            door = Door(
                entry.get_name("name"), entry.get_pose("closed"), entry.get_pose("open"),
                entry.get_float("closed_for", 5.0, within=limits.DURATION),
                entry.get_float("open_for", 5.0, within=limits.DURATION),
                entry.get_float("speed", 0.5, within=SPEED),
            )
            entry.ensure_all_keys_used()
            if door.name in self.doors:
                raise entry.error(f'names door "{door.name}" twice', "name")
            if door.travel == 0.0:
                raise entry.error("must differ from the closed pose in x or y", "open")
            self.doors[door.name] = door
        added: list[str] = []
        for door in self.doors.values():
            try:
                world.spawn_model(model_file, door.name, pose=door.closed_pose)
            except (ConfigError, EntityError, RequestError) as error:  # a bad file, a taken name: none stays
                for name in added:
                    world.delete_model(name)
                raise config.error(f'cannot add door "{door.name}": {error}', "doors") from None
            added.append(door.name)

    def state(self, name: str) -> str:
        """What door ``name`` is doing now: :data:`CLOSED`, :data:`OPENING`, :data:`OPEN` or
        :data:`CLOSING`."""
        door = self._door(name)
        wanted = door.wanted_open(self.context.world.time.sim_time)
        if door.opening >= 1.0 and wanted:
            return OPEN
        if door.opening <= 0.0 and not wanted:
            return CLOSED
        return OPENING if wanted else CLOSING

    def hold(self, name: str, open_: bool) -> None:
        """Keep door ``name`` open (or closed): it slides there and stays."""
        self._door(name).held = open_

    def follow_schedule(self, name: str) -> None:
        """Give door ``name`` back to its schedule."""
        self._door(name).held = None

    def _door(self, name: str) -> Door:
        if name not in self.doors:
            raise KeyError(f'no door named "{name}" (doors: {", ".join(self.doors)})')
        return self.doors[name]

    def pre_update(self, info: UpdateInfo) -> None:
        """Slide each door one step towards where its schedule wants it: its body gets the
        velocity that brings it there by the end of the step (zero while paused or at rest)."""
        world = self.context.world
        for door in self.doors.values():
            model = world.models.get(door.name)
            if model is None:  # deleted (a reset of spawned models): the door is gone
                continue
            body = model.first_body.physics_body
            if info.step_size <= 0.0:
                body.linearVelocity, body.angularVelocity = (0.0, 0.0), 0.0
                continue
            now = door.pose()
            # the time the step starts at: info carries the time reached after it
            target = 1.0 if door.wanted_open(info.sim_time - info.step_size) else 0.0
            step = door.speed * info.step_size / door.travel
            door.opening = min(door.opening + step, target) if target > door.opening else max(door.opening - step, target)
            then = door.pose()
            body.linearVelocity = ((then.x - now.x) / info.step_size, (then.y - now.y) / info.step_size)
            body.angularVelocity = (then.theta - now.theta) / info.step_size
