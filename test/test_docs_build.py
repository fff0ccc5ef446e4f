"""The documentation builds without a single warning, and its API reference covers every module.

The build is Sphinx's, as rosdoc2 builds a ROS package's documentation: the markdown pages of
docs/ (MyST) and the API reference of docs/api/ (autodoc and napoleon over the docstrings), with
``-W`` (every warning an error). ``make docs`` does the same into build/docs/html. The gallery
(docs/gallery.md) shows every bundled world, in pictures the build draws (docs/_ext/world_gallery.py).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import textwrap

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


def gallery_extension():
    """docs/_ext/world_gallery.py, imported from its file (docs/ is no package)."""
    spec = importlib.util.spec_from_file_location("world_gallery", DOCS / "_ext" / "world_gallery.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gallery_worlds() -> list[str]:
    """The world files the gallery page shows, as written in its ``world-picture`` directives."""
    return re.findall(r"^```\{world-picture\} (\S+)\s*$", (DOCS / "gallery.md").read_text(), re.M)


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
    gallery = (tmp_path / "html" / "gallery.html").read_text()
    for world in gallery_worlds():
        picture = tmp_path / "html" / "_images" / gallery_extension().picture_name(world)
        assert picture.read_bytes().startswith(b"\x89PNG") and picture.stat().st_size > 300, picture
        assert f'src="_images/{picture.name}"' in gallery, picture.name
    # the key reference's tables, made by docs/_ext/key_reference.py from the readers as the page is read
    keys = (tmp_path / "html" / "keys.html").read_text()
    assert "Plugin Laser" in keys and "bodies[].footprints[]" in keys and "key-reference-tables" not in keys


def test_gallery_shows_every_bundled_world() -> None:
    """Every world under config/worlds (and only existing files) is on the gallery page, once."""
    shown = gallery_worlds()
    bundled = sorted(path.relative_to(REPO_ROOT).as_posix() for path in REPO_ROOT.glob("config/worlds/*/world.yaml"))
    missing = [world for world in bundled if world not in shown]
    assert not missing, f"docs/gallery.md: add a world-picture for {missing}"
    assert len(shown) == len(set(shown)), shown
    assert all((REPO_ROOT / world).is_file() for world in shown), shown
    names = [gallery_extension().picture_name(world) for world in shown]
    assert len(names) == len(set(names)), f"two worlds' pictures would have one name: {names}"


def test_gallery_fails_the_build_in_one_line_on_a_world_that_does_not_load(tmp_path) -> None:
    (tmp_path / "world.yaml").write_text("properties: {}\nlayers:\n  - name: ground\n    colour: [1, 0, 0, 1]\nmodels: []\n")
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(DOCS / "_ext")!r})
        extensions = ["myst_parser", "world_gallery"]
    """))
    (source / "index.md").write_text(f"# Worlds\n\n```{{world-picture}} {tmp_path / 'world.yaml'}\n```\n")
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "-E", "-q", "-d", str(tmp_path / "doctrees"),
               str(source), str(tmp_path / "html")]
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    line = f"{tmp_path / 'world.yaml'}: the gallery cannot load this world: "
    (said,) = [text for text in result.stderr.splitlines() if text.startswith(line)]
    assert 'unrecognized key(s) "colour"' in said, result.stderr
