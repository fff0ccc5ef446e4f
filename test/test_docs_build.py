"""The documentation builds without a single warning, and its API reference covers every module.

The build is Sphinx's, as rosdoc2 builds a ROS package's documentation: the markdown pages of
docs/ (MyST) and the API reference of docs/api/ (autodoc and napoleon over the docstrings), with
``-W`` (every warning an error). ``make docs`` does the same into build/docs/html.
"""

from __future__ import annotations

import re
import subprocess
import sys

from test.conftest import REPO_ROOT

DOCS = REPO_ROOT / "docs"
PACKAGES = ("sim_server", "sim_plugins")


def package_modules() -> set[str]:
    """Every module of the packages, by import name (a package by its own name)."""
    modules = set()
    for package in PACKAGES:
        for path in (REPO_ROOT / package).rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            parts = path.relative_to(REPO_ROOT).with_suffix("").parts
            modules.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return modules


def documented_modules() -> set[str]:
    """The modules the API reference's pages name in an ``automodule`` directive."""
    found = set()
    for page in DOCS.joinpath("api").glob("*.rst"):
        found.update(re.findall(r"^\.\. automodule:: (\S+)\s*$", page.read_text(), re.M))
    return found


def test_api_reference_names_every_module() -> None:
    modules, documented = package_modules(), documented_modules()
    missing, stale = sorted(modules - documented), sorted(documented - modules)
    assert not missing and not stale, (
        f"docs/api/*.rst: add an automodule for {missing}; remove the one for {stale} (no such module)"
    )


def test_docs_build_without_warnings(tmp_path) -> None:
    command = [
        sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-E", "-q",
        "-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "html"),
    ]
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    exit_code = result.returncode
    assert exit_code == 0, (
        f"the documentation build failed (exit {result.returncode}; `make docs` builds it):\n"
        f"{result.stderr}{result.stdout}"
    )
    assert (tmp_path / "html" / "index.html").is_file()
    assert (tmp_path / "html" / "api" / "core.html").is_file()
    # the key reference's tables, made by docs/key_reference.py from the readers as the page is read
    keys = (tmp_path / "html" / "keys.html").read_text()
    assert "Plugin Laser" in keys and "bodies[].footprints[]" in keys and "key-reference-tables" not in keys
