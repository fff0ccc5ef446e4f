"""Sphinx configuration of sim_server's documentation (``make docs``; ``make test`` builds it too).

The pages are markdown (MyST); the API reference (``api/``) is reST, made by autodoc from the
docstrings (Google style, read by napoleon). The build needs no network: no intersphinx, no
remote images, and the built-in theme. It is meant to run with ``-W --keep-going`` (every warning
is an error): fix the page or docstring at fault rather than silencing a warning here.

autodoc imports every module of sim_server and sim_plugins: run it in the project environment
(``source env.sh``), which has rclpy and the built interface packages (sim_msgs, ...).
"""

from __future__ import annotations

import importlib.util
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
if ROOT not in sys.path:  # the editable install has it already; a plain checkout may not
    sys.path.insert(0, ROOT)
# This folder's own extensions (_ext/): world_gallery draws the gallery's pictures as it builds,
# key_reference makes the key reference's tables from the readers.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))

import sim_server  # noqa: E402 (after the path)

# -- Project ----------------------------------------------------------------------------------
project = "sim_server"
author = "sim_server developers"
copyright = "sim_server developers"
release = sim_server.__version__
version = ".".join(release.split(".")[:2])

# -- General ----------------------------------------------------------------------------------
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "world_gallery",
    "key_reference",
]
root_doc = "index"
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]
templates_path: list[str] = []
# Cross-references that do not resolve stay plain text (no warning): many annotations name
# third-party types (numpy, Box2D, rclpy) that this build does not link to (no intersphinx).
nitpicky = False
# The built-in theme: nothing more to install, nothing fetched when the pages are built.
html_theme = "alabaster"
html_static_path: list[str] = []
html_show_sourcelink = False

# -- MyST (markdown pages) --------------------------------------------------------------------
# GitHub-style anchors for headings down to ####, so links such as [x](#some-heading) or
# [y](setup.md#some-heading), written for GitHub, resolve here too.
myst_heading_anchors = 4

# -- autodoc and napoleon ---------------------------------------------------------------------
autodoc_default_options = {
    "members": True,
    "show-inheritance": True,
    "member-order": "bysource",
    # Members are the names a module defines (checked by __module__), whatever its __all__ says:
    # a module's __all__ may re-export names of another (sim_server.core.world lists Contact and
    # WorldListener), which would describe one object under two names and make references to it
    # ambiguous.
    "ignore-module-all": True,
}
autodoc_typehints = "signature"
add_module_names = False
napoleon_google_docstring = True
napoleon_numpy_docstring = False
# "Attributes:" sections become attribute entries of their class (napoleon_use_ivar = False, the
# default), which references can name. An attribute that also has a doc comment (#:) would then
# be described twice: a warning, fixed by keeping one of the two.

# Ray is an optional extra (requirements/extras.txt; `make setup` installs it): where it is
# missing, document sim_server.learning.distributed against a stand-in rather than fail. Importing
# the module never starts Ray (that is ray.init's job, which the module leaves to its user).
autodoc_mock_imports = [] if importlib.util.find_spec("ray") is not None else ["ray"]
