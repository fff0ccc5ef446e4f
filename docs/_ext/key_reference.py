"""Sphinx extension: the key reference (page ``keys``) made from the readers at build time.

The page's source, ``keys.md``, holds the introduction and the line :data:`MARKER`; as the page is
read, the line becomes the tables of :func:`sim_server.core.format.key_catalog.render_markdown`,
made by loading the exemplars of :mod:`sim_server.core.key_reference` while recording the
keys read. A key read without a note (or a note of no key) stops the build with one line per
key, as test/core/format/test_key_catalog.py fails: the page cannot drift from the code.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

#: The page the tables go in, and the line of its source they replace.
DOCNAME = "keys"
MARKER = "% key-reference-tables"


def _fill(app: Sphinx, docname: str, source: list[str]) -> None:
    if docname != DOCNAME:
        return
    from sim_server.core.format.key_catalog import render_markdown
    from sim_server.core.key_reference import reference_catalog

    if MARKER not in source[0].splitlines():
        raise ExtensionError(f"{DOCNAME}.md has no line {MARKER!r} for the key tables to replace")
    catalog = reference_catalog()
    if catalog.problems:
        raise ExtensionError("the key reference is incomplete:\n" + "\n".join(catalog.problems))
    source[0] = source[0].replace(MARKER, render_markdown(catalog), 1)


def _always_read(app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """The page is read again at every build (the code it comes from may have changed)."""
    return [DOCNAME] if DOCNAME in env.found_docs else []


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the extension."""
    app.connect("source-read", _fill)
    app.connect("env-get-outdated", _always_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
