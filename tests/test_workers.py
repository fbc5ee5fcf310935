"""The supervisor lets the parent work while its workers analyse (``meanwhile``)."""

from __future__ import annotations

import time
from collections.abc import Callable

from evallint.workers import supervise


def _slow_setup() -> Callable[[float], float]:
    def handle(seconds: float) -> float:
        time.sleep(seconds)
        return time.monotonic()

    return handle


def test_the_parents_own_work_runs_once_while_a_worker_holds_a_task() -> None:
    calls: list[float] = []
    results = list(supervise([0.4], _slow_setup, workers=1, budget=30,
                             meanwhile=lambda: calls.append(time.monotonic())))
    assert len(calls) == 1
    (index, finished), = results
    assert index == 0 and isinstance(finished, float)
    assert calls[0] < finished  # it ran before the worker was done, not after


def test_the_parents_own_work_runs_when_there_is_nothing_to_analyse() -> None:
    calls: list[int] = []
    assert list(supervise([], _slow_setup, workers=2, budget=30,
                          meanwhile=lambda: calls.append(1))) == []
    assert calls == [1]
