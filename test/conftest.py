"""Shared test fixtures and paths."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

# A DDS domain of this test run only, for the in-process nodes and the servers the tests start:
# a server or another test run on the machine (domain 0 by default) must not answer, nor be
# discovered (a soak test measured its memory growing while another run's nodes came and went).
# Fast DDS's shared-memory ports are still shared by every process of the machine, whatever the
# domain; forcing UDP instead (FASTDDS_BUILTIN_TRANSPORTS=UDPv4) made that soak grow by itself.
# The ros2 CLI tests choose theirs from 101 up; this one is 1 to 100. Discovery stays as ROS's
# default (multicast): restricted to this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST),
# an action client of a long run once did not find its server within 20 s.
os.environ["ROS_DOMAIN_ID"] = str(1 + os.getpid() % 100)

REPO_ROOT = Path(__file__).resolve().parent.parent

#: What marks a test module as one that exercises ROS 2 (rclpy, the node, the ros2 command
#: line, message packages, the ROS layer of sim_server or the distro's environment): such tests
#: get the ``ros`` mark. The others run no ROS code and use the same pinned packages on every
#: distro (requirements/ros-<distro>.txt pin ROS packages only), so CI runs them on the first
#: distro and the ``ros`` ones on each (.ci/run). Where in doubt, a module is marked: a module
#: may also mark itself (``pytestmark = pytest.mark.ros``).
ROS_SOURCE = re.compile(
    r"\brclpy\b|\b(?:from|import) \w+_(?:msgs|srvs|interfaces)\b|\bsim_server\.ros\b|\bsim_server/ros\b|"
    r"\bros2 (?:launch|run|topic|service|param|action|pkg|node|interface)\b|\blaunch_ros\b|\bros2launch\b|"
    r"\bROS_DISTRO\b|\brosidl|\bament|\bros_context\b|\bros_node\b|\bDDS\b|\bsim_server\.__main__\b|"
    r"\"-m\", \"sim_server\"",
)


def _touches_ros(path: Path, cache: dict[Path, bool] = {}) -> bool:  # noqa: B006 - a cache on purpose
    """Whether the test module at ``path`` (or a conftest.py of its folders below test/, or a
    helper module of test/ it imports) exercises ROS 2 (:data:`ROS_SOURCE`)."""
    if path not in cache:
        sources = [path] + [folder / "conftest.py" for folder in path.parents
                            if folder != Path(__file__).parent and Path(__file__).parent in folder.parents]
        text = "".join(source.read_text(errors="replace") for source in sources if source.is_file())
        for helper in re.findall(r"^from (test(?:\.\w+)+) import", text, flags=re.M):
            helper_path = REPO_ROOT.joinpath(*helper.split(".")).with_suffix(".py")
            if helper_path.is_file() and helper_path not in (path, Path(__file__)):
                text += helper_path.read_text(errors="replace")
        cache[path] = bool(ROS_SOURCE.search(text))
    return cache[path]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ros: exercises ROS 2 (rclpy, the node, the ros2 CLI): run on every distro")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that exercise ROS 2 ``ros`` (see :data:`ROS_SOURCE`)."""
    for item in items:
        if "ros_context" in getattr(item, "fixturenames", ()) or _touches_ros(Path(str(item.fspath))):
            item.add_marker(pytest.mark.ros)
DATA_DIR = Path(__file__).resolve().parent / "data"
FLATLAND_DATA = DATA_DIR / "flatland"
LOAD_WORLD_TESTS = FLATLAND_DATA / "load_world_tests"
DEMO_WORLD = REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml"


@pytest.fixture
def ros_context():
    """A private rclpy context for one test (rclpy imported only by the tests that use it)."""
    import rclpy
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)
PLUGIN_TESTS = FLATLAND_DATA / "plugins"
PLUGIN_MANAGER_TESTS = FLATLAND_DATA / "plugin_manager_tests"


def plugin(world, model_name: str, plugin_name: str):
    """The plugin ``plugin_name`` of model ``model_name``."""
    return world.plugins.find(world.models[model_name], plugin_name)


def install_throwaway_plugins(folder: Path, monkeypatch: pytest.MonkeyPatch, module: str, source: str,
                              entry_points: dict[str, dict[str, str]]) -> Path:
    """A throwaway plugin distribution, as ``pip install`` leaves one: the module ``module`` (its
    ``source``) and a dist-info declaring ``entry_points`` ({group: {type name: class name}}),
    written to ``folder`` and put on ``sys.path`` for the test. Returns ``folder``; the caller
    drops ``sys.modules[module]`` when done."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.py").write_text(source)
    info = folder / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 1.0\n")
    lines = [line for group, types in entry_points.items()
             for line in (f"[{group}]", *(f"{name} = {module}:{cls}" for name, cls in types.items()))]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    monkeypatch.syspath_prepend(str(folder))
    return folder
