"""The errors the executor raises. Each one is a tool error: the CLI prints it on one line and
exits 2, never with a traceback."""

from __future__ import annotations

from pathlib import Path


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


def read_text(path: Path, what: str) -> str:
    """Read a file the spec names; a missing or unreadable one is a SpecError naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(f"{what} not found", str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read {what}: {exc}", str(path)) from None
