"""EL505: open a results file with ``"a"`` (append) instead of ``"w"`` (truncate).

libcst keeps every byte of the source, so the one string node of the mode is rewritten and
nothing else moves; it is imported here only, when a fix is asked for.

Safe by the project's definition (no prompt changes meaning): the records written are the
same; what changes is that earlier records survive a rerun, which is what the rule asks for.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from evallint.findings import Finding
from evallint.fixing import Fix, TextEdit, fixer, offset_of

if TYPE_CHECKING:
    import libcst as cst

_OPENERS = ("open",)


@fixer("EL505")
def append_mode(finding: Finding, text: str) -> Fix | None:
    """Rewrite the mode string of the ``open`` call on the finding's line."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    try:
        module = cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    found: list[tuple[int, cst.SimpleString]] = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            where = positions.get(node)
            if where is None or where.start.line != finding.line:
                return
            mode = _mode_arg(node)
            if mode is not None:
                found.append((where.start.column + 1, mode))

    wrapper.visit(Finder())
    if not found:
        return None
    # The finding's column is the call's start; a line with two opens picks the one there.
    _, node = min(found, key=lambda pair: abs(pair[0] - finding.column))
    where = positions[node]
    body_at = len(node.prefix) + len(node.quote)
    value = node.value
    if value[body_at:body_at + 1] != "w":
        return None
    start = offset_of(text, where.start.line, where.start.column + 1) + body_at
    edit = TextEdit(start, start + 1, "a")
    return Fix("EL505", 'Open the results file with "a" (append)', True, (edit,))


_WRITE_MODE = re.compile(r"^w[bt+]{0,2}$")


def _mode_arg(call: cst.Call) -> cst.SimpleString | None:
    """The mode of ``open(path, "w")``, ``open(path, mode="w")``, ``gzip.open(path, "wt")``
    or ``p.open("w")`` when it is a string literal that is a write mode (``w``, ``wb``,
    ``w+``…); None otherwise (a variable, an f-string, a path that happens to start with w)."""
    import libcst as cst

    func = call.func
    if isinstance(func, cst.Name) and func.value in _OPENERS:
        indexes: tuple[int, ...] = (1,)
    elif isinstance(func, cst.Attribute) and func.attr.value == "open":
        indexes = (0, 1)  # Path.open(mode) or module.open(path, mode)
    else:
        return None
    positional = [a.value for a in call.args if a.keyword is None and a.star == ""]
    candidates = [positional[i] for i in indexes if i < len(positional)]
    candidates += [a.value for a in call.args
                   if a.keyword is not None and a.keyword.value == "mode"]
    for mode in candidates:
        if isinstance(mode, cst.SimpleString) and _WRITE_MODE.match(mode.raw_value):
            return mode
    return None
