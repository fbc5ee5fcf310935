"""``evallint run SPEC``: lint the loop, then run it.

Exit codes:
  0  the run completed: every case has a record (and the pass rate is not below
     --fail-under / fail_under when one is set), or --dry-run
  1  lint findings of severity error block the run (printed as path:line:col: CODE message),
     or the run completed with a pass rate below --fail-under (a CI gate)
  2  the run could not start or complete: bad spec, missing file, missing API key (none is
     needed with --mock, the offline mock provider of executor/mock.py), an API
     failure that retries could not fix, or the cost cap reached with cases left (the finished
     cases are kept; run again to resume)
  130 interrupted (Ctrl-C); finished cases are kept

Findings and --dry-run prompts go to stdout; status and errors to stderr, one line, never a
traceback, never the API key.

A spec with a ``calibration`` block is also refused with exit 1, before any request, while its
judge has no passing calibration record in ``evallint.lock`` or has moved since
(``evallint calibrate``, executor/calibcli.py).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from evallint.executor.cases import validate_cases
from evallint.executor.client import api_key_from_env, redact
from evallint.executor.errors import RunError
from evallint.executor.gate import format_finding, lint_gate
from evallint.executor.plan import make_plan
from evallint.executor.runner import RunOptions, apply_options, dry_run, execute
from evallint.executor.spec import load_spec

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


def _err(message: str) -> None:
    click.echo(redact(f"evallint run: {message}"), err=True)


def run_spec(spec_path: str, opts: RunOptions, *, dry: bool = False) -> int:
    """Everything ``evallint run`` does, returning the exit code (usable without click)."""
    try:
        spec = apply_options(load_spec(spec_path), opts)
        gate = lint_gate(spec)
        for finding in [*gate.blocking, *gate.warnings]:
            click.echo(format_finding(finding))
        for problem in gate.tool_errors:
            _err(f"error: {problem}")
        if not gate.passed:
            _err(f"not started: the loop has {len(gate.blocking)} lint error(s)"
                 + (" and tool errors" if gate.tool_errors else "")
                 + "; fix them or suppress with a reason")
            return EXIT_FINDINGS if gate.blocking else EXIT_ERROR
        plan = make_plan(spec)
        validate_cases(spec.cases, need_output=spec.batch_mode)
        from evallint.executor.calibcli import calibration_refusal

        if opts.mock and not dry:
            from evallint.executor.mock import describe, load_script

            # a bad script is reported here, before any work
            script = load_script(opts.mock_script) if opts.mock_script else None
            if not opts.quiet:
                _err(f"mock provider ({describe(script)}): no network, no API key, every call "
                     f"costs $0; results in {spec.results}")
        refusal = calibration_refusal(spec, plan)
        if refusal is not None and not (dry or opts.mock):
            _err(f"not started: {refusal}")
            return EXIT_FINDINGS
        if refusal is not None and (dry or not opts.quiet):
            # A mock judge proves nothing about the real one: --mock shows the gate's verdict
            # and runs anyway, and nothing it does is recorded where the gate looks.
            _err(f"warning: a real run would not start: {refusal}"
                 + ("; --mock runs without it" if opts.mock and not dry else ""))
        if dry:
            click.echo(dry_run(plan), nl=False)
            return EXIT_OK
        if not opts.mock:
            api_key_from_env()
        outcome = asyncio.run(execute(plan, opts))
    except RunError as exc:
        _err(f"error: {exc}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        _err("interrupted; finished cases are saved, run again to resume")
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug must still end in one readable line
        _err(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_ERROR
    s = outcome.summary
    rate = s.get("pass_rate")
    line = (f"{outcome.finished}/{outcome.total} cases done, pass rate "
            f"{rate:.1%}" if rate is not None else f"{outcome.finished}/{outcome.total} cases done")
    line += f", avg score {s['average_score']:.3f}" if s.get("average_score") is not None else ""
    line += f", cost ${s.get('total_cost_usd', 0):.4f}"
    if s.get("provider") == "mock":
        line += f" ({s.get('mock_calls', 0)} mock calls; nothing left this machine)"
    line += f"; summary: {outcome.summary_path}"
    if outcome.stopped is not None:
        _err(f"stopped ({outcome.stopped}): {outcome.message}; {line}; "
             "run again to finish the remaining cases")
        return EXIT_ERROR
    if not opts.quiet:
        _err(line)
    return gate_pass_rate(rate, spec.fail_under)


def gate_pass_rate(rate: float | None, fail_under: float | None) -> int:
    """The CI gate: exit 1, with a line naming both numbers, when the pass rate is too low."""
    if fail_under is None:
        return EXIT_OK
    if rate is None or rate < fail_under:
        shown = f"{rate:.1%}" if rate is not None else "n/a (no cases)"
        _err(f"failed: pass rate {shown} is below --fail-under {fail_under:.1%}")
        return EXIT_FINDINGS
    _err(f"pass rate {rate:.1%} meets --fail-under {fail_under:.1%}")
    return EXIT_OK


@click.command("run")
@click.argument("spec", type=click.Path(dir_okay=False, path_type=str))
@click.option("--dry-run", is_flag=True,
              help="Lint, render the first case's prompts, send nothing.")
@click.option("--concurrency", type=click.IntRange(1, 512), default=None,
              help="Cases in flight at once (overrides the spec).")
@click.option("--resume/--no-resume", default=True, show_default=True,
              help="Skip cases already in the results file; --no-resume sets the old file aside.")
@click.option("--max-cost", "max_cost", type=click.FloatRange(min=0, min_open=True),
              default=None, metavar="USD", help="Stop starting requests once this is spent.")
@click.option("--results", "results", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Results file (overrides the spec).")
@click.option("--quiet", is_flag=True, help="No progress output; errors only.")
@click.option("--fail-under", "fail_under", type=click.FloatRange(0, 1), default=None,
              metavar="RATE", help="Exit 1 when the final pass rate (0-1) is below RATE.")
@click.option("--batch", is_flag=True,
              help="Send each wave of calls through the Message Batches API (mode: batch).")
@click.option("--batch-poll", "batch_poll", type=click.FloatRange(min=0), default=1.0,
              show_default=True, metavar="SECONDS",
              help="First wait between polls of a message batch (it grows 1.5x to 60 s).")
@click.option("--mock", is_flag=True,
              help="Offline: the mock provider answers in-process (no key, no network, $0); "
                   "results go to a mock/ folder beside the spec's unless --results is given.")
@click.option("--mock-script", "mock_script",
              type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              metavar="FILE", help="Scripted mock replies (YAML or JSONL); implies --mock.")
def run(spec: str, dry_run: bool, concurrency: int | None, resume: bool,
        max_cost: float | None, results: Path | None, quiet: bool,
        fail_under: float | None, batch: bool, batch_poll: float, mock: bool,
        mock_script: Path | None) -> None:
    """Lint an eval loop spec and, if it is clean, run it (generate → evaluate → refine)."""
    opts = RunOptions(resume=resume, concurrency=concurrency, max_cost_usd=max_cost,
                      results=results, quiet=quiet, fail_under=fail_under, batch=batch,
                      batch_poll_s=batch_poll, mock=mock or mock_script is not None,
                      mock_script=mock_script)
    code = run_spec(spec, opts, dry=dry_run)
    sys.stdout.flush()
    raise click.exceptions.Exit(code)
