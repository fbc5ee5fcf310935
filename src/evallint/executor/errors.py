"""The errors the executor raises. Each one is a tool error: the CLI prints it on one line and
exits 2, never with a traceback."""

from __future__ import annotations


class RunError(Exception):
    """Anything that stops ``evallint run`` before or during the run (exit 2)."""


class SpecError(RunError):
    """A bad loop spec, prompt file or cases file. The message names the file (and line)."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        where = path or ""
        if path and line:
            where = f"{path}:{line}"
        super().__init__(f"{where}: {message}" if where else message)
        self.path = path
        self.line = line


class ApiFailure(RunError):
    """The Messages API failed in a way retries cannot fix (auth, bad request, retries spent)."""


class CostCapReached(RunError):
    """The cost cap is spent: no new request may start."""
