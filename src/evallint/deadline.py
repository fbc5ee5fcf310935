"""A wall-clock budget for a block of Python code, with a timer signal.

Kept apart from :mod:`evallint.workers` (which imports multiprocessing) so that discovery can
bound each file it sniffs without paying for that import on a run the cache answers. CPython's
regular-expression engine checks for signals, so a pattern that backtracks is interrupted too.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class BudgetExceeded(BaseException):
    """Raised inside a :func:`time_limit` block when its time is up (a BaseException, so
    that the ``except Exception`` around each check cannot swallow it and carry on)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`BudgetExceeded` in the block after ``seconds`` of wall time (main thread
    only, where a timer signal can interrupt Python code; elsewhere the block is unbounded)."""
    if (seconds <= 0 or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise BudgetExceeded()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
