"""The code keeps to Python 3.10, the oldest Python of a ROS 2 distro it is meant for (Humble on
Ubuntu 22.04): every module of the packages and the launch files parses as 3.10's grammar, and
none uses the standard library's 3.11-only names. What CI runs is 3.11 (docs/setup.md)."""

from __future__ import annotations

import ast

import pytest

from test.conftest import REPO_ROOT

#: Oldest Python meant to run the code.
OLDEST = (3, 10)
#: Names of the standard library that came in 3.11 or later, as (module, name).
NEWER_NAMES = {
    ("typing", "Self"), ("typing", "Never"), ("typing", "LiteralString"), ("typing", "assert_never"),
    ("typing", "NotRequired"), ("typing", "Required"), ("typing", "reveal_type"), ("typing", "TypeVarTuple"),
    ("typing", "Unpack"), ("enum", "StrEnum"), ("datetime", "UTC"), ("asyncio", "TaskGroup"), ("asyncio", "timeout"),
}
NEWER_MODULES = {"tomllib", "wsgiref.types"}
SOURCES = sorted(
    path for folder in ("sim_server", "sim_plugins", "launch") for path in (REPO_ROOT / folder).rglob("*.py")
)


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_parses_as_the_oldest_python(path) -> None:
    tree = ast.parse(path.read_text(), filename=str(path), feature_version=OLDEST)
    newer = []
    for node in ast.walk(tree):
        if isinstance(node, ast.TryStar):
            newer.append(f"line {node.lineno}: except*")
        elif isinstance(node, ast.Import):
            newer += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name in NEWER_MODULES]
        elif isinstance(node, ast.ImportFrom):
            newer += [f"line {node.lineno}: from {node.module} import {a.name}" for a in node.names if (node.module, a.name) in NEWER_NAMES]
            if node.module in NEWER_MODULES:
                newer.append(f"line {node.lineno}: from {node.module}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (node.value.id, node.attr) in NEWER_NAMES:
            newer.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    assert not newer, f"{path.relative_to(REPO_ROOT)} needs Python > {OLDEST}: {newer}"
