"""``evallint calibrate SPEC`` and the calibration gate that ``evallint run`` applies.

Exit codes:
  0  the judge meets every threshold (or --dry-run finished)
  1  a threshold is missed, or lint errors block the loop (as for ``run``)
  2  tool error: bad spec or calibration file, no API key (none is needed with --mock, the
     offline mock provider, whose results are never recorded), an API failure retries could
     not fix, or the cost cap reached before every calibration request was answered

The report goes to stdout (text table or ``--output-format json``); status and errors go to
stderr on one line each, never the API key.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import click

from evallint.calibset import CalibrationSet, CalibrationSetError, load_calibration_set
from evallint.executor.calibrate import (
    CalibrationResult,
    compute,
    fingerprint,
    gate_problem,
    judge,
    plan_asks,
    run_asks,
    side_by_side_message,
)
from evallint.executor.calibreport import html_report, json_report, report_dict, text_report
from evallint.executor.client import MessagesClient, api_key_from_env, redact
from evallint.executor.errors import RunError, SpecError
from evallint.executor.gate import format_finding, lint_gate
from evallint.executor.plan import Plan, make_plan
from evallint.executor.runner import RunOptions, apply_options
from evallint.executor.spec import Calibration, LoopSpec, load_spec

EXIT_OK, EXIT_MISSED, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


def _err(message: str) -> None:
    click.echo(redact(f"evallint calibrate: {message}"), err=True)


def load_cases(cal: Calibration) -> CalibrationSet:
    try:
        return load_calibration_set(cal.cases)
    except CalibrationSetError as exc:
        raise SpecError(exc.message, str(cal.cases), exc.line) from None


def lock_target(spec: LoopSpec) -> tuple[Path, Path, str]:
    """The lock file, the config root, and this spec's key in the lock (root-relative)."""
    from evallint.config import ConfigError
    from evallint.lockfile import lock_path
    from evallint.policy import load_config_with_policies

    try:
        config = load_config_with_policies(spec.path.parent.resolve())
    except ConfigError as exc:
        raise RunError(f"configuration: {exc}") from None
    key = Path(os.path.relpath(spec.path.resolve(), config.root)).as_posix()
    return lock_path(config), config.root, key


def calibration_refusal(spec: LoopSpec, plan: Plan) -> str | None:
    """Why ``run`` must not start (no, failed or stale calibration), or None. Only a spec with
    a ``calibration`` block that has ``require`` on is gated."""
    cal = spec.calibration
    if cal is None or not cal.require:
        return None
    from evallint.lockfile import calibration_records

    target, root, key = lock_target(spec)
    if not cal.cases.is_file():
        return f"the calibration set {cal.cases} does not exist"
    record = calibration_records(target).get(key)
    return gate_problem(record, fingerprint(plan, cal, root), cal)


def dry_run_text(plan: Plan, cases: CalibrationSet, asks: list[Any]) -> str:
    """What calibrate would send: counts by kind and one rendered request of each kind."""
    kinds: dict[str, int] = {}
    for a in asks:
        kinds[a.kind] = kinds.get(a.kind, 0) + 1
    good, bad = cases.counts(plan.spec.pass_threshold)
    parts = [f"# calibration: {len(asks)} requests to {plan.evaluator.model} "
             f"({', '.join(f'{k} {v}' for k, v in kinds.items())}); {good} good, {bad} bad, "
             f"{len(cases.pairs)} pair(s)"]
    shown: set[str] = set()
    for a in asks:
        if a.kind in shown:
            continue
        shown.add(a.kind)
        if a.kind == "side":
            system, user = side_by_side_message(plan, a)
        else:
            rendered = plan.render_evaluator(a.input, a.output)
            system, user = rendered.system, rendered.user
        if len(shown) == 1:  # every request has the evaluator's own system prompt
            parts += [f"## evaluator ({plan.evaluator.model}) system", system or "(none)"]
        parts += [f"## {a.kind} request ({a.item}) user", user]
    return "\n\n".join(parts) + "\n"


class _Progress:
    """Requests answered, on stderr: a redrawn line on a terminal, a line per tenth elsewhere."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.last_tenth = 0

    def __call__(self, done: int, total: int) -> None:
        if self.quiet:
            return
        if self.tty:
            sys.stderr.write(f"\r{done}/{total} calibration requests answered")
            if done == total:
                sys.stderr.write("\n")
            sys.stderr.flush()
            return
        tenth = done * 10 // total
        if tenth > self.last_tenth:
            self.last_tenth = tenth
            _err(f"{done}/{total} requests answered")


async def _calibrate(plan: Plan, asks: list[Any], base_url: str | None,
                     quiet: bool = True, mock: Any = None) -> tuple[list[Any], float, int]:
    spec = plan.spec
    client = MessagesClient.open(
        prices=spec.prices, max_cost_usd=spec.max_cost_usd, max_retries=spec.max_retries,
        timeout_s=spec.timeout_s, base_url=base_url, mock=mock)
    try:
        answers, cost = await run_asks(plan, client, asks, spec.concurrency,
                                       _Progress(quiet))
    finally:
        await client.close()
    return answers, cost, len(asks)


def record_of(result: CalibrationResult, now: dict[str, Any]) -> dict[str, Any]:
    """The lock record: the fingerprint, the verdict and the headline metrics."""
    metrics = {k: v for k, v in result.metrics.items() if not isinstance(v, list)}
    return {**now, "passed": result.passed, "date": result.date, "failures": result.failures,
            "metrics": metrics}


def calibrate_spec(spec_path: str, opts: RunOptions, *, dry: bool = False,
                   output_format: str = "text", html_path: Path | None = None,
                   record: bool = True) -> int:
    """Everything ``evallint calibrate`` does, returning the exit code (usable without click)."""
    try:
        spec = apply_options(load_spec(spec_path), opts)
        cal = spec.calibration
        if cal is None:
            raise RunError(f"{spec_path}: the spec has no 'calibration' block (cases, repeats, "
                           "thresholds); see docs/run.md")
        gate = lint_gate(spec)
        for finding in [*gate.blocking, *gate.warnings]:
            click.echo(format_finding(finding), err=output_format == "json")
        for problem in gate.tool_errors:
            _err(f"error: {problem}")
        if not gate.passed:
            _err(f"not started: the loop has {len(gate.blocking)} lint error(s)"
                 + (" and tool errors" if gate.tool_errors else ""))
            return EXIT_MISSED if gate.blocking else EXIT_ERROR
        plan = make_plan(spec)
        cases = load_cases(cal)
        asks = plan_asks(cases, cal, spec.pass_threshold)
        if dry:
            click.echo(dry_run_text(plan, cases, asks), nl=False)
            return EXIT_OK
        target, root, key = lock_target(spec)
        now = fingerprint(plan, cal, root)
        mock = None
        if opts.mock:
            from evallint.executor.mock import MockProvider, describe

            mock = MockProvider.for_calibration(plan, cases, opts.mock_script)
            if not opts.quiet:
                _err(f"mock provider ({describe(mock.script)}): no network, no API key, every "
                     "call costs $0; a mock judge proves nothing, so nothing is recorded")
        else:
            api_key_from_env()
        if not opts.quiet:
            _err(f"sending {len(asks)} requests to {plan.evaluator.model} "
                 f"(concurrency {spec.concurrency})")
        answers, cost, sent = asyncio.run(_calibrate(plan, asks, opts.base_url, opts.quiet,
                                                     mock))
    except RunError as exc:
        _err(f"error: {exc}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        _err("interrupted; nothing was recorded")
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug must still end in one readable line
        _err(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_ERROR
    metrics, rows = compute(cases, answers, cal, spec.pass_threshold)
    failures = judge(metrics, cal)
    result = CalibrationResult(not failures, metrics, failures, rows, sent, cost)
    head = {"spec": str(spec.path), "judge_model": plan.evaluator.model,
            "pass_threshold": spec.pass_threshold, "fingerprint": now,
            **({"provider": "mock"} if opts.mock else {})}
    data = report_dict(result, head)
    click.echo(json_report(data) if output_format == "json" else text_report(data, cal),
               nl=False)
    try:
        if html_path is not None:
            html_path.write_text(html_report(data, cal), encoding="utf-8")
        if record and not opts.mock:  # a mock judge's result must never open the gate
            from evallint.lockfile import write_calibration

            write_calibration(target, key, record_of(result, now))
            if not opts.quiet:
                shown = os.path.relpath(target)
                _err(f"recorded the {'passing' if result.passed else 'failed'} calibration in "
                     f"{target if shown.startswith('..') else shown}")
    except OSError as exc:
        _err(f"error: cannot write: {exc}")
        return EXIT_ERROR
    return EXIT_OK if result.passed else EXIT_MISSED


@click.command("calibrate")
@click.argument("spec", type=click.Path(dir_okay=False, path_type=str))
@click.option("--dry-run", is_flag=True,
              help="Lint, render one request of each kind and count them; send nothing.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="The report on stdout.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Also write a self-contained HTML page here.")
@click.option("--concurrency", type=click.IntRange(1, 512), default=None,
              help="Requests in flight at once (overrides the spec).")
@click.option("--max-cost", "max_cost", type=click.FloatRange(min=0, min_open=True),
              default=None, metavar="USD", help="Stop starting requests once this is spent.")
@click.option("--no-record", is_flag=True,
              help="Do not write the result to evallint.lock (run will not see it).")
@click.option("--quiet", is_flag=True, help="No status lines; errors only.")
@click.option("--mock", is_flag=True,
              help="Offline: the mock provider's judge answers in-process (no key, no network, "
                   "$0); nothing is recorded.")
@click.option("--mock-script", "mock_script",
              type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              metavar="FILE", help="Scripted mock replies (YAML or JSONL); implies --mock.")
def calibrate(spec: str, dry_run: bool, output_format: str, html_path: Path | None,
              concurrency: int | None, max_cost: float | None, no_record: bool,
              quiet: bool, mock: bool, mock_script: Path | None) -> None:
    """Measure the loop's evaluator against human-judged answers and record the verdict."""
    opts = RunOptions(concurrency=concurrency, max_cost_usd=max_cost, quiet=quiet,
                      mock=mock or mock_script is not None, mock_script=mock_script)
    code = calibrate_spec(spec, opts, dry=dry_run, output_format=output_format,
                          html_path=html_path, record=not no_record)
    sys.stdout.flush()
    raise click.exceptions.Exit(code)
