"""Old import paths of moved modules: the same module, one warning naming the new path."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

from sim_server import moved_modules
from sim_server.moved_modules import MOVED, MovedModuleWarning
from test.conftest import REPO_ROOT


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_old_path_is_the_module_at_its_new_path(old: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MovedModuleWarning)
        assert importlib.import_module(old) is importlib.import_module(MOVED[old])


def test_the_plugin_api_by_its_old_paths_warns_once_each_with_the_new_path() -> None:
    result = run(
        "from sim_server.core.plugin_api import ModelPlugin\n"
        "import sim_server.core.plugin_api\n"
        "from sim_server.core.yaml_reader import YamlReader\n"
        "from sim_server.core.plugins import ModelPlugin as New, YamlReader as NewReader\n"
        "assert ModelPlugin is New and YamlReader is NewReader\n"
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "MovedModuleWarning" in line]
    assert len(lines) == 2, result.stderr
    assert "sim_server.core.plugin_api moved to sim_server.core.plugins.api: import it from there" in lines[0]
    assert "sim_server.core.yaml_reader moved to sim_server.core.format.yaml_reader" in lines[1]
    assert lines[0].startswith("<string>:1:"), lines[0]  # the importing line, not importlib's


def test_a_package_s_old_path_brings_its_modules_under_the_new_one() -> None:
    result = run(
        "from sim_server.standard_interface import simulation_state as old\n"
        "import sim_server.standard_interface.regions\n"
        "import sim_server.ros.standard_interface.simulation_state as new\n"
        "import sys\n"
        "assert old is new and sys.modules['sim_server.standard_interface.regions'] is "
        "sys.modules['sim_server.ros.standard_interface.regions']\n"
    )
    assert result.returncode == 0, result.stderr
    assert "sim_server.standard_interface moved to sim_server.ros.standard_interface" in result.stderr


def test_python_m_with_an_old_path_runs_the_module_and_says_how_to_run_it_now() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sim_server.core.warm_up", "--help"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "Compile the ray caster" in result.stdout
    assert "sim_server.core.warm_up moved to sim_server.warm_up: run python -m sim_server.warm_up" in result.stderr


def test_new_paths_import_without_a_warning() -> None:
    result = run("import sim_server.core.plugins, sim_server.core.world, sim_server.ros.standard_interface.services\n")
    assert result.returncode == 0 and "MovedModuleWarning" not in result.stderr, result.stderr


def test_the_finder_is_installed_once_and_first() -> None:
    moved_modules.install()
    finders = [finder for finder in sys.meta_path if isinstance(finder, moved_modules.MovedModuleFinder)]
    assert len(finders) == 1 and sys.meta_path[0] is finders[0]
    assert finders[0].find_spec("sim_server.core.world") is None  # modules that did not move are left alone
