"""``run`` as a CI gate (--fail-under / fail_under:) and its progress display."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pytest

from evallint.executor.progress import Progress, format_eta
from tests.executor.conftest import generator_answers, invoke, is_judge, write_loop
from tests.executor.messages_server import MessagesServer, message, verdict

FIXTURE_LOOP = Path(__file__).resolve().parents[2] / "fixtures" / "loop"


def is_haiku(body: dict[str, Any]) -> bool:
    return body.get("model") == "claude-haiku-4-5"  # the fixture loop's evaluator


def test_fixture_loop_fails_the_gate_in_both_modes(tmp_path: Path,
                                                   api_env: MessagesServer) -> None:
    """fixtures/loop against the test server, with a judge that fails everything."""
    shutil.copytree(FIXTURE_LOOP, tmp_path / "loop")
    spec = tmp_path / "loop" / "evallint.loop.yaml"
    # the fixture's judge is gated on a calibration record (evallint calibrate); this test is
    # about the pass-rate gate, so the spec keeps calibration but does not require it
    spec.write_text(spec.read_text().replace("calibration:\n", "calibration:\n  require: false\n"))
    api_env.route(is_haiku, verdict(0.4, feedback="misses the key step",
                                    failure_category="incomplete"))
    api_env.route(lambda body: True, message("<answer>An answer long enough to pass the "
                                             "length check.</answer>"))
    direct = invoke(spec, "--fail-under", "0.9")
    assert direct.exit_code == 1, direct.stderr
    assert "pass rate 0.0% is below --fail-under 90.0%" in direct.stderr
    batch = invoke(spec, "--fail-under", "0.9", "--batch", "--batch-poll", "0.01",
                   "--no-resume")
    assert batch.exit_code == 1, batch.stderr
    assert api_env.batch_creates


def test_fail_under_exits_1_on_a_failing_loop(tmp_path: Path, api_env: MessagesServer) -> None:
    generator_answers(api_env, "weak answer")
    api_env.route(is_judge, verdict(0.3, feedback="wrong"))
    spec = write_loop(tmp_path, cases=3, max_attempts=1)
    result = invoke(spec, "--fail-under", "0.9")
    assert result.exit_code == 1
    assert "pass rate 0.0% is below --fail-under 90.0%" in result.stderr


def test_fail_under_exits_0_when_the_loop_passes(tmp_path: Path,
                                                 api_env: MessagesServer) -> None:
    generator_answers(api_env, "good answer")
    api_env.route(is_judge, verdict(0.95, feedback="fine"))
    spec = write_loop(tmp_path, cases=3, max_attempts=1)
    result = invoke(spec, "--fail-under", "0.9")
    assert result.exit_code == 0, result.stderr
    assert "pass rate 100.0% meets --fail-under 90.0%" in result.stderr


def test_fail_under_from_the_spec_and_the_flag_overrides_it(
        tmp_path: Path, api_env: MessagesServer) -> None:
    generator_answers(api_env, "so-so answer")
    # Two of four cases pass: a 50% rate.
    api_env.route(is_judge, [verdict(0.95), verdict(0.2), verdict(0.95), verdict(0.2)])
    spec = write_loop(tmp_path, cases=4, max_attempts=1, concurrency=1, fail_under=0.6)
    assert invoke(spec).exit_code == 1
    # Resumed: nothing left to run, the gate is judged on the whole results file again.
    assert invoke(spec, "--fail-under", "0.5").exit_code == 0


def test_no_fail_under_keeps_exit_0_at_any_pass_rate(tmp_path: Path,
                                                     api_env: MessagesServer) -> None:
    generator_answers(api_env, "weak answer")
    api_env.route(is_judge, verdict(0.1))
    spec = write_loop(tmp_path, cases=2, max_attempts=1)
    assert invoke(spec).exit_code == 0


@pytest.mark.parametrize("bad", ["1.5", "-0.1"])
def test_fail_under_out_of_range_is_a_usage_error(tmp_path: Path, bad: str) -> None:
    spec = write_loop(tmp_path, cases=1)
    assert invoke(spec, "--fail-under", bad).exit_code == 2


def test_fail_under_in_the_spec_is_validated(tmp_path: Path) -> None:
    spec = write_loop(tmp_path, cases=1, fail_under=2)
    result = invoke(spec)
    assert result.exit_code == 2
    assert "fail_under" in result.stderr


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_terminal_bar_shows_done_rate_spend_and_eta() -> None:
    out, clock = Tty(), Clock()
    progress = Progress(4, 0, stream=out, clock=clock)
    clock.t += 10
    progress.case_done({"case_id": "a", "pass": True, "total_cost_usd": 0.01})
    clock.t += 10
    progress.case_done({"case_id": "b", "pass": False, "total_cost_usd": 0.02})
    last = out.getvalue().split("\r")[-1]
    assert "2/4" in last and "pass 50.0%" in last and "$0.0300" in last
    assert "eta 20s" in last  # 10 s a case, two left
    assert "\n" not in out.getvalue()  # redrawn in place
    progress.finish()
    assert out.getvalue().endswith("\n")


def test_plain_lines_off_a_terminal() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress(3, 1, stream=out, clock=clock)  # one case resumed
    clock.t += 30
    progress.case_done({"case_id": "c2", "pass": True, "score": 0.9, "status": "accepted",
                        "attempts": 1, "total_cost_usd": 0.5})
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and "\r" not in out.getvalue() and "\033" not in out.getvalue()
    assert lines[0].startswith("evallint run: [2/3  pass 100.0%  $0.5000  eta 30s] c2:")
    assert "accepted score 0.900 attempts 1" in lines[0]


def test_quiet_prints_nothing_and_eta_formats() -> None:
    out = io.StringIO()
    progress = Progress(2, 0, stream=out, quiet=True)
    progress.case_done({"case_id": "a", "pass": True})
    progress.note("hello")
    assert out.getvalue() == ""
    assert format_eta(None) == "--" and format_eta(42) == "42s"
    assert format_eta(185) == "3m05s" and format_eta(3720) == "1h02m"
