"""The examples and commands of the README and of the pages in docs/ run as written.

Each page's examples are read from the page they live on: the in-process example
(docs/in_process.md), the crowd example and its error (docs/crowds.md), the pictures example and the recording commands (docs/pictures.md), the
learning examples (docs/learning.md), the plugin example (docs/plugins.md) and the old module
paths' table (docs/changes.md). The README's Python examples run here too; its shell commands are
the pages' own, which run here (``python -m sim_server.record``) or in test/test_ros2_tools.py
(``ros2 ...``, with the real ROS 2 tools).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap

from test.conftest import REPO_ROOT
from test.test_ros2_tools import readme_block

DOCS = REPO_ROOT / "docs"
#: Appended to an example: it must not have imported rclpy.
NO_ROS = "\nimport sys\nassert 'rclpy' not in sys.modules, 'the example imported rclpy'\n"
#: The markers after which test/test_ros2_tools.py finds the bash blocks it runs.
ROS2_MARKERS = (
    "Then, either way:",
    "With the server running, from a second terminal",
    "from a second terminal (the standard interface)",
)
#: The README's commands that no test runs: they are the test suite and the demo themselves.
MAKE_COMMANDS = {"make demo", "make test"}


def page(name: str) -> str:
    return (DOCS / name).read_text()


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def bash_commands(text: str) -> list[str]:
    """Every command of the text's bash blocks, without its comment."""
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    return [line.split("#")[0].strip() for block in blocks for line in block.splitlines() if line.split("#")[0].strip()]


def recording_commands() -> list[str]:
    return re.findall(r"^python -m sim_server\.record .*$", page("pictures.md"), re.M)


def live_commands() -> list[str]:
    return re.findall(r"^python -m sim_server\.record .*$", page("live.md"), re.M)


def serve_commands() -> list[str]:
    return re.findall(r"^python -m sim_server\.serve .*$", page("live.md"), re.M)


def run_python(code: str, cwd, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_in_process_example_runs_without_ros() -> None:
    example = python_blocks(page("in_process.md"))[0]
    assert "render(world" in example and "world.render(" not in example
    result = run_python(example + NO_ROS, REPO_ROOT)
    assert result.returncode == 0, result.stderr


def test_crowd_example_runs_without_ros() -> None:
    example = python_blocks(page("crowds.md"))[0]
    result = run_python(example + NO_ROS, REPO_ROOT)
    assert result.returncode == 0, result.stderr
    assert "people_0" in result.stdout


def test_the_pedsim_table_names_every_element_and_attribute_the_reader_takes() -> None:
    """docs/crowds.md's table of pedsim elements shows each one the scenario reader takes with all
    its attributes, in pedsim's order (the reader refuses any other): page and reader agree."""
    from sim_server.core.format.pedsim_scenario import _ATTRIBUTES

    text = page("crowds.md")
    for element, attributes in _ATTRIBUTES.items():
        if element != "scenario":  # the root, which holds the others
            shown = f"`<{' '.join((element, *attributes))}>`"
            assert shown in text, f"docs/crowds.md: the pedsim table lacks {shown}"


def test_crowd_page_s_error_is_the_one_the_loader_words(tmp_path) -> None:
    from test.core.format.test_crowd_file import changed, load_error

    shown = re.search(r"```text\n(.*?)\n```", page("crowds.md"), re.S).group(1).splitlines()
    for line, waypoints in zip(shown, ([[3, 0]], [[-3, 2], [200, 200]]), strict=True):
        message = load_error(tmp_path, changed(("agents", 1, "waypoints"), waypoints))
        assert message.split("world.yaml: ", 1)[1] == line.split("world.yaml: ", 1)[1]


def test_picture_example_writes_its_pictures(tmp_path) -> None:
    """The pictures page's example, in a folder where ``config/`` is the repository's (so the
    pictures it writes land in the test's folder): the whole office, and a 256 x 256 view."""
    examples = python_blocks(page("pictures.md"))
    assert len(examples) == 1
    (tmp_path / "config").symlink_to(REPO_ROOT / "config")
    check = textwrap.dedent("""
        from PIL import Image as _Image
        assert max(_Image.open("office.png").size) == 512, _Image.open("office.png").size
        assert _Image.open("cleaner.png").size == (256, 256)
    """)
    result = run_python(examples[0] + check + NO_ROS, tmp_path)
    assert result.returncode == 0, result.stderr


def test_recording_commands_run_as_written(tmp_path) -> None:
    """The pictures page's ``python -m sim_server.record`` lines, verbatim, in a folder where
    ``config/`` is the repository's (so the files they write land in the test's folder)."""
    commands = recording_commands()
    assert len(commands) == 3  # the office, the tunnel, the crowd
    (tmp_path / "config").symlink_to(REPO_ROOT / "config")
    for command in commands:
        arguments = command.split()[1:]
        result = subprocess.run([sys.executable, *arguments], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        out = tmp_path / arguments[arguments.index("--out") + 1]
        assert out.stat().st_size > 10_000 and result.stdout.startswith(f"wrote {out.name}: 201 frame(s)")


def test_mcap_commands_run_as_written(tmp_path) -> None:
    """The live page's ``python -m sim_server.record ... --out run.mcap`` lines, verbatim: the log
    holds the scene, the transforms and the scans, 10 updates a second of sim time."""
    from mcap.reader import make_reader

    commands = live_commands()
    assert len(commands) == 1
    (tmp_path / "config").symlink_to(REPO_ROOT / "config")
    arguments = commands[0].split()[1:]
    result = subprocess.run([sys.executable, *arguments], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    out = tmp_path / arguments[arguments.index("--out") + 1]
    assert result.stdout.startswith(f"wrote {out.name}: 201 update(s)")
    with out.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    counts = {summary.channels[c].topic: n for c, n in summary.statistics.channel_message_counts.items()}
    assert counts["/scene"] == counts["/tf"] == 201 and counts["/scan"] == 800  # every scan of the 40 Hz laser


def test_the_serve_command_runs_as_written(tmp_path) -> None:
    """The live page's ``python -m sim_server.serve ...`` line, as written but on any free port
    (8765 may be taken): a client sees the scene and can pause; Ctrl-C ends it with exit 0."""
    from test.live.client import Client

    commands = serve_commands()
    assert len(commands) == 1
    (tmp_path / "config").symlink_to(REPO_ROOT / "config")
    process = subprocess.Popen([sys.executable, *commands[0].split()[1:], "--port", "0"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = re.search(r"ws://localhost:\d+", process.stdout.readline())
        assert url, process.stderr.read()
        client = Client(url.group(0))
        try:
            client.until(lambda: "/scene" in client.topics())
            assert client.call("/pause", {})["success"]
        finally:
            client.close()
        process.send_signal(signal.SIGINT)
        said, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0 and "stopped at sim time" in said, err


def learning_examples() -> tuple[list[str], list[str]]:
    """The learning page's Python blocks: those that run here, and RLlib's (run by
    test/learning/test_rllib.py where RLlib is installed)."""
    examples = python_blocks(page("learning.md"))
    return [each for each in examples if "ray.rllib" not in each], [each for each in examples if "ray.rllib" in each]


def test_learning_examples_run_as_written() -> None:
    """Every Python block of the learning page but RLlib's, as written, each in a process of its
    own, none importing rclpy; the first's picture and observation are checked too, and the
    rollout's shapes."""
    examples, rllib = learning_examples()
    assert len(examples) == 6 and len(rllib) == 1
    checks = [
        "\nassert picture.shape[2] == 3 and env.observation_space.contains(observation)\n", "", "",
        "\nassert observation.shape == (65,) and info['path_length'] >= 0.0\n",
        "\nassert info['finished'] == 1.0 and info['success'] + info['collision'] + info['timeout'] == 1.0\n",
        "\nassert batch.observations.shape == (100, 32, 40) and batch.last_observations.shape == (32, 40)\n",
    ]
    for example, check in zip(examples, checks):
        result = run_python(example + check + NO_ROS, REPO_ROOT)
        assert result.returncode == 0, result.stderr


def test_plugin_example_runs_in_a_world(tmp_path) -> None:
    """The plugin page's Beacon, registered by its entry point line in a package of its own,
    imports everything from sim_server.core.plugins, loads on a spawned model and publishes the
    body's distance from the origin at its rate (through a stand-in for the ROS node)."""
    entry_points, plugin = python_blocks(page("plugins.md"))
    assert "from sim_server.core.plugins import ConfigError, ModelPlugin, TimeKeeper, UpdateTimer, YamlReader" in plugin
    declared = eval(entry_points.split("=", 1)[1])  # {"sim_server.model_plugins": ["Beacon = ..."]}
    (group, (line,)), = declared.items()
    module = line.split("=")[1].strip().split(":")[0]
    package_dir = tmp_path / module.split(".")[0]
    package_dir.mkdir()
    (package_dir / "__init__.py").write_text("")
    (tmp_path / (module.replace(".", "/") + ".py")).write_text(plugin)
    info = tmp_path / "my_robot_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my_robot_plugins\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{line}\n")
    (tmp_path / "world.yaml").write_text("properties: {}\nlayers:\n  - name: ground\nmodels: []\n")
    (tmp_path / "beacon.model.yaml").write_text(textwrap.dedent("""
        bodies:
          - name: base
            type: dynamic
            footprints:
              - type: circle
                radius: 0.3
                density: 1
        plugins:
          - type: Beacon
            name: beacon
            body: base
            update_rate: 10
    """))
    check = textwrap.dedent(f"""
        import math
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from sim_server.core import Pose2D, World

        class Publisher:
            def __init__(self, topic):
                self.topic, self.messages = topic, []
            def publish(self, message):
                self.messages.append(message.data)

        class Node:
            publishers = []
            def create_publisher(self, kind, topic, depth):
                self.publishers.append(Publisher(topic))
                return self.publishers[-1]
            def destroy_publisher(self, publisher):
                self.publishers.remove(publisher)

        node = Node()
        world = World.from_file({str(tmp_path / "world.yaml")!r}, ros_node=node)
        world.spawn_model("beacon.model.yaml", "marker", "m", Pose2D(3.0, 4.0, 0.0))
        world.step(200)  # 1 s at 10 Hz: messages at 0.1, 0.2, ..., 1.0 s
        (publisher,) = node.publishers
        pose = world.models["marker"].bodies["base"].pose
        assert publisher.topic == "m/beacon", publisher.topic
        assert len(publisher.messages) == 10, publisher.messages
        assert abs(publisher.messages[-1] - math.hypot(pose.x, pose.y)) < 1e-9 and abs(pose.x - 3.0) < 1e-6
        world.delete_model("marker")
        assert not node.publishers
        # without ROS (no node) the plugin loads and runs, and publishes nothing
        alone = World.from_file({str(tmp_path / "world.yaml")!r})
        alone.spawn_model("beacon.model.yaml", "marker", "m", Pose2D(3.0, 4.0, 0.0))
        alone.step(200)
        (beacon,) = alone.plugins.plugins_of(alone.models["marker"])
        assert beacon.publisher is None  # loaded and running, with nothing to publish on
        alone.delete_model("marker")
    """)
    result = run_python(check, REPO_ROOT)
    assert result.returncode == 0, result.stderr


def test_changes_list_every_old_module_path() -> None:
    """The changes page's table of old paths is sim_server.moved_modules.MOVED, row by row."""
    from sim_server.moved_modules import MOVED

    rows = re.findall(r"^\| `([\w.]+)` \| `([\w.]+)` \|$", page("changes.md"), re.M)
    assert rows == list(MOVED.items())


def test_readme_python_examples_run_without_ros() -> None:
    text = (REPO_ROOT / "README.md").read_text()
    examples = python_blocks(text)
    assert len(examples) == 2
    for example in examples:
        assert "world.render(" not in example
        result = run_python(example + NO_ROS, REPO_ROOT)
        assert result.returncode == 0, result.stderr


def test_readme_commands_are_those_the_tests_run() -> None:
    """Every shell command in the README is one of the pages' commands that the tests run, as
    written (comments aside), or ``make demo`` / ``make test``."""
    tested = {line.split("#")[0].strip() for marker in ROS2_MARKERS for line in readme_block(marker)}
    tested |= set(recording_commands()) | set(live_commands()) | set(serve_commands())
    commands = bash_commands((REPO_ROOT / "README.md").read_text())
    assert MAKE_COMMANDS <= set(commands)
    untested = [command for command in commands if command not in tested | MAKE_COMMANDS]
    assert not untested, f"README commands no test runs (put them on a page's tested block): {untested}"


#: An absolute path of a development machine (``/work/...``, ``/home/...``): a reader's has none.
MACHINE_PATH = re.compile(r"(?:^|[^\w.~/-])(/(?:work|home|root|Users|mnt|srv|opt)/[^\s`)'\"]*)")


def test_no_page_names_a_path_of_a_development_machine() -> None:
    pages = [*DOCS.rglob("*.md"), REPO_ROOT / "README.md", *REPO_ROOT.glob("examples/*/README.md"),
             REPO_ROOT / "bench" / "README.md"]
    found = [f"{path.relative_to(REPO_ROOT)}:{number}: {match}"
             for path in pages for number, line in enumerate(path.read_text().splitlines(), 1)
             for match in MACHINE_PATH.findall(line)]
    assert not found, "paths of a development machine:\n" + "\n".join(found)
    assert MACHINE_PATH.findall("data in `/work/shared/flatland_tests/` and /home/me/x") == [
        "/work/shared/flatland_tests/", "/home/me/x"]
    assert not MACHINE_PATH.findall("see docs/work/x, http://example.org/home/page and ~/home/x")


def test_links_between_pages_resolve() -> None:
    """Links of the README and of the pages (the tutorials' too) reach an existing page or image
    (the Sphinx build checks the anchors); inside docs/, only other pages and images are linked."""
    for source in [REPO_ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", source.read_text()):
            if target.startswith(("http://", "https://", "#")):
                continue
            path = (source.parent / target.split("#")[0]).resolve()
            assert path.is_file(), f"{source.relative_to(REPO_ROOT)}: link to {target} reaches no file"
            if DOCS in source.parents:
                assert DOCS in path.parents, f"{source.relative_to(REPO_ROOT)}: link to {target} leaves docs/"


#: The README is the front page: at most this many lines (the rest is in docs/).
README_LINES = 200


def test_the_readme_is_a_front_page() -> None:
    lines = (REPO_ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_LINES, f"README.md has {len(lines)} lines (at most {README_LINES}): move detail to docs/"
