"""Progress on stderr: a redrawn bar on a terminal, one plain line per case elsewhere (CI logs).

Both show done/total, the pass rate of the cases finished in this run, the spend so far and an
ETA. The ETA is this run's average time per case times the cases left, so resumed cases (which
took no time now) do not make it look faster than it is.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO


def format_eta(seconds: float | None) -> str:
    """``1h02m``, ``3m05s``, ``42s``; ``--`` when it cannot be estimated yet."""
    if seconds is None or seconds != seconds or seconds < 0:
        return "--"
    s = round(seconds)
    if s >= 3600:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def _score(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) else "n/a"


class Progress:
    def __init__(self, total: int, done: int, *, quiet: bool = False,
                 stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream or sys.stderr
        self.total = total
        self.done = done
        self.resumed = done
        self.passed = 0
        self.cost = 0.0
        self.quiet = quiet
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.clock = clock
        self.started = clock()

    @property
    def done_now(self) -> int:
        """Cases finished by this run (not counting resumed ones)."""
        return self.done - self.resumed

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.done_now if self.done_now else None

    def eta(self) -> float | None:
        """Seconds left at this run's pace, or None before the first case finishes."""
        if not self.done_now:
            return None
        per_case = (self.clock() - self.started) / self.done_now
        return per_case * max(self.total - self.done, 0)

    def status(self) -> str:
        """``12/40  pass 75.0%  $0.0123  eta 1m05s``: the part both displays share."""
        rate = self.pass_rate
        shown = f"{rate:.1%}" if rate is not None else "--"
        return (f"{self.done}/{self.total}  pass {shown}  ${self.cost:.4f}  "
                f"eta {format_eta(self.eta())}")

    def note(self, message: str) -> None:
        """A status line (not suppressed by --quiet only when it matters: callers decide)."""
        if self.quiet:
            return
        self._clear()
        print(f"evallint run: {message}", file=self.stream, flush=True)

    def case_done(self, record: dict[str, Any]) -> None:
        self.done += 1
        self.passed += bool(record.get("pass"))
        cost = record.get("total_cost_usd")
        self.cost += cost if isinstance(cost, int | float) else 0.0
        if self.quiet:
            return
        if self.tty:
            width = 30
            filled = min(int(width * self.done / self.total), width) if self.total else width
            bar = "#" * filled + "." * (width - filled)
            self.stream.write(f"\r\033[K[{bar}] {self.status()}")
            self.stream.flush()
            return
        score = record.get("score")
        shown = f"{score:.3f}" if isinstance(score, int | float) else "n/a"
        history = record.get("attempt_history")
        path = ""
        if isinstance(history, list) and len(history) > 1:  # the refinement, attempt by attempt
            path = " (" + " → ".join(_score(a.get("score") if isinstance(a, dict) else None)
                                     for a in history) + ")"
        print(f"evallint run: [{self.status()}] {record.get('case_id')}: "
              f"{record.get('status')} score {shown} attempts {record.get('attempts')}{path}",
              file=self.stream, flush=True)

    def _clear(self) -> None:
        if self.tty and self.done_now:
            self.stream.write("\r\033[K")

    def finish(self) -> None:
        if self.tty and not self.quiet and self.done_now:
            self.stream.write("\n")
            self.stream.flush()
