"""The catalogue of every key the world, map, model, crowd and plugin readers accept, found by
watching them read.

The readers read every key through :class:`~sim_server.core.format.yaml_reader.YamlReader`, so
while :func:`recording` is active the readers that the world, model and map files make (and,
with :func:`sim_server.core.key_reference.recording_all`, those the plugin manager makes) are
:class:`RecordingReader` s, which log each key read (:class:`Read`): the file
kind or plugin it belongs to, its path (``layers[].streaming.tile_size``), the reader method and
its arguments (default, range, choices), whether the code asked first whether it is there, and
which module read it. :func:`build_catalog` merges the reads of many loads into one
:class:`KeyEntry` per key, with the meanings and units that code cannot know taken from
:mod:`~sim_server.core.format.key_notes`; :func:`render_markdown` writes the reference page
(``docs/keys.md``, made by the docs build from :mod:`sim_server.core.key_reference`'s exemplars).

Nothing changes for a reader outside :func:`recording`. Inside it the patched names are module
globals, so a recording is for one thread: the docs build and the tests.
"""

from __future__ import annotations

import contextlib
import functools
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from sim_server.core.format import key_notes
from sim_server.core.format import map_file, model_file, world_file
from sim_server.core.format import yaml_preprocessor
from sim_server.core.format.yaml_preprocessor import ENABLED_KEY, TOGGLEABLE_LISTS
from sim_server.core.format.yaml_reader import REQUIRED, YamlReader
from sim_server.core import limits
from sim_server.core.geometry import Pose2D
from sim_server.core.limits import Range

#: The reader methods that read a key (each logged as one :class:`Read`).
READ_METHODS: tuple[str, ...] = tuple(name for name in vars(YamlReader) if name.startswith("get_"))
#: The path element of a key whose name the file chooses (a region's, a plugin entry's own keys).
ANY_NAME = "*"
#: Keys whose value says which other keys an entry has, by scope and the path of their entry.
DISCRIMINATORS: dict[tuple[str, tuple[str, ...]], str] = {
    ("map", ()): "type",
    ("model", ("bodies[]", "footprints[]")): "type",
    ("model", ("joints[]",)): "type",
    ("world", ("pedestrians[]",)): "model",
}
#: How a discriminator's value is shown where it is not a word (a map without ``type``).
VARIANT_LABELS: dict[str, str] = {"": "image map", "line_segments": "line-segment map"}


@dataclass(frozen=True)
class Read:
    """One key read.

    Attributes:
        scope: what file or plugin the key is of: ``world``, ``model``, ``map``, ``plugin Laser``.
        path: the entries from the file's top to the key (``("layers[]", "streaming", "buffer")``;
            ``[]`` marks a list of entries, :data:`ANY_NAME` a key the file names).
        method: the reader method (``get_float``), or ``ignore`` (accepted, not used).
        args: its arguments after the key (default, size ...).
        kwargs: its keyword arguments (``within``, ``choices`` ...).
        guarded: the code asked first whether the key is there (so it is optional).
        variant: the value of the entry's discriminator (:data:`DISCRIMINATORS`), or None where
            the entry has none or it is not read yet (a key of every variant).
        module: the module that read it.
    """

    scope: str
    path: tuple[str, ...]
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    guarded: bool
    variant: str | None
    module: str

    @property
    def key(self) -> str:
        """The key itself (the last of the path)."""
        return self.path[-1]

    def argument(self, name: str, position: int, default: Any = None) -> Any:
        """The argument ``name`` (``position`` among those after the key), or ``default``."""
        if name in self.kwargs:
            return self.kwargs[name]
        return self.args[position] if len(self.args) > position else default

    @property
    def default(self) -> Any:
        """The default the read gave (:data:`REQUIRED` for none)."""
        if self.method == "ignore":
            return None
        position = {"get_floats": 1, "get_ints": 1, "get_choice": 1, "get_point_list": 2}.get(self.method, 0)
        return self.argument("default", position, REQUIRED)


class KeyRecorder:
    """Where the recording readers log: :attr:`reads`, and the plugin being initialised."""

    def __init__(self) -> None:
        self.reads: list[Read] = []
        #: The type of the plugin whose keys are being read ("" between plugins).
        self.plugin_type = ""

    def scope_for(self, kind: str) -> str:
        """The scope of a top-level reader made for ``kind`` (``plugin`` gets the plugin's type)."""
        return f"plugin {self.plugin_type}" if kind == "plugin" else kind


class RecordingReader(YamlReader):
    """A :class:`YamlReader` that logs the keys read into its class's :attr:`recorder`.

    The readers a module makes are of a subclass naming their :attr:`kind` (:func:`recording`);
    the readers of nested maps share their parent's scope, path and variant.
    """

    recorder: KeyRecorder = KeyRecorder()
    kind = ""

    def __init__(
        self, data: Any, file: Path, location: str = "", *, scope: str | None = None,
        path: tuple[str, ...] = (), variant: str | None = None,
    ) -> None:
        super().__init__(data, file, location)
        self.scope = self.recorder.scope_for(self.kind) if scope is None else scope
        self.path = path
        self.variant = variant
        self._depth = 0
        self._pending: tuple[str, ...] = path
        self._probed: set[str] = set()
        self._listed: set[str] = set()

    def has(self, key: str) -> bool:
        self._probed.add(key)
        return super().has(key)

    def keys(self) -> list[str]:
        listed = super().keys()
        self._listed.update(listed)
        return listed

    def ignore(self, *keys: str) -> None:
        caller = sys._getframe(1).f_globals.get("__name__", "")
        for key in keys:
            self._log(key, "ignore", (), {}, caller)
        super().ignore(*keys)

    def _log(self, key: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any], module: str) -> None:
        name = ANY_NAME if key in self._listed else key
        self.recorder.reads.append(
            Read(self.scope, self.path + (name,), method, args, kwargs, key in self._probed, self.variant, module)
        )

    def _child(self, data: Any, location: str) -> YamlReader:
        return type(self)(data, self.file, location, scope=self.scope, path=self._pending, variant=self.variant)


def _recording_method(name: str) -> Callable[..., Any]:
    """:class:`YamlReader`'s method ``name``, logging the read unless another method makes it."""
    method = getattr(YamlReader, name)

    @functools.wraps(method)
    def read(self: RecordingReader, key: str, *args: Any, **kwargs: Any) -> Any:
        outer = self._depth == 0
        if outer:
            self._log(key, name, args, kwargs, sys._getframe(1).f_globals.get("__name__", ""))
            element = ANY_NAME if key in self._listed else key
            self._pending = self.path + ((element + "[]") if name == "get_map_list" else element,)
        self._depth += 1
        try:
            value = method(self, key, *args, **kwargs)
        finally:
            self._depth -= 1
        if outer and DISCRIMINATORS.get((self.scope, self.path)) == key and isinstance(value, str):
            self.variant = value
        return value

    return read


for _name in READ_METHODS:
    setattr(RecordingReader, _name, _recording_method(_name))


@contextlib.contextmanager
def recording(recorder: KeyRecorder | None = None) -> Iterator[KeyRecorder]:
    """Record every key that the world, model and map readers read while the block runs (into the
    returned :class:`KeyRecorder`); the readers are restored after it. The plugins' keys are
    recorded by :func:`sim_server.core.key_reference.recording_all`, which also patches the
    plugin manager (a layer above this one)."""
    recorder = recorder or KeyRecorder()
    patched = {world_file: "world", model_file: "model", map_file: "map"}
    saved = {module: module.YamlReader for module in patched}
    try:
        for module, kind in patched.items():
            module.YamlReader = reader_class(recorder, kind)  # type: ignore[attr-defined]
        yield recorder
    finally:
        for module, reader in saved.items():
            module.YamlReader = reader  # type: ignore[attr-defined]


def reader_class(recorder: KeyRecorder, kind: str) -> type[RecordingReader]:
    """A :class:`RecordingReader` class logging into ``recorder``, its top-level readers of the
    scope ``kind`` (``world``, ``model``, ``map``, or ``plugin``: the plugin being initialised)."""
    return type(f"RecordingReader_{kind}", (RecordingReader,), {"recorder": recorder, "kind": kind})


# ------------------------------------------------------------------------------------ catalogue
@dataclass
class KeyEntry:
    """Everything known of one key: what the reads of it say and what its note adds.

    Attributes:
        scope: ``world``, ``map``, ``model`` or ``plugin TYPE``.
        path: from the file's (or plugin entry's) top to the key.
        reads: the reads of it.
        note: its meaning and unit (:mod:`~sim_server.core.format.key_notes`), or None.
        variants: the discriminator values it was read under, where it is read under only some
            of those its entry has (``{"circle"}`` for a footprint's ``radius``); else empty.
    """

    scope: str
    path: tuple[str, ...]
    reads: list[Read] = field(default_factory=list)
    note: key_notes.Note | None = None
    variants: tuple[str, ...] = ()

    @property
    def dotted(self) -> str:
        """The path as written in the reference: ``layers[].streaming.tile_size``."""
        return ".".join(self.path)

    @property
    def modules(self) -> tuple[str, ...]:
        """The modules that read the key."""
        return tuple(dict.fromkeys(read.module for read in self.reads))

    def _typed_reads(self) -> list[Read]:
        typed = [read for read in self.reads if read.method not in ("get_any", "ignore")]
        return typed or self.reads

    @property
    def required(self) -> bool:
        """Whether every read demands the key (none has a default or asks first); a key the file
        names (:data:`ANY_NAME`) is read only where it is."""
        if self.path[-1] == ANY_NAME:
            return False
        return all(read.default is REQUIRED and not read.guarded and read.method != "ignore" for read in self.reads)

    @property
    def type_text(self) -> str:
        """What the value is (from the reader methods, else the note)."""
        if self.note is not None and self.note.type:
            return self.note.type
        texts = [text for text in dict.fromkeys(_type_of(read) for read in self._typed_reads()) if text]
        return " or ".join(texts)

    @property
    def defaults(self) -> list[str]:
        """The defaults the reads gave, shown (several where they depend on where it is read)."""
        shown = [_show(read.default) for read in self.reads if read.default is not REQUIRED and read.method != "ignore"]
        return list(dict.fromkeys(text for text in shown if text))

    @property
    def default_text(self) -> str:
        """The default as the reference shows it: a value read as code, or the note's words."""
        if self.note is not None and self.note.default:
            return self.note.default
        if self.required or self.path[-1] == ANY_NAME:
            return ""
        return f"`{self.defaults[0]}`" if len(self.defaults) == 1 else "none"

    @property
    def range_text(self) -> str:
        """The values accepted beyond the type: range, choices, sizes."""
        reads = self._typed_reads()
        if self.note is not None and self.note.choices:  # (a word, read as a name or string, then checked)
            reads = [read for read in reads if read.method not in ("get_name", "get_name_list")]
        texts = [text for text in dict.fromkeys(_range_of(read) for read in reads) if text]
        if self.note is not None and self.note.choices:
            texts.insert(0, "one of " + ", ".join(f"`{choice}`" for choice in self.note.choices))
        return "; ".join(texts)

    @property
    def unit(self) -> str:
        """The unit: the note's, else that of the range read with."""
        if self.note is not None and self.note.unit:
            return self.note.unit
        units = [_unit_of(read) for read in self._typed_reads()]
        return next((unit for unit in units if unit), "")


@dataclass
class Catalog:
    """The keys found (:attr:`entries`, in the order first read) and what is wrong with them.

    Attributes:
        entries: one per (scope, path).
        problems: one line per key without a meaning, type or default that a note must give,
            and per note of no key.
    """

    entries: list[KeyEntry]
    problems: list[str]

    def find(self, scope: str, dotted: str) -> KeyEntry | None:
        """The entry of the key ``dotted`` of ``scope``, if any."""
        return next((entry for entry in self.entries if entry.scope == scope and entry.dotted == dotted), None)

    def keys(self) -> set[tuple[str, str]]:
        """Every key as (scope, dotted path)."""
        return {(entry.scope, entry.dotted) for entry in self.entries}


def enabled_reads(reads: Iterable[Read]) -> list[Read]:
    """The preprocessor's ``enabled`` key of every list of entries named in
    :data:`~sim_server.core.format.yaml_preprocessor.TOGGLEABLE_LISTS` among ``reads`` (the
    preprocessor takes it out before any reader sees it), as reads of a boolean that is true by
    default."""
    lists = {(read.scope, read.path) for read in reads if read.method == "get_map_list" and read.path[-1] in TOGGLEABLE_LISTS}
    module = yaml_preprocessor.__name__
    return [Read(scope, path[:-1] + (path[-1] + "[]", ENABLED_KEY), "get_bool", (True,), {}, False, None, module)
            for scope, path in sorted(lists)]


def build_catalog(reads: Iterable[Read], notes: dict[str, key_notes.Note] | None = None) -> Catalog:
    """Merge ``reads`` (with the preprocessor's :func:`enabled_reads`) into one entry per key and
    attach the ``notes`` (by default :data:`~sim_server.core.format.key_notes.NOTES`; then
    :data:`~sim_server.core.format.key_notes.DERIVED_NOTES`)."""
    notes = key_notes.NOTES if notes is None else notes
    reads = list(reads)
    entries: dict[tuple[str, tuple[str, ...]], KeyEntry] = {}
    variants_at: dict[tuple[str, tuple[str, ...]], set[str]] = {}
    for read in reads + enabled_reads(reads):
        entries.setdefault((read.scope, read.path), KeyEntry(read.scope, read.path)).reads.append(read)
        entry_path = _discriminated_entry(read.scope, read.path[:-1])
        if entry_path is not None and read.variant is not None:
            variants_at.setdefault((read.scope, entry_path), set()).add(read.variant)
    used: set[str] = set()
    problems: list[str] = []
    for entry in entries.values():
        entry_path = _discriminated_entry(entry.scope, entry.path[:-1])
        if entry_path is not None and all(read.variant is not None for read in entry.reads):
            seen = {read.variant for read in entry.reads if read.variant is not None}
            if seen != variants_at[(entry.scope, entry_path)]:
                entry.variants = tuple(sorted(seen))
        for candidate in note_keys(entry):
            if candidate in notes:
                entry.note = notes[candidate]
                used.add(candidate)
                break
            if candidate in key_notes.DERIVED_NOTES:
                entry.note = key_notes.DERIVED_NOTES[candidate]
                break
        problems.extend(_problems(entry))
    problems.extend(f'note "{name}" is of no key the readers read' for name in notes if name not in used)
    return Catalog(list(entries.values()), problems)


def note_keys(entry: KeyEntry) -> list[str]:
    """The names a note of ``entry`` may have, the most particular first: ``SCOPE:PATH``, then
    ``MODULE:PATH`` and ``MODULE:KEY`` of the module that reads it, then (for plugins)
    ``plugin:KEY``."""
    names = [f"{entry.scope}:{entry.dotted}"]
    leaf = entry.path[-1]
    for module in entry.modules:
        names += [f"{module}:{entry.dotted}", f"{module}:{leaf}"]
    if entry.scope.startswith("plugin "):
        names.append(f"plugin:{leaf}")
    return list(dict.fromkeys(names))


def _discriminated_entry(scope: str, path: tuple[str, ...]) -> tuple[str, ...] | None:
    """The longest start of ``path`` that is an entry with a discriminator, if any."""
    for end in range(len(path), -1, -1):
        if (scope, path[:end]) in DISCRIMINATORS:
            return path[:end]
    return None


def _problems(entry: KeyEntry) -> list[str]:
    where = f"{entry.scope}: {entry.dotted} (read by {', '.join(entry.modules)})"
    if entry.note is None:
        return [f"{where} has no note: add one to key_notes.NOTES as one of {', '.join(note_keys(entry))}"]
    problems = []
    if not entry.note.meaning:
        problems.append(f"{where} has no meaning in its note")
    if not entry.type_text or entry.type_text == "anything":
        problems.append(f"{where} is read as any value: its note must give its type")
    if len(entry.defaults) > 1 and not entry.note.default:
        problems.append(f"{where} has defaults that depend on where it is ({', '.join(entry.defaults)}): its note must say")
    return problems


# ------------------------------------------------------------------------------------ showing reads
_TYPES = {
    "get_any": "anything", "get_str": "string", "get_name": "name", "get_topic": "topic", "get_frame": "frame id",
    "get_choice": "word", "get_rate": "rate", "get_float": "number", "get_int": "integer", "get_bool": "boolean",
    "get_position": "point [x, y]", "get_pose": "pose [x, y, yaw]", "get_point_list": "list of points [x, y]",
    "get_map": "mapping", "get_map_list": "list of mappings", "ignore": "anything (read and ignored)",
}


def _type_of(read: Read) -> str:
    if read.method in ("get_floats", "get_ints"):
        size = read.argument("size", 0)
        return f"list of {size} {'numbers' if read.method == 'get_floats' else 'integers'}"
    if read.method in ("get_str_list", "get_name_list"):
        single = "string" if read.method == "get_str_list" else "name"
        text = f"list of {single}s"
        return f"{single} or {text}" if read.kwargs.get("scalar_ok") else text
    return _TYPES.get(read.method, "")


def _range_words(bound: Range) -> str:
    low = "(" if bound.open_low else "["
    return f"{low}{bound.low:g}, {bound.high:g}]"


def _range_of(read: Read) -> str:
    if read.method == "get_rate":
        return f"{_range_words(limits.RATE)} or `.inf` (every step); 0: once, at the start"
    if read.method == "get_choice":
        return "one of " + ", ".join(f"`{choice}`" for choice in read.argument("choices", 0, ()))
    if read.method == "get_pose":
        return f"x, y in {_range_words(limits.COORDINATE)}; yaw in {_range_words(limits.ANGLE)}"
    if read.method == "get_position":
        return f"each in {_range_words(limits.COORDINATE)}"
    if read.method == "get_point_list":
        return (f"{read.argument('min_size', 0)} to {read.argument('max_size', 1)} points, each coordinate in "
                f"{_range_words(limits.BODY_OFFSET)}")
    if read.method in ("get_name", "get_name_list"):
        return f"printable, at most {limits.MAX_NAME_LENGTH} characters"
    bound = read.kwargs.get("within")
    texts = []
    if isinstance(bound, Range):
        texts.append(_range_words(bound) + ("" if read.method != "get_floats" else " each"))
    elif isinstance(bound, (tuple, list)) and bound:
        texts.append(", ".join(_range_words(item) for item in bound))
    if read.kwargs.get("positive"):
        texts.append("> 0")
    if read.kwargs.get("minimum") is not None:
        texts.append(f">= {read.kwargs['minimum']:g}")
    return "; ".join(texts)


def _unit_of(read: Read) -> str:
    if read.method == "get_rate":
        return "Hz"
    if read.method in ("get_position", "get_point_list"):
        return "m"
    if read.method == "get_pose":
        return "m, rad"
    bound = read.kwargs.get("within")
    if isinstance(bound, Range):
        return bound.unit
    if isinstance(bound, (tuple, list)):
        return ", ".join(dict.fromkeys(item.unit for item in bound if item.unit))
    return ""


def _show(value: Any) -> str:
    """A default as the reference shows it ("" for None: no value)."""
    if value is None:
        return ""
    if isinstance(value, Pose2D):
        value = [value.x, value.y, value.theta]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return ".inf" if value == math.inf else f"{value:g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(item) for item in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


# ------------------------------------------------------------------------------------ the page
_SCOPE_TITLES = {"world": "World file", "map": "Map file", "model": "Model file"}
_SCOPE_ORDER = {"world": 0, "map": 1, "model": 2}


def _section(entry: KeyEntry) -> tuple[str, ...]:
    """The entry list a key is shown under: the path up to its last ``[]`` before the key."""
    ends = [index for index, element in enumerate(entry.path[:-1]) if element.endswith("[]")]
    return entry.path[: ends[-1] + 1] if ends else ()


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(catalog: Catalog) -> str:
    """The reference's tables (MyST markdown), one per file kind, entry list and plugin."""
    groups: dict[tuple[str, tuple[str, ...]], list[KeyEntry]] = {}
    parents: dict[tuple[str, tuple[str, ...]], int] = {}
    for index, entry in enumerate(catalog.entries):
        parents.setdefault((entry.scope, entry.path[:-1]), index)
    # (in the order first read, a nested mapping's keys together after their mapping's)
    ordered = sorted(enumerate(catalog.entries), key=lambda item: (parents[(item[1].scope, item[1].path[:-1])], item[0]))
    for _index, entry in ordered:
        groups.setdefault((entry.scope, _section(entry)), []).append(entry)
    order = sorted(groups, key=lambda group: (_SCOPE_ORDER.get(group[0], 3), group[0], group[1]))
    lines: list[str] = []
    scope_shown = ""
    for scope, section in order:
        if scope != scope_shown:
            title = _SCOPE_TITLES.get(scope, f"Plugin {scope.removeprefix('plugin ')}")
            lines += [f"## {title}", ""]
            if scope.startswith("plugin "):
                modules = sorted({module for entry in catalog.entries if entry.scope == scope for module in entry.modules})
                lines += [f"Read by {', '.join(f'`{module}`' for module in modules)}.", ""]
            scope_shown = scope
        if section:
            lines += [f"### `{'.'.join(section)}`", ""]
        lines += [
            "| Key | Type | Unit | Default | Range or choices | Required | Meaning |",
            "|---|---|---|---|---|---|---|",
        ]
        for entry in groups[(scope, section)]:
            key = ".".join(entry.path[len(section):])
            applies = f" ({', '.join(VARIANT_LABELS.get(v, v) for v in entry.variants)})" if entry.variants else ""
            note = entry.note
            meaning = (note.meaning if note else "") + (" *(ours)*" if key_notes.ours(scope, entry.dotted, note) else "")
            cells = [f"`{key}`{applies}", entry.type_text, entry.unit, entry.default_text, entry.range_text,
                     "yes" if entry.required else "no", meaning]
            lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
        lines.append("")
    return "\n".join(lines)
