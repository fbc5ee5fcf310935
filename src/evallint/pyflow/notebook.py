"""Jupyter notebooks: code cells joined into one module, with a map back to (cell, line).

Cells run top to bottom in one namespace, so data flows across cells; joining them keeps that.
IPython magics and shell escapes (``%time``, ``!pip``, ``x = !ls``) are replaced by ``pass``
with the same indentation; a ``%%`` cell magic blanks its whole cell.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from evallint import suppress
from evallint.facts import Pos
from evallint.frontend import ParseError

_MAGIC = re.compile(r"^(\s*)(?:[%!]|[\w.,\s\[\]]+=\s*[%!])")


@dataclass
class JoinedNotebook:
    """The code of every code cell, joined; ``starts[i]`` is the joined line where cell i+1
    begins (code cells are numbered from 1 in their order in the notebook)."""

    code: str
    starts: list[int] = field(default_factory=list)
    suppressions: list[suppress.Suppression] = field(default_factory=list)

    def pos(self, line: int, column: int) -> Pos:
        """Map a 1-based joined line and 0-based column to the cell and line a user sees."""
        cell = 0
        for i, start in enumerate(self.starts):
            if start <= line:
                cell = i
            else:
                break
        if not self.starts:
            return Pos(line, column + 1)
        return Pos(line - self.starts[cell] + 1, column + 1, cell + 1)


def join_cells(text: str) -> JoinedNotebook:
    """Parse notebook JSON and join its code cells; bad JSON raises ParseError."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid notebook JSON: {exc.msg}", exc.lineno, exc.colno) from None
    if not isinstance(data, dict) or not isinstance(data.get("cells", []), list):
        raise ParseError("not a Jupyter notebook: no 'cells' list")
    out: list[str] = []
    joined = JoinedNotebook(code="")
    line = 1
    number = 0
    for cell in data.get("cells", []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        number += 1
        src = cell.get("source", "")
        if isinstance(src, list):
            src = "".join(s for s in src if isinstance(s, str))
        if not isinstance(src, str):
            src = ""
        joined.starts.append(line)
        joined.suppressions.extend(suppress.scan(src, cell=number))
        lines = src.splitlines() or [""]
        if lines[0].lstrip().startswith("%%"):
            lines = [""] * len(lines)
        for raw in lines:
            m = _MAGIC.match(raw)
            out.append(f"{m.group(1)}pass" if m else raw)
        line += len(lines)
    joined.code = "\n".join(out) + "\n"
    return joined
