"""The tutorials (docs/tutorials/) run as their pages show them.

A page shows each file a reader writes as a code block captioned with the file's name
(```` ```{code-block} yaml ```` then ``:caption: my_world/world.yaml``), the commands to run as a
plain ``bash`` block (``python FILE`` lines), what they print as a ``text`` block captioned
``output of FILE``, and the ROS 2 equivalents as ``bash`` blocks captioned ``needs ROS 2`` (not
run here: they need a ROS 2 installation and a running server). The tests read the page, write
its files into a fresh folder (after those of the pages it builds on, run first in the same
folder), run its commands there in its order, none importing rclpy, and compare what each prints
with the page's output: word for word, numbers within a hundredth (the geometry and drives of
pages 1 to 4), or word for word with the numbers left free (people and training, whose numbers
the page gives as this machine's, and whose programs assert what the page claims of them). So
a page and its test cannot drift apart. The plugin tutorial shows the example package's own
files (``{literalinclude}``), which are checked to exist and to hold what the page cuts at.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from test.conftest import REPO_ROOT

TUTORIALS = REPO_ROOT / "docs" / "tutorials"
EXAMPLE_PACKAGE = REPO_ROOT / "examples" / "sim_example_plugins"
#: A captioned code block: language, caption, options, text.
CAPTIONED = re.compile(r"^```\{code-block\} (\w+)\n:caption: ([^\n]+)\n(?::[\w-]+:[^\n]*\n)*\n?(.*?)^```$", re.S | re.M)
#: A plain bash block: the commands a reader runs.
COMMANDS = re.compile(r"^```bash\n(.*?)^```$", re.S | re.M)
#: A literalinclude directive and its options.
INCLUDE = re.compile(r"^```\{literalinclude\} (\S+)\n((?::[\w-]+:[^\n]*\n)*)", re.M)
ROS_CAPTION = "needs ROS 2"
#: Commands run once to set up (installing the example package): checked, not run.
SETUP_CAPTION = "once, in the repository's folder"
OUTPUT = "output of "
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")

#: The pages, in the index's order.
PAGES = ["first_world.md", "first_robot.md", "first_plugin.md", "vehicles.md", "people.md", "training.md"]
#: What each page builds on: those pages' files are written and run first, in the same folder.
BUILDS_ON = {
    "first_robot.md": ["first_world.md"],
    "first_plugin.md": ["first_world.md"],
    "people.md": ["first_world.md", "first_robot.md"],
}
#: Pages whose printed numbers are this machine's (chaotic crowds, training): words compared only.
NUMBERS_FREE = {"people.md", "training.md"}
#: Runs the program as ``python FILE`` does, then checks that nothing imported rclpy.
RUNNER = (
    "import runpy, sys\n"
    "sys.argv = [sys.argv[1]]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    "assert 'rclpy' not in sys.modules, 'the tutorial imported rclpy'\n"
)


@dataclass
class Page:
    """What a tutorial page shows: its files, the commands to run, their outputs and ROS lines."""

    name: str
    files: dict[str, str] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    ros: list[str] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)


def read_page(name: str) -> Page:
    text = (TUTORIALS / name).read_text()
    page = Page(name)
    for _language, caption, body in CAPTIONED.findall(text):
        if caption == ROS_CAPTION:
            page.ros += [line for line in body.splitlines() if line.strip()]
        elif caption == SETUP_CAPTION:
            page.setup += [line for line in body.splitlines() if line.strip()]
        elif caption.startswith(OUTPUT):
            page.outputs[caption[len(OUTPUT):]] = body
        else:
            assert " " not in caption and "." in caption, f"{name}: caption {caption!r} is not a file name"
            assert caption not in page.files, f"{name}: {caption} shown twice"
            page.files[caption] = body
    for block in COMMANDS.findall(text):
        page.commands += [line.strip() for line in block.splitlines() if line.strip()]
    return page


def run_page(page: Page, folder: Path) -> dict[str, tuple[str, float]]:
    """Write the page's files into ``folder`` and run its commands there: each program's output
    and seconds."""
    for name, body in page.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    environment = dict(os.environ)
    # The example package of this checkout, before any other installed copy of it.
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(EXAMPLE_PACKAGE), environment.get("PYTHONPATH")]))
    printed = {}
    for command in page.commands:
        words = command.split()
        assert len(words) == 2 and words[0] == "python" and words[1] in page.files, (
            f"{page.name}: {command!r} is not `python FILE` of a file the page shows"
        )
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-c", RUNNER, words[1]], cwd=folder, env=environment,
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"{page.name}: {command} failed:\n{result.stdout}\n{result.stderr}"
        printed[words[1]] = (result.stdout, time.perf_counter() - started)
    return printed


def same_output(shown: str, printed: str, numbers: bool) -> str | None:
    """Why ``printed`` is not what the page shows (None when it is)."""
    shown_lines, printed_lines = shown.strip().splitlines(), printed.strip().splitlines()
    if len(shown_lines) != len(printed_lines):
        return f"{len(printed_lines)} lines printed, the page shows {len(shown_lines)}"
    for want, got in zip(shown_lines, printed_lines):
        if NUMBER.sub("#", want) != NUMBER.sub("#", got):
            return f"printed {got!r}, the page shows {want!r}"
        if numbers:
            for a, b in zip(NUMBER.findall(want), NUMBER.findall(got)):
                if not math.isclose(float(a), float(b), rel_tol=1e-2, abs_tol=1.1e-2):
                    return f"printed {got!r}, the page shows {want!r} ({b} against {a})"
    return None


def prepare(name: str, folder: Path) -> None:
    """Run the pages ``name`` builds on in ``folder``, checking nothing of them again."""
    (folder / "config").symlink_to(REPO_ROOT / "config")  # the bundled worlds, as in the repository
    for before in BUILDS_ON.get(name, []):
        run_page(read_page(before), folder)


@pytest.mark.parametrize("name", PAGES)
def test_the_tutorial_runs_as_its_page_shows(name: str, tmp_path: Path) -> None:
    page = read_page(name)
    assert page.commands and page.files, f"{name}: no files or commands"
    programs = [command.split()[-1] for command in page.commands]
    assert set(page.outputs) <= set(programs), f"{name}: an output of a program the page never runs"
    assert {file for file in page.files if file.endswith(".py")} <= set(programs), f"{name}: a program it never runs"
    prepare(name, tmp_path)
    printed = run_page(page, tmp_path)
    for program, shown in page.outputs.items():
        problem = same_output(shown, printed[program][0], numbers=name not in NUMBERS_FREE)
        assert problem is None, f"{name}: {program}: {problem}\nprinted:\n{printed[program][0]}"
    CHECKS.get(name, lambda folder: None)(tmp_path)
    for program, (_, seconds) in printed.items():
        print(f"{name}: {program}: {seconds:.1f} s")


def check_first_world(folder: Path) -> None:
    """The picture the page shows is the one the tutorial writes."""
    import numpy as np
    from PIL import Image

    written = np.asarray(Image.open(folder / "my_world.png").convert("RGB"), dtype=np.float64)
    shown = np.asarray(Image.open(REPO_ROOT / "docs" / "images" / "tutorial_first_world.png").convert("RGB"), dtype=np.float64)
    assert written.shape == shown.shape and np.abs(written - shown).mean() < 1.0


CHECKS = {"first_world.md": check_first_world}


def test_ros_lines_are_ros2_commands_of_the_bundled_launch() -> None:
    """The ROS 2 equivalents are ``ros2`` commands (not run here), and every launch is the
    package's own launch file."""
    for name in PAGES:
        for line in read_page(name).ros:
            assert line.startswith("ros2 "), f"{name}: {line!r} in a ROS 2 block"
            if line.startswith("ros2 launch"):
                assert line.startswith("ros2 launch sim_server server.launch.py"), line
    assert (REPO_ROOT / "launch" / "server.launch.py").is_file()


def test_the_plugin_tutorial_shows_the_example_package_s_own_files() -> None:
    """Every file the plugin tutorial includes exists in the example package, and holds the
    lines the page starts or ends its excerpts at."""
    text = (TUTORIALS / "first_plugin.md").read_text()
    includes = INCLUDE.findall(text)
    shown = {(TUTORIALS / path).resolve() for path, _ in includes}
    for module in ("sonar.py", "doors.py"):
        assert EXAMPLE_PACKAGE / "sim_example_plugins" / module in shown, f"the page does not include {module}"
    assert EXAMPLE_PACKAGE / "pyproject.toml" in shown
    for path, options in includes:
        target = (TUTORIALS / path).resolve()
        assert target.is_file() and EXAMPLE_PACKAGE in target.parents, path
        for option, value in re.findall(r"^:([\w-]+): (.*)$", options, re.M):
            if option in ("start-at", "start-after", "end-before", "end-at"):
                assert value in target.read_text(), f"{path}: {option} {value!r} is not in the file"
    assert read_page("first_plugin.md").setup == [
        "pip install --no-deps --no-build-isolation -e examples/sim_example_plugins",  # as make test's
        "python -m pytest examples/sim_example_plugins/tests -q",  # the package's own tests
    ]
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert "EXAMPLE_PLUGINS := examples/sim_example_plugins" in makefile
    assert "--no-deps --no-build-isolation -q -e $(EXAMPLE_PLUGINS)" in makefile


def test_the_index_lists_every_tutorial() -> None:
    index = (TUTORIALS / "index.md").read_text()
    toctree = re.search(r"```\{toctree\}\n(.*?)```", index, re.S).group(1)
    listed = [line.strip() + ".md" for line in toctree.splitlines() if line.strip() and not line.startswith(":")]
    assert listed == PAGES
    assert sorted(path.name for path in TUTORIALS.glob("*.md")) == sorted(PAGES + ["index.md"])
