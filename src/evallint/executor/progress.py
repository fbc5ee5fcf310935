"""Progress on stderr: a redrawn bar on a terminal, one plain line per case elsewhere (CI logs)."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


class Progress:
    def __init__(self, total: int, done: int, *, quiet: bool = False,
                 stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.total = total
        self.done = done
        self.passed = 0
        self.cost = 0.0
        self.quiet = quiet
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()

    def note(self, message: str) -> None:
        """A status line (not suppressed by --quiet only when it matters: callers decide)."""
        if self.quiet:
            return
        self._clear()
        print(f"evallint run: {message}", file=self.stream, flush=True)

    def case_done(self, record: dict[str, Any]) -> None:
        self.done += 1
        self.passed += bool(record.get("pass"))
        self.cost += record.get("total_cost_usd") or 0.0
        if self.quiet:
            return
        if self.tty:
            width = 30
            filled = int(width * self.done / self.total) if self.total else width
            bar = "#" * filled + "." * (width - filled)
            elapsed = time.monotonic() - self.started
            self.stream.write(f"\r[{bar}] {self.done}/{self.total}  pass {self.passed}  "
                              f"${self.cost:.4f}  {elapsed:5.1f}s")
            self.stream.flush()
            return
        score = record.get("score")
        shown = f"{score:.3f}" if isinstance(score, int | float) else "n/a"
        print(f"evallint run: [{self.done}/{self.total}] {record['case_id']}: "
              f"{record.get('status')} score {shown} attempts {record.get('attempts')}",
              file=self.stream, flush=True)

    def _clear(self) -> None:
        if self.tty and self.done:
            self.stream.write("\r\033[K")

    def finish(self) -> None:
        if self.tty and not self.quiet:
            self.stream.write("\n")
            self.stream.flush()
