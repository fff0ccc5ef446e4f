"""An installed simulation_interfaces older than the 1.x this server speaks (before the world
services, spawn_entities or INVALID_POSE), or none, turns the standard interface off with one
warning; the server starts and serves the Flatland-style services. 2.x serves."""

from __future__ import annotations

import importlib
import types

import pytest

from sim_server.ros.standard_interface import compatibility
from test.ros.conftest import make_server
from test.ros.standard_interface.conftest import WORLD


def test_the_installed_definitions_serve() -> None:
    assert compatibility.interface_problem() is None


@pytest.mark.parametrize(
    "hidden, fact",
    [
        (("srv", "SpawnEntities"), "srv/SpawnEntities"),  # 1.3
        (("srv", "LoadWorld"), "srv/LoadWorld"),  # 1.0
        (("msg", "WorldResource"), "msg/WorldResource"),
        (("action", "SimulateSteps"), "action/SimulateSteps"),
        (("INVALID_POSE", None), "INVALID_POSE"),  # 1.6.0
        (("import", None), "cannot be imported"),  # not installed
        (("2.x", None), None),  # 2.x (Lyrical, Rolling): served
    ],
)
def test_older_or_missing_definitions_are_named(monkeypatch, hidden, fact) -> None:
    real = importlib.import_module
    kind, name = hidden

    def imported(module_name: str):
        if kind == "import":
            raise ImportError(f"No module named {module_name!r}")
        module = real(module_name)
        if module_name == f"simulation_interfaces.{kind}":
            return types.SimpleNamespace(**{key: getattr(module, key) for key in dir(module) if key != name})
        if kind == "2.x" and module_name == "simulation_interfaces.srv":
            request = types.SimpleNamespace(get_fields_and_field_types=lambda: {"entity_resource": "Resource"})
            members = {key: getattr(module, key) for key in dir(module)}
            members["SpawnEntity"] = types.SimpleNamespace(Request=request)
            return types.SimpleNamespace(**members)
        if kind == "INVALID_POSE" and module_name == "simulation_interfaces.srv":
            response = types.SimpleNamespace()  # a SetEntityState.Response without the constant
            members = {key: getattr(module, key) for key in dir(module)}
            members["SetEntityState"] = types.SimpleNamespace(Response=response)
            return types.SimpleNamespace(**members)
        return module

    monkeypatch.setattr(compatibility.importlib, "import_module", imported)
    problem = compatibility.interface_problem()
    assert problem is None if fact is None else (problem is not None and fact in problem)


def test_the_server_starts_without_it(ros_context, monkeypatch, caplog) -> None:
    from sim_server.ros import server_node

    monkeypatch.setattr(server_node, "interface_problem", lambda: "the installed simulation_interfaces is older")
    server = make_server(ros_context, world_path=str(WORLD), show_viz=False)
    try:
        assert server.standard_interface is None
        assert "/spawn_model" in server.service_names and not any("spawn_entity" in n for n in server.service_names)
    finally:
        server.destroy_node()
