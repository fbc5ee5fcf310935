"""``mode: batch``: the refine loop's calls go through the Message Batches API.

The loop code is the direct mode's, unchanged: :class:`BatchTransport` stands where the
:class:`MessagesClient` stands and answers the same ``create_message`` calls. A call is queued
instead of sent; once every case in flight is waiting on a call (a *wave*: all first
generations, then all their evaluations, then all second generations ...), the queue is
submitted as message batches (one for the generator calls, one for the evaluator calls, each
request's ``custom_id`` naming its case line and call, e.g. ``l12-g2``), polled with backoff,
and the results streamed back and matched by ``custom_id`` to the waiting calls. So isolation,
extraction, best-so-far and the results records are the direct mode's by construction.

Each submitted batch is recorded (fsynced, before polling) in a ledger beside the results file:
its id and, per request, the custom_id, the case id and a fingerprint of the request body. A run
killed while batches were in flight, started again, replays its unfinished cases; each call
whose custom_id and body match a recorded request reads that batch's result instead of being
submitted again. Only ledger entries of unfinished cases are loaded, so memory stays bounded by
the cases in flight, not the cases in the file.

A request whose result is ``expired``, ``canceled``, missing, or ``errored`` with a transient
error type is submitted again in the next wave (up to ``max_retries`` times); any other error
stops the run as it would in direct mode. Results are costed at the batch price.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evallint.executor.client import CallResult, MessagesClient
from evallint.executor.errors import ApiFailure
from evallint.executor.results import DurableLines

# The case a worker is running: (line in the cases file, case id). Set by the runner.
CURRENT_CASE: contextvars.ContextVar[tuple[int, str]] = contextvars.ContextVar("current_case")
MAX_BATCH_REQUESTS = 10_000  # the API allows 100,000 (and 256 MB); smaller batches end sooner
TRANSIENT_ERRORS = {"api_error", "overloaded_error", "rate_limit_error", "timeout_error"}
POLL_FACTOR = 1.5
MAX_POLL_S = 60.0


def fingerprint(params: dict[str, Any]) -> str:
    """A short hash of a request body: a recorded result is reused only for the same request."""
    data = json.dumps(params, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:20]


def ledger_path(results: Path) -> Path:
    return results.with_name(f"{results.stem}.batches.jsonl")


class BatchLedger:
    """The submitted batches of unfinished cases: custom_id → (batch id, request fingerprint)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.index: dict[str, tuple[str, str]] = {}
        self._out = DurableLines(path)

    def load(self, finished: set[str]) -> int:
        """Read the ledger, keeping the requests of cases not finished; returns how many
        batches those requests are in. A torn or foreign line is skipped, never fatal."""
        if not self.path.exists():
            return 0
        with self.path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    entry = json.loads(line)
                    batch_id = str(entry["batch_id"])
                    requests = entry["requests"]
                except (ValueError, KeyError, TypeError):
                    continue
                if not isinstance(requests, list):
                    continue
                for item in requests:
                    if (isinstance(item, list) and len(item) == 3
                            and str(item[1]) not in finished):
                        self.index[str(item[0])] = (batch_id, str(item[2]))
        return len({b for b, _ in self.index.values()})

    def take(self, custom_id: str, fp: str) -> str | None:
        """The batch holding this exact request, once (a second ask is a new request)."""
        found = self.index.get(custom_id)
        if found is None or found[1] != fp:
            return None
        del self.index[custom_id]
        return found[0]

    def record(self, batch_id: str, requests: list[tuple[str, str, str]]) -> None:
        """Append one submitted batch, fsynced before anyone waits on it."""
        self._out.write(json.dumps({"batch_id": batch_id,
                                    "requests": [list(r) for r in requests]}) + "\n")

    def close(self) -> None:
        self._out.close()


@dataclass(eq=False)
class _Request:
    custom_id: str
    case_id: str
    model: str
    params: dict[str, Any]
    future: asyncio.Future[CallResult]
    fp: str = ""
    tries: int = 0


@dataclass
class BatchStats:
    submitted: int = 0  # batches created by this run
    recovered: int = 0  # recorded batches read again after a restart
    requests: int = 0
    resubmitted: int = 0


@dataclass
class BatchTransport:
    """Queues ``create_message`` calls and sends each wave as message batches."""

    client: MessagesClient
    ledger: BatchLedger
    poll_s: float = 1.0
    max_requests: int = MAX_BATCH_REQUESTS
    stats: BatchStats = field(default_factory=BatchStats)
    note: Callable[[str], None] = lambda message: None  # a status line for the user
    active: int = 0
    halted: bool = False  # a worker failed: the run is stopping, send nothing more
    _pending: list[_Request] = field(default_factory=list)
    _flushing: bool = False
    _task: asyncio.Task[None] | None = None

    @property
    def accepts_temperature(self) -> bool:
        return self.client.accepts_temperature

    # ---------------------------------------------------------------- the loop's side
    async def create_message(self, *, model: str, system: str, messages: list[dict[str, Any]],
                             max_tokens: int, temperature: float | None,
                             tag: str = "") -> CallResult:
        """Queue one call for the next wave and wait for its result."""
        self.client.meter.check()
        line, case_id = CURRENT_CASE.get((0, ""))
        params = self.client.params(model=model, system=system, messages=messages,
                                    max_tokens=max_tokens, temperature=temperature)
        future: asyncio.Future[CallResult] = asyncio.get_running_loop().create_future()
        self._pending.append(_Request(f"l{line}-{tag or 'x'}", case_id, model, params, future,
                                      fingerprint(params)))
        self._maybe_flush()
        return await future

    def enter(self) -> None:
        """A worker starts taking cases."""
        self.active += 1

    def leave(self) -> None:
        """A worker has no more cases (or stopped): the wave may no longer wait for it."""
        self.active -= 1
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        # A call whose worker was cancelled (the run is stopping) is never sent: a batch
        # nobody waits on would still be paid for.
        self._pending = [r for r in self._pending if not r.future.done()]
        if (self.halted or self._flushing or not self._pending
                or len(self._pending) < self.active):
            return
        self._flushing = True
        self._task = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        wave, self._pending = self._pending, []
        try:
            await self._send(wave)
        except BaseException as exc:  # the waiting calls fail with it (ApiFailure stops the run)
            for req in wave:
                if not req.future.done():
                    req.future.set_exception(exc if isinstance(exc, Exception)
                                             else ApiFailure("batch wave cancelled"))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._flushing = False
            self._maybe_flush()

    # ---------------------------------------------------------------- the API's side
    async def _send(self, wave: list[_Request]) -> None:
        recovered: dict[str, list[_Request]] = {}
        fresh: dict[str, list[_Request]] = {}
        for req in wave:
            batch_id = self.ledger.take(req.custom_id, req.fp) if req.tries == 0 else None
            if batch_id is not None:
                recovered.setdefault(batch_id, []).append(req)
            else:  # one batch per role: the generator wave, then the evaluator wave
                role = req.custom_id.split("-", 1)[1][:1]
                fresh.setdefault(role, []).append(req)
        jobs = [self._recover(batch_id, reqs) for batch_id, reqs in recovered.items()]
        for role in sorted(fresh, key=lambda r: r != "g"):
            jobs += [self._submit(chunk) for chunk in _chunks(fresh[role], self.max_requests)]
        await asyncio.gather(*jobs)

    async def _submit(self, reqs: list[_Request]) -> None:
        sdk = self.client.sdk
        body = [{"custom_id": r.custom_id, "params": r.params} for r in reqs]
        batch, _ = await self.client.call(
            lambda: sdk.messages.batches.create(requests=body),  # type: ignore[arg-type]
            "submitting a message batch")
        self.ledger.record(batch.id, [(r.custom_id, r.case_id, r.fp) for r in reqs])
        self.note(f"message batch {batch.id}: {len(reqs)} request(s) submitted "
                  f"({reqs[0].custom_id} ...)")
        self.stats.submitted += 1
        self.stats.requests += len(reqs)
        await self._collect(batch.id, reqs)

    async def _recover(self, batch_id: str, reqs: list[_Request]) -> None:
        """Read a batch a killed run submitted; if it is gone, submit its requests anew."""
        try:
            await self._collect(batch_id, reqs)
        except ApiFailure:
            self._retry([r for r in reqs if not r.future.done()], "gone", count=False)
            return
        self.stats.recovered += 1

    async def _collect(self, batch_id: str, reqs: list[_Request]) -> None:
        """Poll until the batch ends, then stream its results to the waiting calls."""
        sdk = self.client.sdk
        delay = self.poll_s
        while True:
            batch, _ = await self.client.call(
                lambda: sdk.messages.batches.retrieve(batch_id),
                f"polling message batch {batch_id}")
            if batch.processing_status == "ended":
                break
            await self.client.sleep(delay)
            delay = min(delay * POLL_FACTOR, MAX_POLL_S)
        waiting = {r.custom_id: r for r in reqs}

        async def read() -> None:
            stream = await sdk.messages.batches.results(batch_id)
            async for item in stream:
                req = waiting.pop(item.custom_id, None)
                if req is not None:
                    self._settle(req, item.result)

        await self.client.call(read, f"reading the results of message batch {batch_id}")
        self._retry(list(waiting.values()), "missing")

    def _settle(self, req: _Request, result: Any) -> None:
        if req.future.done():  # its worker was cancelled (the run is stopping)
            return
        kind = getattr(result, "type", None)
        if kind == "succeeded":
            try:
                call = self.client.result(result.message, req.model, req.tries, batch=True)
            except (AttributeError, TypeError, ValueError):
                self._retry([req], "unreadable")
                return
            req.future.set_result(call)
        elif kind == "errored":
            error = getattr(getattr(result, "error", None), "error", None)
            etype = str(getattr(error, "type", "") or "api_error")
            if etype in TRANSIENT_ERRORS:
                self._retry([req], etype)
            else:
                message = getattr(error, "message", "") or ""
                req.future.set_exception(ApiFailure(
                    f"message batch request {req.custom_id} calling {req.model} errored: "
                    f"{etype}: {message}"))
        else:  # expired, canceled, or a kind this SDK does not know
            self._retry([req], str(kind or "unknown"))

    def _retry(self, reqs: list[_Request], why: str, *, count: bool = True) -> None:
        """Queue requests again for the next wave, or fail them once retries are spent."""
        for req in reqs:
            if req.future.done():
                continue
            if count:
                req.tries += 1
                self.client.retries_total += 1
                self.stats.resubmitted += 1
            if req.tries > self.client.max_retries:
                req.future.set_exception(ApiFailure(
                    f"message batch request {req.custom_id} calling {req.model}: {why}; "
                    f"gave up after {req.tries} tries"))
            else:
                self._pending.append(req)

    async def close(self) -> None:
        self.ledger.close()
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


def _chunks(items: list[_Request], size: int) -> Iterator[list[_Request]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
