"""The documented setup: what a project's example env file gives the variables its code reads.

``model = os.getenv("MODEL")`` names no model in the code; the project's ``.env.example`` (the
file a newcomer copies to ``.env``) says which one runs (``MODEL=anthropic:claude-haiku-4-5``).
A Python module that reads environment variables without a default gets the values the
nearest example env files give them, from its own folder up to the project root (never
outside it), so that two calls resolve to the model the documented setup runs. Every file
looked for is recorded (:mod:`evallint.reads`): the module's facts are read again when one
changes, appears or goes.
"""

from __future__ import annotations

import os
import posixpath
import re

from evallint.classify import project_root_of
from evallint.config import Config
from evallint.confine import inside_any, within
from evallint.frontends.config_refs import read_noted
from evallint.source import SourceFile

# The names an example env file goes by (a real ``.env`` holds secrets and is not read).
EXAMPLE_NAMES = (".env.example", ".env.sample", ".env.template", ".env.dist", "example.env",
                 "env.example", "sample.env")
# ``os.getenv("X")``, ``os.environ.get("X")``, ``os.environ["X"]``, ``getenv("X")``
_READS = re.compile(
    r"""(?:getenv|environ\.get|environ\[)\s*\(?\s*\\?["']([A-Za-z_][A-Za-z0-9_]*)\\?["']""")
_MAX_LEVELS = 12


def env_defaults(source: SourceFile, config: Config, code: str
                 ) -> tuple[tuple[str, str, str], ...]:
    """(variable, value, the example file's display path) for each variable ``code`` reads
    that an example env file of the project gives a value; the nearest file wins."""
    wanted = set(_READS.findall(code))
    if not wanted:
        return ()
    root = os.path.realpath(project_root_of(str(source.path)) or config.root)
    here = os.path.realpath(source.path.parent)
    folder = here
    found: dict[str, tuple[str, str]] = {}
    for _ in range(_MAX_LEVELS):
        if not within(folder, root) or not inside_any(folder, config.roots):
            break
        for name in EXAMPLE_NAMES:
            cand = os.path.join(folder, name)
            if not within(os.path.realpath(cand), root):
                continue  # a link out of the project: never read
            data = read_noted(cand, config)
            if data is None:
                continue
            shown = posixpath.normpath(posixpath.join(
                posixpath.dirname(source.rel) or ".",
                os.path.relpath(cand, here).replace(os.sep, "/")))
            for key, value in parse_env(data.decode("utf-8", "replace")):
                if key in wanted and key not in found:
                    found[key] = (value, shown)
        if folder == root:
            break
        folder = os.path.dirname(folder)
    return tuple((k, v, shown) for k, (v, shown) in sorted(found.items()))


def parse_env(text: str) -> list[tuple[str, str]]:
    """``KEY=value`` lines (``export`` allowed, quotes and trailing comments dropped); lines
    with no value or a placeholder (``<your-key>``) are left out."""
    out: list[tuple[str, str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").strip()
        key, eq, value = line.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            continue
        value = value.strip()
        if value[:1] in ("'", '"'):
            end = value.find(value[0], 1)
            value = value[1:end] if end != -1 else value[1:]
        else:
            value = value.split(" #", 1)[0].strip()
        if value and not value.startswith("<"):
            out.append((key, value))
    return out
