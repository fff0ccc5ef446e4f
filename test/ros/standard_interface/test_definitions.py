"""The standard interface with both generations of simulation_interfaces: 1.x (Humble, Jazzy,
Kilted; what the set-up builds here) and 2.x (Lyrical, Rolling). The differences are read and
written in one place (sim_server.ros.standard_interface.compatibility): its adapters are checked
on both shapes of request here, and the whole of this folder's tests runs once more, in a process
of its own, against the 2.x definitions (tools/simulation_interfaces_2.sh builds them into the
distro's environment the first time: a few minutes)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from sim_server.ros.standard_interface import compatibility
from test.conftest import REPO_ROOT

#: Set in the process that runs these tests against the 2.x definitions.
RUN_WITH = "SIM_TEST_DEFINITIONS"


def resource(uri: str = "", text: str = "") -> SimpleNamespace:
    return SimpleNamespace(uri=uri, resource_string=text)


def test_both_shapes_of_spawn_and_load_requests() -> None:
    resource_of = compatibility.resource_of
    assert resource_of(SimpleNamespace(uri="a.yaml", resource_string=""), "entity_resource") == ("a.yaml", "")
    assert resource_of(SimpleNamespace(entity_resource=resource(text="bodies: []")), "entity_resource") == ("", "bodies: []")
    assert resource_of(SimpleNamespace(uri="", resource_string="layers: []"), "world_resource") == ("", "layers: []")
    assert resource_of(SimpleNamespace(world_resource=resource("w.yaml")), "world_resource") == ("w.yaml", "")


def test_both_shapes_of_set_entity_state() -> None:
    assert compatibility.state_choice(SimpleNamespace(entity="e", state=None)) == (True, True)  # 1.x: all of it
    for flags in [(False, False), (True, False), (False, True), (True, True)]:
        request = SimpleNamespace(entity="e", state=None, set_pose=flags[0], set_twist=flags[1], set_acceleration=True)
        assert compatibility.state_choice(request) == flags


def test_the_installed_generation_is_told_by_its_fields() -> None:
    from simulation_interfaces.msg import Spawnable
    from simulation_interfaces.srv import LoadWorld, SetEntityState, SpawnEntity

    two = compatibility.generation() == "2.x"
    assert compatibility.interface_problem() is None
    assert ("entity_resource" in compatibility.fields(SpawnEntity.Request)) == two
    assert ("world_resource" in compatibility.fields(LoadWorld.Request)) == two
    assert ("set_pose" in compatibility.fields(SetEntityState.Request)) == two
    made = compatibility.spawnable("file:///m.yaml", "a model", Spawnable().spawn_bounds)
    assert (made.entity_resource.uri if two else made.uri) == "file:///m.yaml" and made.description == "a model"
    if os.environ.get(RUN_WITH):
        assert compatibility.generation() == os.environ[RUN_WITH]


@pytest.mark.skipif(bool(os.environ.get(RUN_WITH)), reason="this is the run with the other definitions")
def test_the_standard_interface_with_the_2x_definitions() -> None:
    if compatibility.generation() == "2.x":
        pytest.skip("the installed simulation_interfaces is 2.x already: this run is the 2.x one")
    built = subprocess.run(
        ["bash", str(REPO_ROOT / "tools" / "simulation_interfaces_2.sh")],
        capture_output=True, text=True, timeout=1800, cwd=REPO_ROOT,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    prefix = Path(built.stdout.split()[-1])
    folder = Path(__file__).parent
    # The 1.x package of the environment leaves every path: the wheels' bootstrapper rebuilds
    # LD_LIBRARY_PATH as a set (in no fixed order), so with both on it either library could load.
    command = (
        f'source "{REPO_ROOT / "env.sh"}" && COLCON_CURRENT_PREFIX="{prefix}" && . "{prefix}/local_setup.sh" '
        '&& unset COLCON_CURRENT_PREFIX && for var in LD_LIBRARY_PATH PYTHONPATH AMENT_PREFIX_PATH CMAKE_PREFIX_PATH; do '
        'export "$var=$(printf %s "${!var}" | tr : "\\n" | grep -v "^$SIM_SERVER_ENV/install/simulation_interfaces" | paste -sd: -)"; '
        f'done && python -m pytest -q -p no:cacheprovider "{folder}"'
    )
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    environment[RUN_WITH] = "2.x"
    ran = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=1800, env=environment, cwd=REPO_ROOT)
    summary = ran.stdout.strip().splitlines()[-1] if ran.stdout.strip() else ""
    log = prefix.parent / "last_run.log"
    log.write_text(ran.stdout + ran.stderr)
    assert ran.returncode == 0, f"the 2.x run failed (whole output in {log}): " + ran.stdout[-6000:] + ran.stderr[-3000:]
    assert " passed" in summary and "failed" not in summary, summary
