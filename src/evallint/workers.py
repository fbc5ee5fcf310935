"""Supervised worker processes: one hostile file cannot crash, stall or empty a run.

A file in a pull request can make a parser recurse until the C stack overflows (a segfault no
``except`` catches) or run for minutes. So files are analysed in child processes, one file at a
time per worker, under a wall-clock budget watched by the parent. A worker that dies is
replaced and the file it held is reported by name; a worker past the budget is killed, replaced,
and its file reported the same way. Every other file's results come back as usual.

The project-wide analysis runs in the parent; :func:`time_limit` bounds it with a timer signal.
"""

from __future__ import annotations

import faulthandler
import multiprocessing
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class Failure:
    """Why a task has no result: the worker died, or ran past the budget."""

    message: str


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


# The parent's ends of the workers' pipes. A forked worker inherits a copy of each (its own
# slot's and those of the workers forked before it) and closes them first thing: while any
# process but the parent holds a parent's end, a worker waiting on its pipe would never see
# the parent go away, and would outlive it (an editor that quits, a killed run).
_PARENT_ENDS: list[Connection] = []


def _serve(conn: Connection, setup: Callable[[], Callable[[Any], Any]]) -> None:
    """A worker's loop: build the analyser once, then answer one task per message."""
    faulthandler.disable()  # a crash is the parent's to report, by file name, not a C dump
    for end in _PARENT_ENDS:  # (inherited copies: a spawned worker has none)
        with suppress(OSError):
            end.close()
    _PARENT_ENDS.clear()
    try:
        handle = setup()
    except BaseException as exc:
        conn.send(("setup-failed", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", None))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        index, task = msg
        try:
            result = handle(task)
            conn.send((index, result))
        except Exception as exc:  # a result that cannot travel (deep nesting) or a bug
            conn.send((index, Failure(f"{type(exc).__name__}: {exc}")))


class _Slot(Generic[T]):
    def __init__(self, ctx: Any, setup: Callable[[], Callable[[T], Any]]) -> None:
        parent, child = ctx.Pipe()
        self.conn: Connection = parent
        _PARENT_ENDS.append(parent)
        self.process = ctx.Process(target=_serve, args=(child, setup), daemon=True)
        self.process.start()
        child.close()
        self.task: tuple[int, T] | None = None
        self.started = 0.0
        self.ready = False

    def send(self, index: int, task: T) -> None:
        self.task = (index, task)
        self.started = time.monotonic()
        with suppress(OSError):  # the worker is gone: its end shows in ``_poll``
            self.conn.send((index, task))

    def stop(self, kill: bool = False) -> None:
        if kill and self.process.is_alive():
            self.process.kill()
        else:
            with suppress(OSError):
                self.conn.send(None)
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        with suppress(ValueError):
            _PARENT_ENDS.remove(self.conn)
        self.conn.close()


def _exit_reason(process: Any) -> str:
    code = process.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    return f"exit status {code}"


class SetupError(Exception):
    """The workers could not start (the message says why); a tool error, not a finding."""


def supervise(tasks: list[T], setup: Callable[[], Callable[[T], R]], *, workers: int,
              budget: float, meanwhile: Callable[[], None] | None = None
              ) -> Iterator[tuple[int, R | Failure]]:
    """Run ``setup()(task)`` for every task in ``workers`` child processes and yield
    ``(index, result)`` as results arrive; a task whose worker died or ran past ``budget``
    seconds yields a :class:`Failure` instead. ``meanwhile`` runs here once the first tasks
    are on their way (work of the parent's own that then overlaps theirs)."""
    if not tasks:
        if meanwhile is not None:
            meanwhile()
        return
    ctx = _context()
    pending: deque[tuple[int, T]] = deque(enumerate(tasks))
    slots: list[_Slot[T]] = [_Slot(ctx, setup) for _ in range(max(1, min(workers, len(tasks))))]
    try:
        for s in slots:  # the first task waits in the pipe while the worker sets up
            s.send(*pending.popleft())
        while pending or any(s.task is not None for s in slots):
            for s in slots:
                if s.ready and s.task is None and pending:
                    s.send(*pending.popleft())
            if meanwhile is not None:
                meanwhile()
                meanwhile = None
            now = time.monotonic()
            busy = [s for s in slots if s.task is not None and s.ready]  # setting up: unbounded
            waits = [budget - (now - s.started) for s in busy]
            timeout = max(0.0, min(waits)) if waits else None
            ready = wait([s.conn for s in slots] + [s.process.sentinel for s in slots], timeout)
            now = time.monotonic()
            for i, s in enumerate(slots):
                outcome = _poll(s, ready, now, budget)
                if outcome is None:
                    continue
                kind, value = outcome
                if kind == "result":
                    yield value
                    continue
                if kind == "setup":
                    raise SetupError(value)
                # The worker is gone or hopeless: report its file, start another.
                if s.task is not None:
                    yield s.task[0], Failure(value)
                s.stop(kill=True)
                slots[i] = _Slot(ctx, setup)
    finally:
        for s in slots:
            s.stop(kill=s.task is not None)


def _poll(s: _Slot[Any], ready: list[Any], now: float, budget: float
          ) -> tuple[str, Any] | None:
    """What happened to slot ``s``: a result, a death, a timeout, or nothing yet."""
    if s.conn in ready:
        try:
            index, value = s.conn.recv()
        except (EOFError, OSError):
            s.process.join(timeout=5)
            if not s.ready:
                return "setup", f"a worker process exited on start ({_exit_reason(s.process)})"
            return "died", f"the analysis process died ({_exit_reason(s.process)}) while " \
                           "reading this file"
        if index == "ready":
            s.ready = True
            s.started = now  # the budget counts from here: setting up is not the file's time
            return None
        if index == "setup-failed":
            return "setup", f"a worker process could not start: {value}"
        s.task = None
        return "result", (index, value)
    if s.process.sentinel in ready:
        s.process.join(timeout=5)
        if not s.ready:
            return "setup", f"a worker process exited on start ({_exit_reason(s.process)})"
        return "died", f"the analysis process died ({_exit_reason(s.process)}) while reading " \
                       "this file"
    if s.task is not None and s.ready and now - s.started >= budget:
        return "timeout", f"not analysed: it took longer than the time budget of {budget:g} s " \
                          "per file (time-budget)"
    return None


class Forked(Generic[R]):
    """``fn()`` computed in a forked child while the parent goes on (the child inherits the
    parent's objects: nothing is sent but the result). :meth:`result` is None when the child
    died, could not send its result, or no child could start: the caller computes it then."""

    def __init__(self, fn: Callable[[], R]) -> None:
        self.process: Any = None
        self.conn: Connection | None = None
        if "fork" not in multiprocessing.get_all_start_methods():
            return
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe(duplex=False)
        try:
            self.process = ctx.Process(target=_send_result, args=(child, fn), daemon=True)
            self.process.start()
        except OSError:
            self.process = None
            parent.close()
            return
        finally:
            child.close()
        self.conn = parent

    def result(self) -> R | None:
        if self.conn is None:
            return None
        try:
            ok, value = self.conn.recv()  # EOFError when the child died first
            return value if ok else None
        except (EOFError, OSError):
            return None
        finally:
            self.close()

    def close(self) -> None:
        """Stop the child (a budget ran out in the parent) and release it."""
        if self.process is not None:
            if self.process.is_alive():
                self.process.kill()
            self.process.join(timeout=5)
            self.process = None
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def _send_result(conn: Connection, fn: Callable[[], Any]) -> None:
    faulthandler.disable()
    try:
        value = fn()
        conn.send((True, value))
    except BaseException:  # the parent computes it itself
        with suppress(Exception):
            conn.send((False, None))
    finally:
        conn.close()
