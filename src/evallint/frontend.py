"""Front-end registration: one parser per file kind, producing :class:`FileFacts`."""

from __future__ import annotations

from collections.abc import Callable

from evallint.config import Config
from evallint.facts import FileFacts
from evallint.kinds import FileKind
from evallint.source import SourceFile


class ParseError(Exception):
    """Bad input in a file: reported as EL901 at this position, never as a traceback."""

    def __init__(self, message: str, line: int = 1, column: int = 1, cell: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = max(1, line)
        self.column = max(1, column)
        self.cell = cell


ParseFn = Callable[[SourceFile, Config], FileFacts]
FRONTENDS: dict[str, ParseFn] = {}


def frontend(*kinds: FileKind) -> Callable[[ParseFn], ParseFn]:
    """Register ``fn`` as the parser of the given file kinds."""

    def deco(fn: ParseFn) -> ParseFn:
        for kind in kinds:
            FRONTENDS[kind.value] = fn
        return fn

    return deco
