"""Where the checked tree may make evallint read: inside the project, never beyond it.

The tree is untrusted: a config, a lock file or a spec can name any path (``/etc/hostname``,
``../../.ssh/id_rsa``), and any file or folder in it can be a symlink to anywhere. What a file
names is read only when its real path (symlinks followed) lies inside one of the run's roots:
the project root, and the paths the person running the check named on the command line that
lie outside the project (they chose those). A path that is inside the project as written but
leads out of it through a symlink is not read, wherever it is named, also on the command line.
"""

from __future__ import annotations

import os
from pathlib import Path


class Outside(PermissionError):
    """A path that leads outside the run's roots: never opened."""


def within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or lies under it (both absolute and normalised)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def inside_any(path: str | os.PathLike[str], roots: tuple[str, ...]) -> bool:
    """Whether the real path of ``path`` lies inside one of ``roots`` (real paths)."""
    real = os.path.realpath(path)
    return any(within(real, r) for r in roots)


def escapes(arg: str | os.PathLike[str], root: Path) -> bool:
    """A path named on the command line that lies inside the project as written but leads
    out of it through a symlink (``evallint check prompts`` where ``prompts -> /etc``)."""
    lexical = os.path.abspath(arg)
    return within(lexical, os.path.abspath(root)) and \
        not within(os.path.realpath(lexical), os.path.realpath(root))


def refused(arg: str | os.PathLike[str], root: Path) -> str | None:
    """Why a path argument is not read, or None. Inside the project as written, it must stay
    inside through its symlinks; outside the project (the person running the check named
    another tree), it must not itself be a symlink: a link passed by name, as pre-commit and
    CI jobs pass changed files, is not a choice of where it leads."""
    lexical = os.path.abspath(arg)
    what = "folder" if os.path.isdir(lexical) else "file"
    if escapes(lexical, root):
        return f"not read: a symlink to a {what} outside the project"
    if not within(lexical, os.path.abspath(root)) and os.path.islink(lexical):
        return f"not read: a symlink to a {what}, named outside the project"
    return None


def run_roots(root: Path, args: list[str]) -> tuple[str, ...]:
    """The real roots a run may read under: the project root, and each path argument that
    lies outside the project as written (``evallint check /tmp/other-project``) and is not
    :func:`refused`."""
    roots = [os.path.realpath(root)]
    lexical_root = os.path.abspath(root)
    for arg in args:
        lexical = os.path.abspath(arg)
        if not within(lexical, lexical_root) and refused(lexical, root) is None:
            real = os.path.realpath(lexical)
            roots.append(real if os.path.isdir(real) else os.path.dirname(real))
    return tuple(dict.fromkeys(roots))


def command_line_file(path: str, root: Path, what: str) -> str | None:
    """Why a file the command line names (a baseline, a cache folder, an output file) must
    not be used, or None: inside the project as written, it must stay inside through its
    symlinks (a committed ``evallint.sarif -> ~/.bashrc``)."""
    if escapes(path, root):
        return f"{path}: the {what} is a symlink out of the project; not used"
    return None
