"""The YAML preprocessor of world, model and map files (the reference's, plus includes).

Applied to every parsed file before validation:

* ``$eval <Lua>``: a scalar starting with ``$eval`` is replaced by the result of the Lua code
  after it (``return`` is prepended when the code has none). ``nil`` becomes ``""``, booleans
  ``true``/``false``, numbers stay numbers. Lua sees ``env(name[, default])`` (environment
  variables; numeric-looking values become numbers) and ``param(name[, default])`` (the server
  node's ROS parameters). A Lua error is a :class:`ConfigError` naming file, key and expression.
* ``$include <path>``: a scalar replaced by the parsed, preprocessed file (relative to the
  including file).
* ``$[include] <path>``: an element of a sequence replaced by one element per document of a
  multi-document file.
* ``enabled: <bool>`` on an entry of a ``bodies``, ``joints`` or ``plugins`` list: ``false``
  removes the entry (``true`` just removes the key). The value may come from ``$eval``.

Results of ``$eval`` are resolved like YAML scalars, as yaml-cpp's untyped scalars are in the
reference: ``"12"`` reads as a number, ``"true"`` as a boolean, other text as a string.

Lua runs in a sandbox: the ``string``, ``table``, ``math`` and ``utf8`` libraries, the base
functions that neither load code nor catch errors, and ``os.time``/``os.clock``/``os.date``/
``os.getenv``; no files, processes, modules or Python objects. Each ``$eval`` may run
:data:`~sim_server.core.limits.LUA_INSTRUCTION_BUDGET` instructions, use
:data:`~sim_server.core.limits.LUA_MEMORY_BYTES` and take
:data:`~sim_server.core.limits.LUA_SECONDS` of processor time, and all of one load's together
:data:`~sim_server.core.limits.EVAL_SECONDS_PER_LOAD`; includes nest at most
:data:`~sim_server.core.limits.MAX_INCLUDE_DEPTH` deep and one load reads at most
:data:`~sim_server.core.limits.MAX_INCLUDED_FILES` included files.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable, Mapping

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format.yaml_parsing import (
    ReadBudget, load_yaml_documents, load_yaml_text, parse_yaml_text, resolve_path, resolved,
)

EVAL_PREFIX = "$eval"
INCLUDE_PREFIX = "$include"
SPLICE_PREFIX = "$[include]"
ENABLED_KEY = "enabled"
#: Lists whose entries may carry ``enabled``.
TOGGLEABLE_LISTS = ("bodies", "joints", "plugins")

#: Looks up a ROS parameter by name: returns (found, value).
ParamLookup = Callable[[str], tuple[bool, Any]]

# env() and param() in Lua: the raw lookups are Python functions; the numeric conversions
# follow Lua's own tonumber(), as the reference's lua_isnumber/lua_tonumber do.
_LUA_BINDINGS = """
function env(name, default)
  local value = __sim_getenv(tostring(name))
  if value == nil then
    if default == nil then return nil end
    return tonumber(default) or default
  end
  return tonumber(value) or value
end

function param(name, default)
  local found, value = __sim_param(tostring(name))
  if not found then
    if default == nil then return nil end
    return tonumber(default) or default
  end
  if type(value) == "boolean" then return value and "true" or "false" end
  return value
end
"""


#: Longest subject of Lua's pattern functions in $eval, and most repetitions in one pattern:
#: Lua's matcher backtracks in C, where no instruction budget reaches, in time that grows as
#: the subject's length to the power of the repetitions (+ 1).
MAX_PATTERN_SUBJECT = 2_000
MAX_PATTERN_REPETITIONS = 1

# The sandbox: what Lua code of a $eval may use. Everything else of the standard libraries
# (io, os.execute/exit/remove, require, load, dofile, debug, coroutine, pcall, string.dump, the
# ``python`` module of lupa) is removed before the user's code runs. pcall and coroutines go
# because either would escape the instruction budget (a hook is per coroutine, an error can be
# caught). The budget hook counts in slices of _HOOK_SLICE instructions, and at every function
# call (C functions included, whose time no instruction count sees) checks the processor time
# against the deadline __sim_seconds from now.
_HOOK_SLICE = 10_000
_BUDGET_EXCEEDED = "__sim_budget_exceeded"
_TIME_EXCEEDED = "__sim_time_exceeded"
_LUA_SANDBOX = f"""
local sethook, error, clock = debug.sethook, error, os.clock
local slices, allowed = 0, {limits.LUA_INSTRUCTION_BUDGET // _HOOK_SLICE}
local deadline = clock() + __sim_seconds
__sim_seconds = nil
sethook(function(event)
  if event == "count" then
    slices = slices + 1
    if slices > allowed then error("{_BUDGET_EXCEEDED}", 0) end
  end
  if clock() > deadline then error("{_TIME_EXCEEDED}", 0) end
end, "c", {_HOOK_SLICE})
local keep_os = {{time = os.time, clock = os.clock, date = os.date, getenv = os.getenv, difftime = os.difftime}}
for _, name in ipairs({{"io", "package", "require", "dofile", "loadfile", "load", "debug", "coroutine",
                        "pcall", "xpcall", "collectgarbage", "python", "rawset", "rawget", "rawequal",
                        "setmetatable", "getmetatable"}}) do
  _G[name] = nil
end
os = keep_os
string.dump = nil
for _, name in ipairs({{"find", "match", "gmatch", "gsub"}}) do
  local original, check = string[name], __sim_check_pattern
  string[name] = function(subject, pattern, ...)
    check(subject, pattern)
    return original(subject, pattern, ...)
  end
end
__sim_check_pattern = nil
"""


def _no_parameters(name: str) -> tuple[bool, Any]:
    return False, None


def resolve_scalar(text: str) -> Any:
    """Read ``text`` as a plain YAML scalar would be: number, boolean or (otherwise) the text."""
    if "\n" in text or not text.strip():
        return text
    try:
        value = parse_yaml_text(text, "<$eval result>")
    except ConfigError:
        return text
    if isinstance(value, (bool, int, float)):
        return value
    return text


class YamlPreprocessor:
    """Expands ``$eval``, ``$include``, ``$[include]`` and ``enabled`` in parsed YAML.

    Args:
        param_lookup: returns ``(found, value)`` for a ROS parameter name such as ``/robot/speed``;
            without one, ``param()`` finds nothing and returns its default.
        environ: the environment ``env()`` reads (``os.environ`` by default).
    """

    def __init__(self, param_lookup: ParamLookup | None = None, environ: Mapping[str, str] | None = None) -> None:
        self._param_lookup = param_lookup or _no_parameters
        self._environ = os.environ if environ is None else environ
        self._lua = None
        self._budget = ReadBudget()

    # ------------------------------------------------------------------------------ API
    def process(self, data: Any, source: Path, _chain: tuple[Path, ...] = ()) -> Any:
        """Return ``data`` (parsed from ``source``) with every directive expanded."""
        if not _chain:
            self._budget = ReadBudget()
        chain = _chain or (resolved(source),)
        return self._node(data, source, "", chain)

    def load_file(self, path: Path, what: str) -> Any:
        """Parse and preprocess the file at ``path``; ``what`` names it in errors ("model file")."""
        self._budget = ReadBudget()
        return self.process(load_yaml_text(path, what, self._budget), path, (resolved(path),))

    def load_text(self, text: str, source: Path, what: str) -> Any:
        """Parse and preprocess YAML ``text`` (at most :data:`~sim_server.core.limits.MAX_YAML_BYTES`
        bytes) as if it were the file ``source``, which need not exist: it names the text in
        errors and relative includes resolve against its folder."""
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > limits.MAX_YAML_BYTES:
            raise ConfigError(f"{source}: {what} has {size} bytes, more than the limit of {limits.MAX_YAML_BYTES}")
        self._budget = ReadBudget()
        return self.process(parse_yaml_text(text, str(source), self._budget), source, (resolved(source),))

    # ------------------------------------------------------------------------------ traversal
    def _node(self, node: Any, source: Path, where: str, chain: tuple[Path, ...]) -> Any:
        if isinstance(node, dict):
            result = {key: self._node(value, source, _join(where, str(key)), chain) for key, value in node.items()}
            for key in TOGGLEABLE_LISTS:
                if isinstance(result.get(key), list):
                    result[key] = self._apply_enabled(result[key], source, _join(where, key))
            return result
        if isinstance(node, list):
            items: list[Any] = []
            for index, item in enumerate(node):
                location = f"{where}[{index}]"
                if isinstance(item, str) and item.startswith(SPLICE_PREFIX):
                    items.extend(self._splice(item[len(SPLICE_PREFIX):].strip(), source, location, chain))
                else:
                    items.append(self._node(item, source, location, chain))
            return items
        if isinstance(node, str):
            if node.startswith(EVAL_PREFIX):
                return self._eval(node[len(EVAL_PREFIX):].strip(), source, where)
            if node.startswith(INCLUDE_PREFIX + " ") or node == INCLUDE_PREFIX:
                return self._include(node[len(INCLUDE_PREFIX):].strip(), source, where, chain)
        return node

    def _apply_enabled(self, entries: list[Any], source: Path, where: str) -> list[Any]:
        kept = []
        for index, entry in enumerate(entries):
            if isinstance(entry, dict) and ENABLED_KEY in entry:
                entry = dict(entry)
                enabled = entry.pop(ENABLED_KEY)
                if not isinstance(enabled, bool):
                    raise ConfigError(
                        f'{source}: {where}[{index}]: key "{ENABLED_KEY}" must be true or false, got {enabled!r}'
                    )
                if not enabled:
                    continue
            kept.append(entry)
        return kept

    # ------------------------------------------------------------------------------ includes
    def _included_path(self, name: str, source: Path, where: str, chain: tuple[Path, ...]) -> Path:
        if not name:
            raise ConfigError(f"{_at(source, where)}include directive names no file")
        if "\0" in name:
            raise ConfigError(f"{_at(source, where)}include directive names a path with a NUL character")
        path = resolve_path(name, source)
        real = resolved(path, _at(source, where))
        if real in chain:
            cycle = " -> ".join(str(p) for p in chain + (real,))
            raise ConfigError(f'{_at(source, where)}including "{path}" makes a cycle: {cycle}')
        if len(chain) > limits.MAX_INCLUDE_DEPTH:
            raise ConfigError(
                f'{_at(source, where)}including "{path}" nests includes deeper than the limit of '
                f"{limits.MAX_INCLUDE_DEPTH}"
            )
        if self._budget.files <= 0:
            raise ConfigError(
                f'{_at(source, where)}including "{path}" reads more than the limit of '
                f"{limits.MAX_INCLUDED_FILES} included files in one load"
            )
        self._budget.files -= 1
        return path

    def _include(self, name: str, source: Path, where: str, chain: tuple[Path, ...]) -> Any:
        path = self._included_path(name, source, where, chain)
        try:
            data = load_yaml_text(path, "included file", self._budget)
        except ConfigError as exc:
            raise ConfigError(f"{_at(source, where)}{exc}") from None
        return self._node(data, path, "", chain + (resolved(path),))

    def _splice(self, name: str, source: Path, where: str, chain: tuple[Path, ...]) -> list[Any]:
        path = self._included_path(name, source, where, chain)
        try:
            documents = load_yaml_documents(path, "included file", self._budget)
        except ConfigError as exc:
            raise ConfigError(f"{_at(source, where)}{exc}") from None
        inner_chain = chain + (resolved(path),)
        return [self._node(document, path, f"document {i + 1}", inner_chain) for i, document in enumerate(documents)]

    # ------------------------------------------------------------------------------ Lua
    def _runtime(self):
        if self._lua is None:
            try:
                from lupa import lua54 as lua_module
            except ImportError:  # pragma: no cover - lupa builds without Lua 5.4
                import lupa as lua_module
            self._lua = lua_module
        runtime = self._lua.LuaRuntime(
            unpack_returned_tuples=True,
            register_eval=False,
            register_builtins=False,
            attribute_filter=_deny_attributes,
            max_memory=limits.LUA_MEMORY_BYTES,
        )
        runtime.globals()["__sim_getenv"] = self._getenv
        runtime.globals()["__sim_param"] = self._lookup_param
        runtime.globals()["__sim_check_pattern"] = _check_pattern
        runtime.execute(_LUA_BINDINGS)
        runtime.globals()["__sim_seconds"] = min(limits.LUA_SECONDS, max(0.0, self._budget.eval_seconds))
        runtime.execute(_LUA_SANDBOX)
        return runtime

    def _getenv(self, name: str) -> str | None:
        return self._environ.get(name)

    def _lookup_param(self, name: str) -> tuple[bool, Any]:
        found, value = self._param_lookup(name)
        if not found or not isinstance(value, (bool, int, float, str)):
            return False, None
        return True, value

    def _eval(self, code: str, source: Path, where: str) -> Any:
        expression = code if "return " in code else "return " + code
        if self._budget.eval_seconds <= 0.0:
            raise ConfigError(
                f'{_at(source, where)}$eval "{_short(code)}": the $eval of this load took more than the limit of '
                f"{limits.EVAL_SECONDS_PER_LOAD:g} s of processor time together"
            )
        started = time.process_time()
        try:
            return self._run_eval(expression, code, source, where)
        finally:
            self._budget.eval_seconds -= time.process_time() - started

    def _run_eval(self, expression: str, code: str, source: Path, where: str) -> Any:
        runtime = self._runtime()
        try:
            result = runtime.execute(expression)
        except Exception as exc:  # LuaError, LuaSyntaxError, LuaMemoryError or a binding's error
            message = " ".join(str(exc).split())
            if _BUDGET_EXCEEDED in message:
                message = f"ran more than the limit of {limits.LUA_INSTRUCTION_BUDGET} Lua instructions"
            elif _TIME_EXCEEDED in message:
                message = (
                    f"took more than the limit of {limits.LUA_SECONDS:g} s of processor time"
                    if self._budget.eval_seconds > limits.LUA_SECONDS
                    else f"took the rest of this load's {limits.EVAL_SECONDS_PER_LOAD:g} s of processor time for $eval"
                )
            elif type(exc).__name__ == "LuaMemoryError" or "not enough memory" in message:
                message = f"used more than the limit of {limits.LUA_MEMORY_BYTES // (1024 * 1024)} MiB of Lua memory"
            raise ConfigError(f'{_at(source, where)}$eval "{_short(code)}" failed: {message}') from None
        if isinstance(result, tuple):
            result = result[0] if result else None
        if result is None:
            return ""
        if isinstance(result, bool):
            return result
        if isinstance(result, (int, float)):
            return result
        if isinstance(result, bytes):
            result = result.decode("utf-8", errors="replace")
        if isinstance(result, str):
            if len(result) > limits.MAX_EVAL_RESULT_CHARS:
                raise ConfigError(
                    f'{_at(source, where)}$eval "{_short(code)}" gives {len(result)} characters, more than the '
                    f"limit of {limits.MAX_EVAL_RESULT_CHARS}"
                )
            return resolve_scalar(result)
        raise ConfigError(
            f'{_at(source, where)}$eval "{_short(code)}" must give a string, number, boolean or nil, '
            f"got a Lua {runtime.eval('type')(result)}"
        )


def _check_pattern(subject: Any, pattern: Any) -> None:
    """Refuse pattern matches whose backtracking could run for minutes (see MAX_PATTERN_SUBJECT)."""
    if isinstance(subject, (bytes, str)) and len(subject) > MAX_PATTERN_SUBJECT:
        raise ValueError(f"pattern functions take strings of at most {MAX_PATTERN_SUBJECT} characters")
    if isinstance(pattern, bytes):
        pattern = pattern.decode("utf-8", errors="replace")
    if not isinstance(pattern, str):
        return
    repetitions, index = 0, 0
    while index < len(pattern):
        char = pattern[index]
        if char == "%":
            if pattern[index + 1:index + 2] == "f":  # %f[set]: a frontier, skip its set
                index = _skip_set(pattern, index + 2)
                continue
            index += 3 if pattern[index + 1:index + 2] == "b" else 2  # %b() or an escape
            continue
        if char == "[":
            index = _skip_set(pattern, index)
            continue
        if char in "*+-?":
            repetitions += 1
        index += 1
    if repetitions > MAX_PATTERN_REPETITIONS:
        raise ValueError(f"patterns may repeat (*, +, -, ?) at most {MAX_PATTERN_REPETITIONS} time(s)")


def _skip_set(pattern: str, start: int) -> int:
    """The index after the set ``[...]`` starting at ``start``."""
    index = start + 1
    if pattern[index:index + 1] == "^":
        index += 1
    if pattern[index:index + 1] == "]":
        index += 1
    while index < len(pattern) and pattern[index] != "]":
        index += 2 if pattern[index] == "%" else 1
    return index + 1


def _deny_attributes(obj: Any, name: Any, is_setting: bool) -> Any:
    """lupa's attribute filter: Lua code reaches no attribute of any Python object."""
    raise AttributeError("Python attributes are not accessible from $eval")


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _at(source: Path, where: str) -> str:
    return f"{source}: {where}: " if where else f"{source}: "


def _short(code: str) -> str:
    flat = " ".join(code.split())
    return flat if len(flat) <= 60 else flat[:57] + "..."
