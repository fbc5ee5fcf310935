"""The supervisor lets the parent work while its workers analyse (``meanwhile``)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from evallint.workers import SetupError, supervise


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


def _setup_that_takes_a_while() -> Callable[[float], float]:
    time.sleep(0.6)  # importing what the worker parses with, in a small run
    return _slow_setup()


def test_the_budget_counts_from_the_end_of_setup_not_from_the_task_being_sent() -> None:
    # the first task is sent before the worker is ready; its time must not include setup
    results = list(supervise([0.05], _setup_that_takes_a_while, workers=1, budget=0.4))
    (index, finished), = results
    assert index == 0 and isinstance(finished, float)


def test_the_parents_own_work_does_not_wait_for_the_worker_to_be_ready() -> None:
    calls: list[float] = []
    start = time.monotonic()
    results = list(supervise([0.0], _setup_that_takes_a_while, workers=1, budget=30,
                             meanwhile=lambda: calls.append(time.monotonic())))
    assert len(results) == 1
    assert calls[0] - start < 0.3  # it ran while the worker was still setting up


def _broken_setup() -> Callable[[float], float]:
    raise RuntimeError("no front-end")


def test_a_worker_that_cannot_set_up_is_a_tool_error_not_a_finding_on_its_first_file() -> None:
    with pytest.raises(SetupError, match="no front-end"):
        list(supervise([0.0, 0.0], _broken_setup, workers=1, budget=30))


def _dying_setup() -> Callable[[float], float]:
    import os

    os._exit(7)  # a broken installation: the worker ends before it is ready


def test_a_worker_that_dies_while_setting_up_is_a_setup_error_not_its_first_files_fault(
) -> None:
    with pytest.raises(SetupError, match="exited on start"):
        list(supervise([0.0], _dying_setup, workers=1, budget=30))
