"""The launch file, checked without the launch package (not on PyPI) through recording fakes."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest

from test.conftest import REPO_ROOT

LAUNCH_FILE = REPO_ROOT / "launch" / "server.launch.py"
EXPECTED_ARGUMENTS = {"world_path", "update_rate", "step_size", "show_viz", "viz_pub_rate", "use_rviz"}


class Recorded:
    """Stands in for a launch class: remembers its arguments."""

    def __init__(self, *args, **kwargs) -> None:
        self.args = args
        self.kwargs = kwargs


def _fake_modules(share: Path) -> dict[str, types.ModuleType]:
    classes = {
        "launch": ["LaunchDescription"],
        "launch.actions": ["DeclareLaunchArgument"],
        "launch.conditions": ["IfCondition"],
        "launch.substitutions": ["LaunchConfiguration"],
        "launch_ros.actions": ["Node"],
        "launch_ros.parameter_descriptions": ["ParameterValue"],
    }
    modules: dict[str, types.ModuleType] = {"launch_ros": types.ModuleType("launch_ros")}
    for module_name, names in classes.items():
        module = types.ModuleType(module_name)
        for name in names:
            setattr(module, name, type(name, (Recorded,), {}))
        modules[module_name] = module
    ament = types.ModuleType("ament_index_python.packages")
    ament.get_package_share_directory = lambda package: str(share / package)
    modules["ament_index_python"] = types.ModuleType("ament_index_python")
    modules["ament_index_python.packages"] = ament
    return modules


@pytest.fixture
def description(monkeypatch, tmp_path: Path):
    for name, module in _fake_modules(tmp_path).items():
        monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location("server_launch", LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate_launch_description(), tmp_path


def test_declares_every_argument_with_description(description) -> None:
    result, _ = description
    (entities,) = result.args
    declared = {e.args[0]: e.kwargs for e in entities if type(e).__name__ == "DeclareLaunchArgument"}
    assert set(declared) == EXPECTED_ARGUMENTS
    assert all(kwargs["description"] for kwargs in declared.values())
    assert declared["update_rate"]["default_value"] == "200.0"
    assert declared["step_size"]["default_value"] == "0.005"
    assert declared["use_rviz"]["default_value"] == "false"


def test_default_world_is_the_installed_demo(description) -> None:
    result, share = description
    (entities,) = result.args
    world = next(e for e in entities if type(e).__name__ == "DeclareLaunchArgument" and e.args[0] == "world_path")
    assert world.kwargs["default_value"] == str(share / "sim_server" / "config" / "worlds" / "demo" / "world.yaml")
    assert (REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml").is_file()


def test_starts_server_with_parameters_and_optional_rviz(description) -> None:
    result, _ = description
    (entities,) = result.args
    nodes = [e for e in entities if type(e).__name__ == "Node"]
    server = next(n for n in nodes if n.kwargs["executable"] == "sim_server")
    assert server.kwargs["package"] == "sim_server"
    (params,) = server.kwargs["parameters"]
    assert set(params) == EXPECTED_ARGUMENTS - {"use_rviz"}
    rviz = next(n for n in nodes if n.kwargs["executable"] == "rviz2")
    assert rviz.kwargs["arguments"][1].endswith("config/sim.rviz")
    assert type(rviz.kwargs["condition"]).__name__ == "IfCondition"
