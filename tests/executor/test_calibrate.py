"""``evallint calibrate`` against scripted judges, the statistics, and the gate ``run`` applies.

Each scripted judge reads what the evaluator is shown (the ``<output>`` of a pointwise request,
or items A and B of a side-by-side request) and grades it the way a judge with one flaw would.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st_h

from evallint.calibset import CalibrationSetError, parse_calibration_set
from evallint.executor import calibstats as st
from evallint.executor.calibcli import calibrate
from evallint.executor.calibrate import pad
from tests.executor.conftest import invoke, is_generator, is_judge, write_loop
from tests.executor.messages_server import MessagesServer, Reply, message, message_texts

GOOD_MARK, BAD_MARK = "solid", "shaky"
CAL_BLOCK = {"cases": "calibration.jsonl", "repeats": 3, "min_auc": 0.9, "min_kappa": 0.6,
             "max_flip_rate": 0.1, "min_preference_accuracy": 0.8, "max_position_bias": 0.1,
             "max_length_gain": 0.05}


def calibration_cases(good: int = 10, bad: int = 10, pairs: int = 2) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(good):
        out.append({"id": f"g{i}", "input": f"question {i}",
                    "output": f"A {GOOD_MARK} answer to question {i}.", "label": "good"})
    for i in range(bad):
        out.append({"id": f"b{i}", "input": f"question {i}",
                    "output": f"A {BAD_MARK} answer to question {i}.", "label": "bad"})
    for i in range(pairs):
        out.append({"id": f"p{i}", "input": f"pair question {i}",
                    "preferred": f"The {GOOD_MARK} reply {i}.",
                    "rejected": f"The {BAD_MARK} reply {i}."})
    return out


def write_calibrated_loop(root: Path, cases: list[dict[str, Any]] | None = None,
                          **spec: Any) -> Path:
    (root / "calibration.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in cases or calibration_cases()), encoding="utf-8")
    spec.setdefault("calibration", dict(CAL_BLOCK))
    spec.setdefault("concurrency", 4)
    return write_loop(root, cases=2, **spec)


# ---------------------------------------------------------------------------- judges

_OUTPUT = re.compile(r"<output>\s*(.*?)\s*</output>", re.S)


def shown(body: dict[str, Any]) -> tuple[str, list[str]]:
    """('point', [output]) or ('side', [first, second]) for a judge request."""
    user = message_texts(body)[0]
    if user.startswith("Items:\n"):
        items, _ = json.JSONDecoder().raw_decode(user[len("Items:\n"):])
        return "side", [_OUTPUT.findall(item["content"])[0] for item in items]
    return "point", _OUTPUT.findall(user)


def quality(text: str) -> float:
    return 0.9 if GOOD_MARK in text else 0.2


def grade(score: float) -> dict[str, Any]:
    score = round(min(max(score, 0.0), 1.0), 4)
    return {"score": score, "pass": score >= 0.5, "feedback": "graded",
            "rubric_scores": {"accuracy": score, "clarity": score},
            "failure_category": None, "suggested_fix": None}


def scripted(point: Callable[[str, int], float],
             side: Callable[[str, str, int], tuple[float, float]] | None = None) -> Any:
    """A judge from two functions of the text shown and how often it was shown before."""
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def respond(body: dict[str, Any], n: int) -> Reply:
        kind, texts = shown(body)
        with lock:
            key = "\x00".join(texts)
            seen[key] = seen.get(key, 0) + 1
            k = seen[key]
        if kind == "point":
            return message(json.dumps(grade(point(texts[0], k))))
        first, second = (side or (lambda a, b, k: (quality(a), quality(b))))(*texts, k)
        return message(json.dumps([{"item_id": "A", **grade(first)},
                                   {"item_id": "B", **grade(second)}]))
    return respond


def _noise(text: str, k: int) -> float:
    """A pseudo-random score that depends only on the text and the repeat (order-free)."""
    return int(hashlib.sha256(f"{text}|{k}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


JUDGES: dict[str, Any] = {
    "good": lambda: scripted(lambda t, k: quality(t)),
    "random": lambda: scripted(lambda t, k: _noise(t, k),
                               lambda a, b, k: (_noise(a, k), _noise(b, k))),
    "position": lambda: scripted(lambda t, k: quality(t), lambda a, b, k: (0.9, 0.3)),
    "length": lambda: scripted(lambda t, k: quality(t) + (0.09 if len(t) > 300 else 0.0)),
    "unstable": lambda: scripted(lambda t, k: quality(t) - (0.1 if k % 2 == 0 and
                                                             GOOD_MARK in t else 0.0)),
}


def run_calibrate(spec: Path, *args: str) -> Result:
    return CliRunner().invoke(calibrate, [str(spec), *args], catch_exceptions=False)


def calibrate_with(judge_name: str, tmp_path: Path, server: MessagesServer) -> dict[str, Any]:
    server.route(is_judge, JUDGES[judge_name]())
    spec = write_calibrated_loop(tmp_path)
    result = run_calibrate(spec, "--output-format", "json")
    data = json.loads(result.stdout)
    data["exit_code"] = result.exit_code
    return data


# ---------------------------------------------------------------------------- scripted judges


def test_good_judge_passes(tmp_path: Path, api_env: MessagesServer) -> None:
    data = calibrate_with("good", tmp_path, api_env)
    m = data["metrics"]
    assert data["exit_code"] == 0, data["failures"]
    assert data["passed"] is True and data["failures"] == []
    assert (m["auc"], m["kappa"], m["accuracy"], m["balanced_accuracy"]) == (1.0, 1.0, 1.0, 1.0)
    assert m["preference_accuracy"] == 1.0 and m["position_bias"] == 0.0
    assert m["length_gain"] == 0.0 and m["flip_rate"] == 0.0
    # 20 labelled + 10 padded + 2 pairs x (2 pointwise + 1 padded + 2 side by side), x3 repeats
    assert data["requests"] == len(api_env.requests) == 3 * (20 + 10 + 2 * 5)
    assert m["parse_errors"] == 0


def test_random_judge_fails_on_auc_and_kappa(tmp_path: Path, api_env: MessagesServer) -> None:
    data = calibrate_with("random", tmp_path, api_env)
    assert data["exit_code"] == 1
    failed = {f.split()[0] for f in data["failures"]}
    assert {"auc", "kappa"} <= failed, data["failures"]
    assert data["metrics"]["auc"] < 0.75


def test_position_biased_judge_fails_on_position_bias(tmp_path: Path,
                                                      api_env: MessagesServer) -> None:
    data = calibrate_with("position", tmp_path, api_env)
    assert data["exit_code"] == 1
    assert [f.split()[0] for f in data["failures"]] == ["position_bias"]
    m = data["metrics"]
    assert m["position_bias"] == 1.0 and m["first_position_wins"] == 1.0
    assert m["side_by_side_accuracy"] == 0.5  # right only when the preferred answer came first
    assert m["auc"] == 1.0  # pointwise it is a fine judge


def test_length_biased_judge_fails_on_length_gain(tmp_path: Path,
                                                  api_env: MessagesServer) -> None:
    data = calibrate_with("length", tmp_path, api_env)
    assert data["exit_code"] == 1
    assert [f.split()[0] for f in data["failures"]] == ["length_gain"]
    assert data["metrics"]["length_gain"] == pytest.approx(0.09)
    assert data["metrics"]["length_wins"] == 1.0


def test_unstable_judge_fails_on_flip_rate(tmp_path: Path, api_env: MessagesServer) -> None:
    data = calibrate_with("unstable", tmp_path, api_env)
    assert data["exit_code"] == 1
    assert [f.split()[0] for f in data["failures"]] == ["flip_rate"]
    m = data["metrics"]
    # every good answer (10 labelled, 2 preferred) fails on its second asking: 12 of 24 items
    assert m["flip_rate"] == 0.5
    assert m["score_spread"] == pytest.approx(0.05)  # 0.1 on half of the items
    assert m["auc"] == 1.0 and m["kappa"] >= 0.6


def test_text_report_and_html_page(tmp_path: Path, api_env: MessagesServer) -> None:
    api_env.route(is_judge, JUDGES["position"]())
    spec = write_calibrated_loop(tmp_path)
    page = tmp_path / "calibration.html"
    result = run_calibrate(spec, "--html", str(page), "--no-record")
    assert result.exit_code == 1
    out = result.stdout
    assert re.search(r"position bias\s+1\.000\s+<= 0\.1\s+MISSED", out), out
    assert re.search(r"ROC AUC \(good above bad\)\s+1\.000\s+>= 0\.9\s+ok", out), out
    assert "FAILED: position_bias 1.000 > max_position_bias 0.1" in out
    assert "disagreements" not in out  # pointwise, it agrees with the person everywhere
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "<script" not in html and "g0" in html and "p1" in html
    assert not (tmp_path / "evallint.lock").exists()  # --no-record


def test_dry_run_sends_nothing(tmp_path: Path, server: MessagesServer,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    spec = write_calibrated_loop(tmp_path)
    result = run_calibrate(spec, "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert server.requests == []
    assert result.stdout.startswith("# calibration: 120 requests to claude-haiku-4-5")
    assert "## side request (p0) user" in result.stdout and '"item_id": "B"' in result.stdout


def test_dry_run_of_the_shipped_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "loop" / "evallint.loop.yaml"
    result = run_calibrate(fixture, "--dry-run")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "12 good, 12 bad, 4 pair(s)" in result.stdout


def test_parse_errors_are_counted_never_scored(tmp_path: Path, api_env: MessagesServer) -> None:
    good = JUDGES["good"]()

    def sometimes_broken(body: dict[str, Any], n: int) -> Reply:
        kind, texts = shown(body)
        if kind == "point" and texts[0] == f"A {BAD_MARK} answer to question 0.":
            return message("I think it is fine.")
        return good(body, n)  # type: ignore[no-any-return]

    api_env.route(is_judge, sometimes_broken)
    data = json.loads(run_calibrate(write_calibrated_loop(tmp_path), "--output-format",
                                    "json").stdout)
    row = next(r for r in data["cases"] if r["id"] == "b0")
    assert row["scores"] == [None, None, None] and len(row["errors"]) == 3
    assert data["metrics"]["parse_errors"] == 3
    assert data["metrics"]["auc"] == 1.0  # no score was invented for the broken replies


def test_thin_calibration_set_is_refused_by_the_lint(tmp_path: Path,
                                                     api_env: MessagesServer) -> None:
    spec = write_calibrated_loop(tmp_path, calibration_cases(good=10, bad=3))
    result = run_calibrate(spec)
    assert result.exit_code == 1 and api_env.requests == []
    assert " EL612 " in result.stdout and "3 bad" in result.stdout


def test_spec_without_calibration_block(tmp_path: Path) -> None:
    result = run_calibrate(write_loop(tmp_path))
    assert result.exit_code == 2 and "no 'calibration' block" in result.stderr


@pytest.mark.parametrize(("block", "message"), [
    ({"repeats": 3}, "calibration needs a 'cases' file"),
    ({"cases": "calibration.jsonl", "min_auc": 1.5}, "calibration.min_auc must be between"),
    ({"cases": "calibration.jsonl", "min_auk": 0.9}, "unknown key 'calibration.min_auk'"),
    ({"cases": "calibration.jsonl", "repeats": 1}, "stability needs repeats >= 2"),
    ({"cases": "calibration.jsonl", "length_probe": "yes"}, "must be true or false"),
])
def test_bad_calibration_blocks(tmp_path: Path, block: dict[str, Any], message: str) -> None:
    spec = write_calibrated_loop(tmp_path, calibration=block)
    result = run_calibrate(spec)
    assert result.exit_code == 2 and message in result.stderr, result.stderr


# ---------------------------------------------------------------------------- the gate


def lock_record(root: Path) -> dict[str, Any]:
    data = yaml.safe_load((root / "evallint.lock").read_text(encoding="utf-8"))
    return data["calibrations"]["evallint.loop.yaml"]  # type: ignore[no-any-return]


def test_run_refuses_an_uncalibrated_judge(tmp_path: Path, api_env: MessagesServer) -> None:
    spec = write_calibrated_loop(tmp_path)
    result = invoke(spec)
    assert result.exit_code == 1
    assert "no calibration record" in result.stderr and "evallint calibrate" in result.stderr
    assert api_env.requests == []


def test_run_refuses_after_a_failed_calibration(tmp_path: Path,
                                                api_env: MessagesServer) -> None:
    api_env.route(is_judge, JUDGES["unstable"]())
    spec = write_calibrated_loop(tmp_path)
    calibrated = run_calibrate(spec)
    assert calibrated.exit_code == 1
    assert "disagreements with the person (10):" in calibrated.stdout
    assert "  g0 (line 1, good): scores 0.900, 0.800, 0.900" in calibrated.stdout
    assert lock_record(tmp_path)["passed"] is False
    sent = len(api_env.requests)
    result = invoke(spec)
    assert result.exit_code == 1 and len(api_env.requests) == sent
    assert "the last calibration failed (flip_rate 0.500 > max_flip_rate 0.1)" in result.stderr


@pytest.mark.parametrize(("edit", "moved"), [
    ("rubric", "the rubric weights changed"),
    ("prompt", "the evaluator prompt (prompts/evaluator.prompt.md) changed"),
    ("model", "the judge model changed from claude-haiku-4-5 to claude-haiku-4-6"),
    ("cases", "the calibration set (calibration.jsonl) changed"),
    ("threshold", "the pass threshold changed from 0.85 to 0.8"),
])
def test_calibrate_then_edit_and_run_refuses(tmp_path: Path, api_env: MessagesServer,
                                             edit: str, moved: str) -> None:
    api_env.route(is_judge, JUDGES["good"]())
    api_env.route(is_generator, message("<answer>A solid answer.</answer>"))
    rubric = {"accuracy": 0.5, "clarity": 0.5}
    spec = write_calibrated_loop(tmp_path, rubric=rubric)
    assert run_calibrate(spec).exit_code == 0
    record = lock_record(tmp_path)
    assert record["passed"] is True and record["judge_model"] == "claude-haiku-4-5"
    assert record["calibration_set"]["path"] == "calibration.jsonl"
    assert record["metrics"]["auc"] == 1.0 and "good_scores" not in record["metrics"]

    # The calibrated judge runs.
    first = invoke(spec)
    assert first.exit_code == 0, first.stderr

    text = spec.read_text(encoding="utf-8")
    if edit == "rubric":
        spec.write_text(text.replace("clarity: 0.5", "clarity: 0.2"), encoding="utf-8")
    elif edit == "prompt":
        prompt = tmp_path / "prompts" / "evaluator.prompt.md"
        prompt.write_text(prompt.read_text().replace("each 0 to 1", "each from 0 to 1"))
    elif edit == "model":
        prompt = tmp_path / "prompts" / "evaluator.prompt.md"
        prompt.write_text(prompt.read_text().replace("claude-haiku-4-5", "claude-haiku-4-6"))
        spec.write_text(text.replace("model: claude-haiku-4-5", "model: claude-haiku-4-6"))
    elif edit == "cases":
        with (tmp_path / "calibration.jsonl").open("a") as fh:
            fh.write(json.dumps({"id": "extra", "input": "q", "output": "x",
                                 "label": "bad"}) + "\n")
    else:
        spec.write_text(text.replace("pass_threshold: 0.85", "pass_threshold: 0.8"))
    sent = len(api_env.requests)
    result = invoke(spec, "--no-resume")
    assert result.exit_code == 1, result.stderr
    assert "not started: the judge moved since it was calibrated" in result.stderr
    assert moved in result.stderr
    assert len(api_env.requests) == sent  # no request reached the server


def test_lock_keeps_calibration_records(tmp_path: Path, api_env: MessagesServer,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from evallint.lockfile import lock

    api_env.route(is_judge, JUDGES["good"]())
    spec = write_calibrated_loop(tmp_path)
    assert run_calibrate(spec).exit_code == 0
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(lock, ["."]).exit_code == 0
    data = yaml.safe_load((tmp_path / "evallint.lock").read_text(encoding="utf-8"))
    assert "prompts/evaluator.prompt.md" in data["files"]
    assert data["calibrations"]["evallint.loop.yaml"]["passed"] is True
    assert CliRunner().invoke(lock, [".", "--check"]).exit_code == 0


def test_tightened_threshold_is_refused(tmp_path: Path, api_env: MessagesServer) -> None:
    api_env.route(is_judge, JUDGES["length"]())
    spec = write_calibrated_loop(tmp_path, calibration={**CAL_BLOCK, "max_length_gain": 0.2})
    assert run_calibrate(spec).exit_code == 0
    block = {**CAL_BLOCK, "max_length_gain": 0.05}
    write_calibrated_loop(tmp_path, calibration=block)
    result = invoke(spec)
    assert result.exit_code == 1
    assert "misses the spec's current thresholds (length_gain 0.090 > max_length_gain 0.05)" \
        in result.stderr


def test_require_false_does_not_gate(tmp_path: Path, api_env: MessagesServer) -> None:
    api_env.route(is_judge, JUDGES["good"]())
    api_env.route(is_generator, message("<answer>A solid answer.</answer>"))
    spec = write_calibrated_loop(tmp_path, calibration={**CAL_BLOCK, "require": False})
    assert invoke(spec).exit_code == 0


# ---------------------------------------------------------------------------- units


def test_kappa_and_auc_hand_worked() -> None:
    truth = [True, True, True, False, False, False]
    said = [True, True, False, False, False, True]
    assert st.accuracy(truth, said) == pytest.approx(4 / 6)
    # p_o = 4/6, p_e = 0.5*0.5 + 0.5*0.5 = 0.5 -> kappa = (0.667 - 0.5) / 0.5
    assert st.cohen_kappa(truth, said) == pytest.approx(1 / 3)
    assert st.cohen_kappa([True, True], [True, True]) is None
    assert st.cohen_kappa(truth, [not t for t in truth]) == pytest.approx(-1.0)
    assert st.balanced_accuracy([True, True, True, False], [True, True, True, True]) == 0.5
    # 2 good x 2 bad = 4 comparisons: 0.9>0.5, 0.9>0.3, 0.5=0.5 (half), 0.5>0.3 -> 3.5 / 4
    assert st.roc_auc([0.9, 0.5], [0.5, 0.3]) == pytest.approx(0.875)
    assert st.roc_auc([0.1], [0.9]) == 0.0 and st.roc_auc([0.5], [0.5]) == 0.5
    assert st.roc_auc([0.7], []) is None


def test_pad_adds_neutral_filler_only_after_the_answer() -> None:
    padded = pad("Short answer.")
    assert padded.startswith("Short answer.\n\n") and len(padded) >= 400
    long = "x" * 1000
    assert len(pad(long)) >= 2000


def test_calibration_set_yaml_and_errors() -> None:
    found = parse_calibration_set(
        "cases:\n  - {input: q, output: a, label: 0.7}\n  - {input: q, preferred: a, "
        "rejected: b}\n", "cal.yaml")
    assert found.counts(0.85) == (0, 1) and found.counts(0.5) == (1, 0)
    assert len(found.pairs) == 1
    with pytest.raises(CalibrationSetError, match="label 'great'") as exc:
        parse_calibration_set('{"input": "q", "output": "a", "label": "bad"}\n\n'
                              '{"input": "q", "output": "a", "label": "great"}\n', "cal.jsonl")
    assert exc.value.line == 3
    with pytest.raises(CalibrationSetError, match="mixes a pair"):
        parse_calibration_set('{"input": "q", "output": "a", "label": "good", '
                              '"preferred": "b", "rejected": "c"}\n', "cal.jsonl")


def test_cost_cap_stops_and_records_nothing(tmp_path: Path, api_env: MessagesServer) -> None:
    api_env.route(is_judge, JUDGES["good"]())
    spec = write_calibrated_loop(tmp_path, concurrency=1)
    result = run_calibrate(spec, "--max-cost", "0.002")
    assert result.exit_code == 2
    assert "cost cap of $0.00 reached" in result.stderr and "incomplete" in result.stderr
    assert 0 < len(api_env.requests) < 120
    assert not (tmp_path / "evallint.lock").exists()


def test_api_failure_is_a_tool_error(tmp_path: Path, api_env: MessagesServer) -> None:
    from tests.executor.messages_server import error

    api_env.route(is_judge, error(401))
    result = run_calibrate(write_calibrated_loop(tmp_path))
    assert result.exit_code == 2 and "API error 401" in result.stderr
    assert "sk-ant-test" not in result.stderr + result.stdout
    assert not (tmp_path / "evallint.lock").exists()


def test_calibration_asks_exactly_what_run_asks(tmp_path: Path, api_env: MessagesServer) -> None:
    """A labelled case's request equals the evaluator request `run` sends for the same input
    and final answer: same model, parameters, system prompt and user message."""
    api_env.route(is_judge, JUDGES["good"]())

    def answer(body: dict[str, Any], n: int) -> Reply:
        question = re.search(r"question \d", message_texts(body)[0])
        assert question is not None
        return message(f"<thinking>notes</thinking><answer>A {GOOD_MARK} answer to "
                       f"{question.group(0)}.</answer>")

    api_env.route(is_generator, answer)
    spec = write_calibrated_loop(tmp_path, calibration={**CAL_BLOCK, "require": False},
                                 rubric={"accuracy": 0.7, "clarity": 0.3})
    assert invoke(spec).exit_code == 0
    run_bodies = api_env.bodies(is_judge)
    assert len(run_bodies) == 2  # one passing attempt per case
    api_env.requests.clear()
    assert run_calibrate(spec, "--no-record").exit_code == 0
    for body in run_bodies:
        twin = [b for b in api_env.bodies(is_judge) if b["messages"] == body["messages"]]
        assert len(twin) == 3, body["messages"]  # once per repeat
        assert all(t == body for t in twin)


@settings(max_examples=200, deadline=None)
@given(st_h.lists(st_h.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=1, max_size=15),
       st_h.lists(st_h.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=1, max_size=15))
def test_auc_equals_pair_counting(good: list[float], bad: list[float]) -> None:
    """The rank formula gives the definition: wins plus half the ties over all pairs."""
    wins = sum(1.0 if g > b else 0.5 if g == b else 0.0 for g in good for b in bad)
    assert st.roc_auc(good, bad) == pytest.approx(wins / (len(good) * len(bad)))


@pytest.mark.parametrize("where", ["inside", "outside", "symlink"])
def test_el612_never_reads_outside_the_project(tmp_path: Path, where: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from evallint.cli import main

    repo = tmp_path / "repo"
    write_loop(repo)
    (repo / "evallint.toml").write_text("", encoding="utf-8")
    thin = '{"input": "q", "output": "a", "label": "good"}\n'
    (tmp_path / "outside.jsonl").write_text(thin, encoding="utf-8")
    name = {"inside": "cal.jsonl", "outside": "../outside.jsonl", "symlink": "cal.jsonl"}[where]
    if where == "inside":
        (repo / "cal.jsonl").write_text(thin, encoding="utf-8")
    elif where == "symlink":
        (repo / "cal.jsonl").symlink_to(tmp_path / "outside.jsonl")
    spec = repo / "evallint.loop.yaml"
    spec.write_text(spec.read_text() + f"calibration:\n  cases: {name}\n", encoding="utf-8")
    monkeypatch.chdir(repo)
    res = CliRunner().invoke(main, ["check", "--no-cache", "--select", "EL612", "."])
    assert ("1 good and 0 bad" in res.stdout) == (where == "inside"), res.output


def test_unmeasurable_required_metrics_fail_and_optional_ones_do_not() -> None:
    from evallint.executor.calibrate import judge
    from evallint.executor.spec import Calibration

    cal = Calibration(cases=Path("c.jsonl"))
    metrics = {"auc": None, "kappa": 0.7, "flip_rate": 0.0, "preference_accuracy": None,
               "position_bias": None, "length_gain": None}
    assert judge(metrics, cal) == [
        "auc cannot be measured (needs good and bad labelled cases); min_auc is 0.9"]
    assert judge({**metrics, "auc": 0.95, "position_bias": 0.25}, cal) == [
        "position_bias 0.250 > max_position_bias 0.1"]
