"""pedsim's scenario files (the XML scenes of ``pedsim_ros``), read strictly and with limits.

pedsim_simulator loads its scene from an XML file (its node's ``scene_file`` parameter)::

    <?xml version="1.0" encoding="UTF-8"?>
    <scenario>
      <obstacle x1="0" y1="0" x2="30" y2="0"/>
      <waypoint id="door" x="5" y="5" r="2"/>
      <queue id="desk" x="20" y="15" direction="90"/>
      <attraction id="shop" x="17" y="12" width="10" height="15" strength="5"/>
      <agent x="4" y="4" n="10" dx="3" dy="3" type="0">
        <addwaypoint id="door"/>
        <addqueue id="desk"/>
      </agent>
    </scenario>

Lengths are metres in the scenario's frame. What each element means to pedsim:

* ``<obstacle x1 y1 x2 y2>``: a wall from (x1, y1) to (x2, y2).
* ``<waypoint id x y r b>``: a circle of radius ``r`` round (x, y); a walker has reached it once
  inside. ``b`` is its behaviour: 0 simple (the default), 1 source (drawn as one, no effect in
  the simulator), 2 sink (people whose next stop it is leave the world within ``r`` of it).
* ``<queue id x y direction>``: a waiting queue; its first person waits at (x, y) (within 0.3 m)
  for a random time (Erlang, mean 1 s), the others line up behind, 0.2 to 0.8 m apart.
  ``direction`` (degrees counter-clockwise from +x, default 0) is the way the queue faces:
  the line grows in the opposite direction. Here it is given in radians, wrapped to (-pi, pi]
  as pedsim wraps it.
* ``<attraction id x y width height strength>``: a box of ``width`` x ``height`` centred on
  (x, y) (a shop, a window). A walker within 7 m of its nearest attraction is drawn to it with
  a chance of 0.02 x strength x (1 - distance / 7 m) per second, then strolls about in it.
* ``<agent x y n dx dy type>``: a cluster of ``n`` people placed uniformly in the box of
  ``dx`` x ``dy`` centred on (x, y) (pedsim splits them into groups of Poisson sizes), walking
  the stops its ``<addwaypoint id>`` and ``<addqueue id>`` children list, in order and round
  again; with none they stand. ``type`` 0 is an adult, 1 a child (walks as an adult), 3 an
  elder (pedsim's "standing" people: 0.9 m/s at most, half the pull of the goal), 2 the robot
  (pedsim moves it from TF, or along its route in its ``social_drive`` mode: kept apart here,
  in :attr:`PedsimScenario.robots`).

pedsim reads the file in order, so a stop must be defined above the agent that names it; it
keeps waypoints and queues under one set of names and attractions under another.

Read here, every attribute is checked (numbers finite and within :mod:`sim_server.core.limits`,
ids unique, references resolved) and nothing is dropped: an element or attribute the reader
does not support (pedsim's ``<source>`` among them, an element pedsim reads but whose spawning
period is a parameter of its node) ends the read. ``b``, ``direction``, ``dx``, ``dy`` and
``type`` may be left out (0, as pedsim reads a missing number); every other attribute is
required. Errors are one line naming the file, the line, the element and the attribute::

    scenario.xml:14: element <waypoint id="w1">: attribute "r" must be a finite number > 0 and <= 10000 m, got "abc"

The file is read through :func:`~sim_server.core.format.bounded_read.read_bytes` (regular files
of at most :data:`~sim_server.core.limits.MAX_SCENARIO_BYTES`) and must be UTF-8. Before the XML
parser sees it, declarations (``<!DOCTYPE``, ``<!ENTITY`` ...: entities that expand a thousand
times, or read ``file:///etc/passwd`` or a web address) and runs of more than
:data:`~sim_server.core.limits.MAX_SCENARIO_ATTRIBUTES` attributes are refused; the parser
(expat) is set to refuse them again (a DOCTYPE, an entity declaration, an external reference)
should any get through, and the elements are counted as they come.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.parsers import expat

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format.bounded_read import read_bytes, shown_path
from sim_server.core.limits import Range


class WaypointBehaviour(enum.Enum):
    """What a waypoint does besides being walked to (pedsim's ``b``)."""

    SIMPLE = 0
    SOURCE = 1
    SINK = 2


class AgentType(enum.Enum):
    """Who an agent cluster's people are (pedsim's ``type``)."""

    ADULT = 0
    CHILD = 1
    ROBOT = 2
    ELDER = 3


@dataclass(frozen=True)
class Obstacle:
    """A wall segment from (x1, y1) to (x2, y2) (m)."""

    x1: float
    y1: float
    x2: float
    y2: float
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Waypoint:
    """A waypoint: reached within ``radius`` (m) of (x, y) (m)."""

    id: str
    x: float
    y: float
    radius: float
    behaviour: WaypointBehaviour = WaypointBehaviour.SIMPLE
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Queue:
    """A waiting queue whose first person stands at (x, y) (m), facing ``direction`` (rad, in
    (-pi, pi], counter-clockwise from +x); the line grows the opposite way."""

    id: str
    x: float
    y: float
    direction: float = 0.0
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Attraction:
    """A box of ``width`` x ``height`` (m) centred on (x, y) (m) that draws walkers nearby in
    proportion to ``strength`` (pedsim: 0.02 x strength x closeness per second)."""

    id: str
    x: float
    y: float
    width: float
    height: float
    strength: float
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class AgentCluster:
    """``n`` people placed uniformly in the box of ``dx`` x ``dy`` (m) centred on (x, y) (m).

    Attributes:
        route: the ids of the waypoints and queues they walk to, in order and round again
            (empty: they stand); look them up with :meth:`PedsimScenario.place`.
    """

    x: float
    y: float
    n: int
    dx: float = 0.0
    dy: float = 0.0
    type: AgentType = AgentType.ADULT
    route: tuple[str, ...] = ()
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class PedsimScenario:
    """A scenario file's contents, in file order.

    Attributes:
        path: the file, as given.
        agents: the clusters of people (types 0, 1 and 3).
        robots: the robot agents (type 2, one each), which pedsim drives from outside.
    """

    path: Path
    obstacles: tuple[Obstacle, ...] = ()
    waypoints: tuple[Waypoint, ...] = ()
    queues: tuple[Queue, ...] = ()
    attractions: tuple[Attraction, ...] = ()
    agents: tuple[AgentCluster, ...] = ()
    robots: tuple[AgentCluster, ...] = ()

    @property
    def people(self) -> int:
        """People of all clusters (robots not counted)."""
        return sum(cluster.n for cluster in self.agents)

    def place(self, name: str) -> Waypoint | Queue:
        """The waypoint or queue called ``name`` (KeyError if there is none)."""
        for place in (*self.waypoints, *self.queues):
            if place.id == name:
                return place
        raise KeyError(name)


def read_pedsim_scenario(path: Path | str) -> PedsimScenario:
    """Read and check the pedsim scenario file at ``path``.

    Raises:
        ConfigError: one line naming the file, and where the file is at fault the line, the
            element and the attribute.
    """
    path = Path(path)
    data = read_bytes(path, "pedsim scenario file", limits.MAX_SCENARIO_BYTES)
    shown = shown_path(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"{shown}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "pedsim scenario files are read as UTF-8"
        ) from None
    refuse_hazards(text, shown)
    reader = _ScenarioReader(shown)
    reader.parse(data)
    return PedsimScenario(
        path=path,
        obstacles=tuple(reader.obstacles),
        waypoints=tuple(reader.waypoints),
        queues=tuple(reader.queues),
        attractions=tuple(reader.attractions),
        agents=tuple(reader.agents),
        robots=tuple(reader.robots),
    )


# ------------------------------------------------------------------------------------ before parsing
#: ``<!`` that opens neither a comment nor a CDATA section: a DOCTYPE, ENTITY, ELEMENT, ATTLIST
#: or NOTATION declaration (also inside a comment: the check does not parse).
_DECLARATION = re.compile(r"<!(?!--|\[CDATA\[)")
#: A start tag (or text that looks like one, in a comment say) with more than
#: MAX_SCENARIO_ATTRIBUTES name="value" pairs. It begins with "<", so the search only stops at
#: "<", and possessive quantifiers never backtrack: linear in the text's length (0.4 s for the
#: worst 16 MiB found).
_ATTRIBUTE_RUN = re.compile(
    r"<[^\s/<>!?=\"']++(?:\s++[^\s/<>=\"']++\s*+=\s*+(?:\"[^\"<]*+\"|'[^'<]*+')){%d}"
    % (limits.MAX_SCENARIO_ATTRIBUTES + 1)
)


def refuse_hazards(text: str, shown: str) -> None:
    """Refuse what the XML parser must never be given: declarations (entities, DTDs) and more
    attributes in a row than :data:`~sim_server.core.limits.MAX_SCENARIO_ATTRIBUTES`.

    Args:
        text: the whole file.
        shown: the file as errors name it.

    Raises:
        ConfigError: naming the file and the line.
    """
    found = _DECLARATION.search(text)
    if found is not None:
        raise ConfigError(
            f"{shown}:{_line_of(text, found.start())}: declarations (<!DOCTYPE, <!ENTITY, ...) are not supported: a "
            "scenario needs no DTD, and entities can expand without end or read other files and web addresses"
        )
    found = _ATTRIBUTE_RUN.search(text)
    if found is not None:
        raise ConfigError(
            f"{shown}:{_line_of(text, found.start())}: more than the limit of {limits.MAX_SCENARIO_ATTRIBUTES} "
            f"attributes in a row (pedsim's elements take at most {max(map(len, _ATTRIBUTES.values()))})"
        )


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# ------------------------------------------------------------------------------------ the elements
#: The elements each element may contain; the rest contain none.
_CHILDREN: dict[str, tuple[str, ...]] = {
    "scenario": ("obstacle", "waypoint", "queue", "attraction", "agent"),
    "agent": ("addwaypoint", "addqueue"),
}
#: The attributes of each element, in pedsim's order.
_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "scenario": (),
    "obstacle": ("x1", "y1", "x2", "y2"),
    "waypoint": ("id", "x", "y", "r", "b"),
    "queue": ("id", "x", "y", "direction"),
    "attraction": ("id", "x", "y", "width", "height", "strength"),
    "agent": ("x", "y", "n", "dx", "dy", "type"),
    "addwaypoint": ("id",),
    "addqueue": ("id",),
}
#: Why elements pedsim knows, where they stand, are not read.
_NOT_SUPPORTED_WHY = {
    "source": (
        "pedsim adds its n people again every spawn_period s, a parameter of pedsim's node the file "
        "does not hold: give the world file's crowd a spawner instead"
    ),
    "addwaypoint": "it belongs inside an <agent>",
    "addqueue": "it belongs inside an <agent>",
}
#: The values of ``b`` and ``type``, and their words.
_BEHAVIOUR_VALUES = Range(0, len(WaypointBehaviour) - 1)
_BEHAVIOURS = "0 (simple), 1 (source) or 2 (sink)"
_TYPE_VALUES = Range(0, len(AgentType) - 1)
_TYPES = "0 (adult), 1 (child), 2 (robot) or 3 (elder)"
#: Declared encodings accepted (the file is read as UTF-8, of which ASCII is a part).
_ENCODINGS = ("utf-8", "us-ascii", "ascii")
#: A number as pedsim's files write one (Qt's toDouble without its "inf" and "nan").
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WHOLE = re.compile(r"[+-]?[0-9]+")
#: XML's white space, which Qt's number parsing skips round a value.
_XML_SPACE = " \t\r\n"
#: Characters of a value shown in an error.
_SHOWN_VALUE_CHARS = 60
#: The count of one cluster (the sum is bounded by the same limit).
_CLUSTER_SIZE = Range(0, limits.MAX_PEDESTRIANS)


def _quoted(value: str) -> str:
    """``value`` for an error: in double quotes, cut to _SHOWN_VALUE_CHARS, quotes, backslashes
    and non-printable characters escaped (so that an error stays one line)."""
    if len(value) > _SHOWN_VALUE_CHARS:
        value = value[: _SHOWN_VALUE_CHARS - 3] + "..."
    return '"' + "".join(_escaped(char) for char in value) + '"'


def _escaped(char: str) -> str:
    if char in '"\\':
        return "\\" + char
    return char if char.isprintable() else char.encode("unicode_escape").decode("ascii")


def _tag(name: str) -> str:
    """An element's name as ``<name>`` for an error (cut and escaped as :func:`_quoted`)."""
    return f"<{_quoted(name)[1:-1]}>"


class _Element:
    """One start tag's attributes, read by kind; errors name the file, line, element and
    attribute."""

    def __init__(self, file: str, name: str, attributes: dict[str, str], line: int) -> None:
        self.file = file
        self.name = name
        self.attributes = attributes
        self.line = line
        supported = _ATTRIBUTES[name]
        for key in attributes:
            if key not in supported:
                known = f"supported: {', '.join(supported)}" if supported else f"<{name}> takes none"
                raise self.error(f"is not supported ({known})", key)

    def describe(self) -> str:
        """``element <waypoint id="w1">``, or without the id where there is none."""
        ident = self.attributes.get("id")
        return f"element <{self.name} id={_quoted(ident)}>" if ident is not None else f"element <{self.name}>"

    def error(self, message: str, key: str | None = None) -> ConfigError:
        """An error about attribute ``key`` of this element (or the element itself)."""
        subject = f'attribute "{key}" ' if key is not None else ""
        return ConfigError(f"{self.file}:{self.line}: {self.describe()}: {subject}{message}")

    def number(self, key: str, within: Range, required: bool = True) -> float:
        """A decimal number in ``within`` (0 when optional and missing, as pedsim reads it)."""
        value = self.attributes.get(key)
        if value is None:
            if required:
                raise self.error(f"is missing (it must be {within.describe()})", key)
            return 0.0
        text = value.strip(_XML_SPACE)
        number = float(text) if _DECIMAL.fullmatch(text) else math.nan
        if not within.contains(number):
            raise self.error(f"must be {within.describe()}, got {_quoted(value)}", key)
        return number

    def whole(self, key: str, within: Range, what: str = "", required: bool = True) -> int:
        """A whole number in ``within`` (0 when optional and missing); ``what`` words it."""
        value = self.attributes.get(key)
        what = what or f"a whole number from {within.low:g} to {within.high:g}"
        if value is None:
            if required:
                raise self.error(f"is missing (it must be {what})", key)
            return 0
        text = value.strip(_XML_SPACE)
        try:
            number = int(text) if _WHOLE.fullmatch(text) else None
        except ValueError:  # more digits than Python converts: beyond every range anyway
            number = None
        if number is None or not within.contains(number):
            raise self.error(f"must be {what}, got {_quoted(value)}", key)
        return number

    def identifier(self, key: str = "id") -> str:
        """A name: 1 to MAX_NAME_LENGTH printable characters."""
        what = f"a name of 1 to {limits.MAX_NAME_LENGTH} printable characters"
        value = self.attributes.get(key)
        if value is None:
            raise self.error(f"is missing (it must be {what})", key)
        if not value or len(value) > limits.MAX_NAME_LENGTH or not value.isprintable():
            raise self.error(f"must be {what}, got {_quoted(value)}", key)
        return value


class _ScenarioReader:
    """Reads one scenario with expat, element by element (nothing of the document is kept but
    what it describes)."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.obstacles: list[Obstacle] = []
        self.waypoints: list[Waypoint] = []
        self.queues: list[Queue] = []
        self.attractions: list[Attraction] = []
        self.agents: list[AgentCluster] = []
        self.robots: list[AgentCluster] = []
        self._places: dict[str, Waypoint | Queue] = {}
        self._attraction_lines: dict[str, int] = {}
        self._open: list[str] = []  # the elements open, outermost first
        self._elements = 0
        self._people = 0
        self._cluster: AgentCluster | None = None  # the <agent> being read, its stops in _route
        self._route: list[str] = []
        self._stray: tuple[int, list[str]] | None = None  # text met: its line and first pieces
        parser = expat.ParserCreate(encoding="UTF-8")
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.XmlDeclHandler = self._declaration
        parser.StartDoctypeDeclHandler = self._refuse_declaration
        parser.EntityDeclHandler = self._refuse_declaration
        parser.ExternalEntityRefHandler = self._refuse_declaration
        parser.ProcessingInstructionHandler = self._instruction
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._text
        self._parser = parser

    def parse(self, data: bytes) -> None:
        """Parse the whole file (``data``: its bytes, UTF-8)."""
        try:
            self._parser.Parse(data, True)
        except expat.ExpatError as exc:
            reason = expat.errors.messages.get(exc.code, str(exc))
            raise ConfigError(f"{self.file}:{exc.lineno}: invalid XML at column {exc.offset + 1}: {reason}") from None

    def _error(self, message: str) -> ConfigError:
        return ConfigError(f"{self.file}:{self._parser.CurrentLineNumber}: {message}")

    # ----------------------------------------------------------------------------- what XML has besides elements
    def _declaration(self, version: str, encoding: str | None, standalone: int) -> None:
        if encoding is not None and encoding.lower() not in _ENCODINGS:
            raise self._error(f"encoding {_quoted(encoding)} is not supported: pedsim scenario files are read as UTF-8")

    def _refuse_declaration(self, *arguments: Any) -> None:
        raise self._error(
            "declarations (<!DOCTYPE, <!ENTITY, ...) and external entities are not supported: a scenario needs no DTD"
        )

    def _instruction(self, target: str, data: str) -> None:
        self._refuse_stray_text()
        raise self._error(f"processing instruction <?{_quoted(target)[1:-1]}?> is not supported")

    def _text(self, data: str) -> None:
        """Collect text that is not white space (expat hands it over in pieces, an entity
        apart): the next tag refuses it, naming the line it began on."""
        if self._stray is None:
            if not data.strip(_XML_SPACE):
                return
            self._stray = (self._parser.CurrentLineNumber, [])
        pieces = self._stray[1]
        if sum(len(piece) for piece in pieces) <= _SHOWN_VALUE_CHARS:
            pieces.append(data)

    def _refuse_stray_text(self) -> None:
        if self._stray is not None:
            line, pieces = self._stray
            inside = self._open[-1] if self._open else "scenario"
            raise ConfigError(
                f"{self.file}:{line}: text {_quoted(''.join(pieces).strip(_XML_SPACE))} is not supported inside "
                f"<{inside}> (pedsim's elements hold attributes and elements only)"
            )

    # ----------------------------------------------------------------------------- elements
    def _start(self, name: str, attributes: dict[str, str]) -> None:
        self._refuse_stray_text()
        self._elements += 1
        if self._elements > limits.MAX_SCENARIO_ELEMENTS:
            raise self._error(f"more than the limit of {limits.MAX_SCENARIO_ELEMENTS} elements")
        self._check_place(name)
        self._open.append(name)
        element = _Element(self.file, name, attributes, self._parser.CurrentLineNumber)
        if name == "obstacle":
            self._obstacle(element)
        elif name == "waypoint":
            self._waypoint(element)
        elif name == "queue":
            self._queue(element)
        elif name == "attraction":
            self._attraction(element)
        elif name == "agent":
            self._agent(element)
        elif name in ("addwaypoint", "addqueue"):
            self._stop(element)

    def _check_place(self, name: str) -> None:
        """Refuse ``name`` where it stands: unknown, or not inside the element it belongs to."""
        if not self._open:
            if name != "scenario":
                raise self._error(f"the root element must be <scenario>, got {_tag(name)}")
            return
        parent = self._open[-1]
        allowed = _CHILDREN.get(parent, ())
        if name in allowed:
            return
        shown = _tag(name)
        if not allowed:
            raise self._error(f"element {shown} is not supported inside <{parent}>, which takes no elements")
        where = "" if parent == "scenario" else f" inside <{parent}>"
        why = f"; {_NOT_SUPPORTED_WHY[name]}" if parent == "scenario" and name in _NOT_SUPPORTED_WHY else ""
        raise self._error(f"element {shown} is not supported{where} (supported: {', '.join(allowed)}){why}")

    def _end(self, name: str) -> None:
        self._refuse_stray_text()
        self._open.pop()
        if name == "agent" and self._cluster is not None:
            c = self._cluster
            cluster = AgentCluster(c.x, c.y, c.n, c.dx, c.dy, c.type, tuple(self._route), line=c.line)
            (self.robots if cluster.type is AgentType.ROBOT else self.agents).append(cluster)
            self._cluster = None
            self._route = []

    def _point(self, element: _Element, x: str, y: str) -> tuple[float, float]:
        return element.number(x, limits.COORDINATE), element.number(y, limits.COORDINATE)

    def _obstacle(self, element: _Element) -> None:
        x1, y1 = self._point(element, "x1", "y1")
        x2, y2 = self._point(element, "x2", "y2")
        if x1 == x2 and y1 == y2:
            raise element.error("has zero length (x1, y1 is x2, y2): pedsim's wall force divides by it")
        self.obstacles.append(Obstacle(x1, y1, x2, y2, line=element.line))

    def _waypoint(self, element: _Element) -> None:
        ident = self._new_place_id(element)
        x, y = self._point(element, "x", "y")
        radius = element.number("r", limits.LENGTH)
        behaviour = element.whole("b", _BEHAVIOUR_VALUES, _BEHAVIOURS, required=False)
        waypoint = Waypoint(ident, x, y, radius, WaypointBehaviour(behaviour), line=element.line)
        self.waypoints.append(waypoint)
        self._places[ident] = waypoint

    def _queue(self, element: _Element) -> None:
        ident = self._new_place_id(element)
        x, y = self._point(element, "x", "y")
        degrees = element.number("direction", limits.QUEUE_DIRECTION, required=False)
        queue = Queue(ident, x, y, _wrapped_radians(degrees), line=element.line)
        self.queues.append(queue)
        self._places[ident] = queue

    def _attraction(self, element: _Element) -> None:
        ident = element.identifier()
        if ident in self._attraction_lines:
            raise element.error(f"is defined already, by the <attraction> at line {self._attraction_lines[ident]}", "id")
        x, y = self._point(element, "x", "y")
        width = element.number("width", limits.DISTANCE)
        height = element.number("height", limits.DISTANCE)
        self._check_box(element, x, y, width, height, "width", "height")
        strength = element.number("strength", limits.CROWD_FACTOR)
        self.attractions.append(Attraction(ident, x, y, width, height, strength, line=element.line))
        self._attraction_lines[ident] = element.line

    def _agent(self, element: _Element) -> None:
        x, y = self._point(element, "x", "y")
        n = element.whole("n", _CLUSTER_SIZE)
        dx = element.number("dx", limits.DISTANCE, required=False)
        dy = element.number("dy", limits.DISTANCE, required=False)
        self._check_box(element, x, y, dx, dy, "dx", "dy")
        kind = AgentType(element.whole("type", _TYPE_VALUES, _TYPES, required=False))
        if kind is AgentType.ROBOT:
            if n != 1:
                raise element.error(f'must be 1 for a robot agent (type="2"), got {_quoted(element.attributes["n"])}', "n")
        else:
            self._people += n
            if self._people > limits.MAX_PEDESTRIANS:
                raise element.error(
                    f"brings the scenario's people to {self._people}, more than the limit of {limits.MAX_PEDESTRIANS}", "n"
                )
        self._cluster = AgentCluster(x, y, n, dx, dy, kind, line=element.line)

    def _stop(self, element: _Element) -> None:
        ident = element.identifier()
        place = self._places.get(ident)
        if place is None:
            raise element.error(
                f"names {_quoted(ident)}, which no <waypoint> or <queue> above it defines (pedsim reads the file in "
                "order: define it before the agent)",
                "id",
            )
        if element.name == "addqueue" and not isinstance(place, Queue):
            raise element.error(
                f"names the <waypoint> at line {place.line}, not a <queue>: pedsim would give these people no "
                "destination there (use <addwaypoint>)",
                "id",
            )
        if len(self._route) >= limits.MAX_WAYPOINTS:
            raise element.error(f"is one stop more than the limit of {limits.MAX_WAYPOINTS} of an agent's route")
        self._route.append(ident)

    def _new_place_id(self, element: _Element) -> str:
        ident = element.identifier()
        other = self._places.get(ident)
        if other is not None:
            kind = "waypoint" if isinstance(other, Waypoint) else "queue"
            raise element.error(
                f"is defined already, by the <{kind}> at line {other.line} (waypoints and queues share pedsim's names)",
                "id",
            )
        return ident

    @staticmethod
    def _check_box(element: _Element, x: float, y: float, width: float, height: float, *keys: str) -> None:
        """Refuse a box (centre x, y, sides width, height in m) reaching beyond the world's
        coordinates."""
        for centre, side, key in ((x, width, keys[0]), (y, height, keys[1])):
            if abs(centre) + side / 2.0 > limits.COORDINATE.high:
                raise element.error(
                    f"makes the box reach beyond +-{limits.COORDINATE.high:g} m (centre {centre:g} m, side {side:g} m)", key
                )


def _wrapped_radians(degrees: float) -> float:
    """``degrees`` in radians, wrapped to (-pi, pi] as pedsim's Tangle wraps an angle."""
    wrapped = math.remainder(degrees, 360.0)
    if wrapped == -180.0:
        wrapped = 180.0
    return math.radians(wrapped)
