"""Run a loop spec end to end: plan, cases, resume, concurrent workers, results and summary.

Memory stays flat in the number of cases: cases are streamed, each record is written (and
fsynced) as soon as its case finishes, and the summary is a streaming pass over the file.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from evallint.executor.batch import batches, judge_batch, sample_ids
from evallint.executor.batches import CURRENT_CASE, BatchLedger, BatchTransport, ledger_path
from evallint.executor.cases import Case, iter_cases, validate_cases
from evallint.executor.client import MessagesClient
from evallint.executor.errors import ApiFailure, CostCapReached, RunError
from evallint.executor.loop import Runtime, run_case
from evallint.executor.plan import OUTPUT_PLACEHOLDER, Plan, make_plan
from evallint.executor.progress import Progress
from evallint.executor.results import ResultsStore, write_summary
from evallint.executor.spec import LoopSpec


@dataclass
class RunOptions:
    resume: bool = True
    concurrency: int | None = None
    max_cost_usd: float | None = None
    results: Path | None = None
    quiet: bool = False
    base_url: str | None = None  # None: the SDK reads ANTHROPIC_BASE_URL
    stream: TextIO | None = None
    fail_under: float | None = None
    batch: bool = False  # --batch: the Message Batches API (same as mode: batch)
    batch_poll_s: float = 1.0  # first wait between polls of a message batch (then backoff)
    mock: bool = False  # --mock: the mock provider answers in-process (executor/mock.py)
    mock_script: Path | None = None  # --mock-script: its scripted replies


@dataclass
class RunOutcome:
    total: int
    finished: int
    skipped: int
    summary_path: Path | None
    summary: dict[str, Any] = field(default_factory=dict)
    stopped: str | None = None  # cost_cap | api_failure
    message: str = ""

    @property
    def complete(self) -> bool:
        return self.stopped is None and self.finished == self.total


def apply_options(spec: LoopSpec, opts: RunOptions) -> LoopSpec:
    changes: dict[str, Any] = {}
    if opts.concurrency is not None:
        changes["concurrency"] = opts.concurrency
    if opts.max_cost_usd is not None:
        changes["max_cost_usd"] = opts.max_cost_usd
    if opts.results is not None:
        changes["results"] = opts.results
    elif opts.mock:
        from evallint.executor.mock import mock_results

        changes["results"] = mock_results(spec.results)
    if opts.fail_under is not None:
        changes["fail_under"] = opts.fail_under
    if opts.batch:
        changes["mode"] = "batch"
    out = dataclasses.replace(spec, **changes) if changes else spec
    if out.mode == "batch" and out.judge is not None:
        raise RunError("--batch runs the refine loop (generator and evaluator); the batched "
                       "judge mode already groups its calls")
    return out


def dry_run(plan: Plan) -> str:
    """The prompts of the first case as they would be sent, without sending anything."""
    spec = plan.spec
    _, case = next(iter_cases(spec.cases, need_output=spec.batch_mode))
    parts = [f"# case {case.id}"]
    if plan.generator is not None:
        g = plan.render_generator(case.input)
        parts += [f"## generator ({plan.generator.model}) system", g.system or "(none)",
                  "## generator user", g.user]
    output = case.output if spec.batch_mode else OUTPUT_PLACEHOLDER
    e = plan.render_evaluator(case.input, output if isinstance(output, str) else str(output))
    parts += [f"## evaluator ({plan.evaluator.model}) system", e.system or "(none)",
              "## evaluator user", e.user]
    return "\n\n".join(parts) + "\n"


def _pending(spec: LoopSpec, finished: set[str], chosen: set[str] | None
             ) -> Iterator[tuple[int, Case]]:
    """The unfinished cases with their line in the cases file, streamed."""
    for line, case in iter_cases(spec.cases, need_output=spec.batch_mode):
        if case.id in finished or (chosen is not None and case.id not in chosen):
            continue
        yield line, case


async def execute(plan: Plan, opts: RunOptions, client: MessagesClient | None = None
                  ) -> RunOutcome:
    """Run every unfinished case. Raises RunError for problems found before the first request."""
    spec = plan.spec
    total = validate_cases(spec.cases, need_output=spec.batch_mode)
    chosen = None
    if spec.judge is not None:
        chosen = sample_ids(spec.cases, spec.judge.sample, spec.judge.seed,
                            spec.judge.stratify_by)
        total = len(chosen) if chosen is not None else total
    mocked = client.mock is not None if client is not None else opts.mock
    provider = "mock" if mocked else "anthropic"
    store = ResultsStore(spec.results)
    store.prepare(resume=opts.resume, provider=provider)
    done_before = len(store.finished if chosen is None else store.finished & chosen)
    progress = Progress(total, done_before, quiet=opts.quiet, stream=opts.stream)
    if store.repaired_tail:
        progress.note(f"{spec.results}: removed a torn last line left by an interrupted run")
    if done_before:
        progress.note(f"resuming: {done_before} of {total} cases already done")
    own_client = client is None
    if client is None:
        mock = None
        if opts.mock:
            from evallint.executor.mock import MockProvider

            mock = MockProvider.for_run(plan, opts.mock_script)
        client = MessagesClient.open(
            prices=spec.prices, max_cost_usd=spec.max_cost_usd, max_retries=spec.max_retries,
            timeout_s=spec.timeout_s, base_url=opts.base_url, mock=mock)
    roles = [r for r in (plan.generator, plan.evaluator) if r is not None]
    if any(r.temperature is not None for r in roles) and not client.accepts_temperature:
        progress.note("temperature is not sent: the installed anthropic SDK's Messages API has "
                      "no temperature parameter")
    run_id = uuid.uuid4().hex[:12]
    transport = None
    if spec.mode == "batch":
        ledger = BatchLedger(ledger_path(spec.results))
        if not opts.resume and ledger.path.exists():
            ledger.path.unlink()  # a fresh run: the old batches answer nothing it will ask
        found = ledger.load(store.finished)
        if found:
            progress.note(f"picking up {found} submitted message batch(es) from {ledger.path}")
        transport = BatchTransport(client, ledger, poll_s=opts.batch_poll_s,
                                   note=progress.note)
    rt = Runtime.build(plan, transport or client, run_id)
    outcome = RunOutcome(total=total, finished=done_before, skipped=done_before,
                         summary_path=None)
    try:
        await _work(rt, store, progress, outcome, _pending(spec, store.finished, chosen),
                    transport, provider)
    finally:
        store.close()
        progress.finish()
        if transport is not None:
            await transport.close()
        if own_client:
            await client.close()
    outcome.summary_path = write_summary(spec.results, {
        "complete": outcome.complete, "cases_total": total,
        "cases_remaining": total - outcome.finished, "stopped": outcome.stopped,
        "spec": str(spec.path), "last_run_id": run_id,
        "retries": client.retries_total, "mode": spec.mode,
        **({"provider": "mock", "mock_calls": client.mock.calls}
           if client.mock is not None else {}),
        **({"batches": dataclasses.asdict(transport.stats)} if transport is not None else {}),
    })
    import json

    outcome.summary = json.loads(outcome.summary_path.read_text(encoding="utf-8"))
    return outcome


async def _work(rt: Runtime, store: ResultsStore, progress: Progress, outcome: RunOutcome,
                cases: Iterator[tuple[int, Case]], transport: BatchTransport | None = None,
                provider: str = "anthropic") -> None:
    """Workers take cases until none are left. In batch mode there is one worker per case in
    flight (``batch_cases``) and each tells the transport when it has no more work, so a wave
    is sent as soon as every remaining worker waits on it."""
    spec = rt.plan.spec
    units: Iterator[tuple[int, list[Case]]]
    if spec.judge is not None:
        units = enumerate(batches((c for _, c in cases), spec.judge.batch_size), start=1)
    else:
        units = ((line, [c]) for line, c in cases)
    stop = asyncio.Event()
    capped: list[CostCapReached] = []

    async def worker() -> None:
        if transport is not None:
            transport.enter()
        try:
            await take_cases()
        except BaseException:
            if transport is not None:  # the run stops: no further wave is worth paying for
                transport.halted = True
            raise
        finally:
            if transport is not None:
                transport.leave()

    async def take_cases() -> None:
        while not stop.is_set():
            try:
                number, unit = next(units)
            except StopIteration:
                return
            try:
                if spec.judge is not None:
                    records = await judge_batch(rt, unit, number)
                else:
                    CURRENT_CASE.set((number, unit[0].id))
                    records = [await run_case(rt, unit[0])]
            except CostCapReached as exc:  # in-flight cases stop at their next call
                capped.append(exc)
                stop.set()
                return
            for record in records:
                if provider != "anthropic":  # a real run's records keep the aiwg shape
                    record["provider"] = provider
                store.append(record)
                outcome.finished += 1
                progress.case_done(record)

    count = spec.batch_cases if transport is not None else spec.concurrency
    workers = [asyncio.create_task(worker()) for _ in range(count)]
    try:
        done, _ = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
        failed = [t.exception() for t in done if t.exception() is not None]
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    if failed:
        first = failed[0]
        if not isinstance(first, ApiFailure):
            raise first  # type: ignore[misc]
        outcome.stopped, outcome.message = "api_failure", str(first)
    elif capped:
        outcome.stopped, outcome.message = "cost_cap", str(capped[0])


def load_plan(spec_path: str | Path, opts: RunOptions) -> Plan:
    from evallint.executor.spec import load_spec

    return make_plan(apply_options(load_spec(spec_path), opts))
