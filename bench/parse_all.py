"""Read + ``ast.parse`` of files (a notebook: its code cells joined): the baseline that
``bench_real.py`` sets beside ``evallint check``, in its own process and, run as a script with
the paths on standard input, in a fresh interpreter (it imports nothing else, so its start-up
is the interpreter's own)."""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterable


def parse_all(paths: Iterable[str]) -> None:
    for path in paths:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            if path.endswith(".ipynb"):
                cells = json.loads(text).get("cells", [])
                text = "\n".join("".join(c.get("source", [])) for c in cells
                                 if c.get("cell_type") == "code")
            ast.parse(text)
        except (SyntaxError, ValueError, UnicodeDecodeError, AttributeError, RecursionError):
            pass


if __name__ == "__main__":
    parse_all(sys.stdin.read().splitlines())
