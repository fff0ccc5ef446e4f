"""The layering of sim_server and sim_plugins, read from the code's own imports.

Every import counts: at the top of a module, under ``TYPE_CHECKING``, inside functions and
``try`` blocks, and ``importlib.import_module`` / ``__import__`` of a literal name, so that no
dependency hides from Python's import order. The rules (see docs/architecture.md):

* no import loop among the modules of sim_server and sim_plugins;
* the packages stand on each other in one direction: the core on nothing of ours; rendering and
  the live view on the core; the ROS layer on the core (the server node's live view is composed
  above both, by the program module sim_server.node_view); the plugins on the
  core face (``sim_server.core.plugins``) and the ROS face (``sim_server.ros.plugin_support``)
  alone; learning on the core, rendering, the live view and the plugins (never on ROS); the
  programs on anything;
* inside the core, each unit (a ground module or a subpackage) imports only its own modules and
  those of lower layers: the composition root (levels, world, state) stands on top, so nothing
  below it names the world that composes it;
* no ROS (rclpy, message packages) under core/, rendering/, live/ or learning/;
* no module over :data:`MAX_MODULE_LINES` lines.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from test.conftest import REPO_ROOT

PACKAGES = ("sim_server", "sim_plugins")
#: Lines of the longest module allowed (issue 25).
MAX_MODULE_LINES = 800

#: Each package group and the groups it may import (its own included).
ALLOWED_GROUPS = {
    "root": {"root"},
    "core": {"core"},
    "rendering": {"core", "rendering"},
    "live": {"core", "live"},
    "ros": {"core", "ros"},  # the server node's live view is composed above both: sim_server.node_view
    "plugins": {"core", "ros", "plugins"},  # through the two faces alone: PLUGIN_FACES
    "learning": {"core", "rendering", "live", "plugins", "learning"},
    "programs": {"root", "core", "rendering", "live", "ros", "plugins", "learning", "programs"},
}
#: What the bundled plugins may import of sim_server: the core face and the ROS face.
PLUGIN_FACES = {
    "sim_server.core.plugins", "sim_server.core.plugins.capabilities", "sim_server.core.plugins.services",
    "sim_server.ros.plugin_support",
}
#: The programs: command-line entry points over everything.
PROGRAMS = {"sim_server.__main__", "sim_server.demo", "sim_server.node_view", "sim_server.record", "sim_server.serve",
            "sim_server.stop_signals", "sim_server.warm_up"}

#: The core's layers, lowest first; the units of one layer are siblings and do not import each
#: other. A unit is a ground module or a subpackage of sim_server.core; "" is the package itself.
CORE_LAYERS = (
    ("errors", "geometry", "compiled", "called_from_c"),
    ("limits",),
    ("timing", "motion", "random_streams"),
    ("format",),
    ("physics",),
    ("sensing", "crowd", "pictures"),
    ("plugins",),  # the plugin author's face: bases, capabilities, and the ray service below it
    ("levels",),
    ("world",),
    ("state", "control", "key_reference"),
    ("",),
)
#: Packages of ROS that the core, rendering and learning must not import.
ROS_PACKAGE = re.compile(
    r"^(rclpy|rcl_\w+|rosidl\w*|rmw\w*|builtin_interfaces|rosgraph_msgs|tf2\w*|launch\w*|ament_\w+"
    r"|\w+_msgs|\w+_srvs|simulation_interfaces)$"
)
#: Groups that promise to run without ROS.
WITHOUT_ROS = ("core", "rendering", "live", "learning")


def find_modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Every module below ``root`` of ``packages``, by dotted name (a package by its own name)."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported_names(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The dotted names a module imports, anywhere in it, made absolute: ``from a import b``
    gives ``a.b`` where that is a module (importing a submodule is not using its package's
    contents), else ``a``."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                names.add(f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            function = node.func
            called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                names.add(node.args[0].value)
    return names


def resolve(dotted: str, modules: dict[str, Path]) -> str | None:
    """The module of ours that ``dotted`` names (its longest known prefix), or None."""
    while dotted and dotted not in modules:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


def import_graph(modules: dict[str, Path]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Per module, the modules of ours it imports and the top-level outside packages it imports."""
    ours, outside = {}, {}
    for name, path in modules.items():
        ours[name], outside[name] = set(), set()
        for dotted in imported_names(name, path, modules):
            module = resolve(dotted, modules)
            if module is None:
                outside[name].add(dotted.partition(".")[0])
            elif module != name:
                ours[name].add(module)
    return ours, outside


def import_loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The loops of ``graph``: each strongly connected component of more than one module, as
    one cycle through it (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(_cycle(sorted(component), graph))
    return components


def _cycle(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A cycle through the first module of a strongly connected component (breadth-first)."""
    members, first = set(component), component[0]
    paths = {first: [first]}
    queue = [first]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & members):
            if child == first:
                return paths[node] + [first]
            if child not in paths:
                paths[child] = paths[node] + [child]
                queue.append(child)
    return component  # unreachable for a strongly connected component


def group_of(module: str) -> str:
    if module in PROGRAMS:
        return "programs"
    if module.startswith("sim_plugins"):
        return "plugins"
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "moved_modules":
        return "root"
    return {"core": "core", "rendering": "rendering", "live": "live", "ros": "ros", "learning": "learning"}[parts[1]]


def core_unit(module: str) -> str:
    """The unit of a core module: its ground module or subpackage ("" for the core package)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else ""


def core_layer(unit: str) -> int:
    for layer, units in enumerate(CORE_LAYERS):
        if unit in units:
            return layer
    raise AssertionError(f'sim_server.core.{unit} is in no layer of CORE_LAYERS: place it there')


MODULES = find_modules(REPO_ROOT, PACKAGES)
GRAPH, OUTSIDE = import_graph(MODULES)


def test_the_modules_are_found() -> None:
    assert {"sim_server.core.world", "sim_server.core.plugins.api", "sim_plugins.laser"} <= set(MODULES)
    assert "sim_server.core.plugins.api" in GRAPH["sim_server.core.world"]


def test_no_import_loop() -> None:
    loops = import_loops(GRAPH)
    assert not loops, "import loops:\n" + "\n".join(" -> ".join(loop) for loop in loops)


def test_packages_import_only_the_layers_below() -> None:
    wrong = [
        f"{module} ({group_of(module)}) imports {other} ({group_of(other)})"
        for module, others in sorted(GRAPH.items())
        for other in sorted(others)
        if group_of(other) not in ALLOWED_GROUPS[group_of(module)]
    ]
    assert not wrong, "\n".join(wrong)


def test_the_bundled_plugins_import_only_the_two_faces() -> None:
    wrong = [
        f"{module} imports {other}"
        for module, others in sorted(GRAPH.items())
        if group_of(module) == "plugins"
        for other in sorted(others)
        if group_of(other) != "plugins" and other not in PLUGIN_FACES
    ]
    assert not wrong, "the plugins import sim_server only through its faces:\n" + "\n".join(wrong)


def test_core_units_import_only_their_own_modules_and_lower_layers() -> None:
    wrong = []
    for module, others in sorted(GRAPH.items()):
        if group_of(module) != "core":
            continue
        unit = core_unit(module)
        for other in sorted(others):
            other_unit = core_unit(other)
            if other_unit != unit and core_layer(other_unit) >= core_layer(unit):
                wrong.append(f"{module} imports {other}")
    assert not wrong, "\n".join(wrong)


def test_nothing_below_the_composition_root_names_the_world() -> None:
    root = {"sim_server.core.levels", "sim_server.core.world", "sim_server.core.state", "sim_server.core.control",
            "sim_server.core.key_reference", "sim_server.core"}
    naming = [
        module
        for module, others in GRAPH.items()
        if group_of(module) == "core" and module not in root and "sim_server.core.world" in others
    ]
    assert not naming


@pytest.mark.parametrize("group", WITHOUT_ROS)
def test_no_ros_in_the_core_rendering_or_learning(group: str) -> None:
    wrong = [
        f"{module} imports {package}"
        for module, packages in sorted(OUTSIDE.items())
        if group_of(module) == group
        for package in sorted(packages)
        if ROS_PACKAGE.match(package)
    ]
    assert not wrong, "\n".join(wrong)


def test_no_module_over_the_length_limit() -> None:
    long = {name: count for name, path in MODULES.items() if (count := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_the_checks_see_hidden_loops_and_forbidden_imports(tmp_path: Path) -> None:
    """A package whose loop hides behind TYPE_CHECKING, a function-level import and an
    import_module call is caught, and so is rclpy under core."""
    package = tmp_path / "toy"
    (package / "core").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "core" / "__init__.py").write_text("from toy.core.world import World\n")
    (package / "core" / "world.py").write_text("from toy.core import levels\nclass World: ...\n")
    (package / "core" / "levels.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy.core.world import World\n"
    )
    (package / "core" / "plugins.py").write_text(
        "def load():\n    from toy.core.world import World\n    import rclpy\n"
    )
    (package / "core" / "sensing.py").write_text(
        "import importlib\nSCENE = importlib.import_module('toy.core.plugins')\n"
    )
    (package / "core" / "helpers.py").write_text("from . import sensing\nfrom .levels import *\n")
    modules = find_modules(tmp_path, ("toy",))
    graph, outside = import_graph(modules)
    loops = import_loops(graph)
    assert loops == [["toy.core.levels", "toy.core.world", "toy.core.levels"]]
    assert graph["toy.core.plugins"] == {"toy.core.world"} and outside["toy.core.plugins"] == {"rclpy"}
    assert graph["toy.core.sensing"] == {"toy.core.plugins"}
    assert graph["toy.core.helpers"] == {"toy.core.sensing", "toy.core.levels"}
    graph["toy.core.world"].add("toy.core.sensing")
    graph["toy.core.plugins"].add("toy.core.helpers")
    # One component now (world -> sensing -> plugins -> world too), shown by its shortest cycle
    # through its first module.
    assert import_loops(graph) == [["toy.core.helpers", "toy.core.sensing", "toy.core.plugins", "toy.core.helpers"]]


if __name__ == "__main__":  # the graph for a reader: python -m test.test_layering
    print("\n".join(f"{module} -> {', '.join(sorted(GRAPH[module])) or '-'}" for module in sorted(GRAPH)))
