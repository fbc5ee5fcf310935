"""``evallint report``: one self-contained, script-free HTML page from a results file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from click.testing import CliRunner, Result

from evallint.cli import main
from tests.executor.conftest import generator_answers, invoke, is_judge, write_loop
from tests.executor.messages_server import MessagesServer, verdict

HOSTILE = '</pre></td><script>alert("x")</script><img src=x onerror="alert(1)">'


def report(*args: str) -> Result:
    return CliRunner().invoke(main, ["report", *args], catch_exceptions=False)


def record(case_id: str, *, passed: bool, scores: list[Any], **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "version": "1.0", "run_id": "r1", "case_id": case_id, "input": "q", "output": "out",
        "score": max((s for s in scores if s is not None), default=None), "pass": passed,
        "feedback": "fb", "attempts": len(scores), "status": "accepted" if passed else
        "max_attempts", "failure_category": None if passed else "wrong_answer",
        "attempt_history": [{"attempt": i + 1, "score": s} for i, s in enumerate(scores)],
        "cost_breakdown": {"generator": {"model": "gen-model", "cost_usd": 0.002},
                           "evaluator": {"model": "judge-model", "cost_usd": 0.001}},
        "total_cost_usd": 0.003,
    }
    base.update(extra)
    return base


def write_results(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_report_of_a_real_run_is_self_contained(tmp_path: Path,
                                                api_env: MessagesServer) -> None:
    generator_answers(api_env, "first", "second")
    api_env.route(is_judge, [verdict(0.4, feedback="FEEDBACK-LOW add detail",
                                     failure_category="incomplete"), verdict(0.9)])
    spec = write_loop(tmp_path, cases=3, concurrency=1, max_attempts=2)
    assert invoke(spec).exit_code == 0
    results = tmp_path / "out" / "results.jsonl"
    out = tmp_path / "report.html"
    result = report(str(results), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "<style>" in page
    # Offline: nothing is fetched (no src/href to anything, no @import, no script at all).
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "@import" not in page and "<script" not in page.lower()
    assert "Content-Security-Policy" in page
    for section in ("Pass rate", "Score by attempt", "Failure categories", "Cost by model",
                    "Worst cases"):
        assert f"<h2>{section}</h2>" in page
    assert "claude-sonnet-4-6" in page and "claude-haiku-4-5" in page  # cost by model
    svgs = re.findall(r"<svg.*?</svg>", page, re.S)
    assert len(svgs) >= 5
    for svg in svgs:  # every chart is well-formed SVG
        ElementTree.fromstring(svg)


def test_report_numbers_and_worst_cases(tmp_path: Path) -> None:
    results = write_results(tmp_path / "results.jsonl", [
        record("good", passed=True, scores=[0.5, 0.9]),
        record("bad", passed=False, scores=[0.2, 0.3], feedback="BAD-FEEDBACK"),
        record("parse", passed=False, scores=[None], failure_category="evaluator_parse_error"),
        record("meh", passed=False, scores=[0.6, 0.7], feedback="MEH-FEEDBACK"),
    ])
    assert report(str(results)).exit_code == 0
    page = (tmp_path / "results.html").read_text(encoding="utf-8")  # default: beside it
    assert "25.0%" in page  # 1 of 4 passed
    assert "wrong_answer" in page and "evaluator_parse_error" in page
    assert "$0.0080" in page  # gen-model: 4 × 0.002
    worst = page.split("<h2>Worst cases</h2>")[1]
    # Unscored first, then by score: parse, bad, meh; the passing case is not listed.
    assert worst.index("parse") < worst.index("BAD-FEEDBACK") < worst.index("MEH-FEEDBACK")
    assert ">good<" not in worst
    assert "0.50, 0.90" in page  # the good case's scores by attempt


def test_hostile_results_cannot_inject_markup(tmp_path: Path) -> None:
    results = write_results(tmp_path / "results.jsonl", [
        record(HOSTILE, passed=False, scores=[0.1], feedback=HOSTILE, output=HOSTILE,
               failure_category=HOSTILE, status=HOSTILE, run_id=HOSTILE,
               cost_breakdown={"generator": {"model": HOSTILE, "cost_usd": 0.1}}),
    ])
    assert report(str(results), "-o", str(tmp_path / "r.html")).exit_code == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower()
    assert "<img" not in page.lower() and 'onerror="' not in page
    assert HOSTILE not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page  # shown, as text


def test_odd_shapes_do_not_crash(tmp_path: Path) -> None:
    results = write_results(tmp_path / "results.jsonl", [
        {"case_id": 7, "score": "high", "pass": "yes", "attempt_history": "none",
         "cost_breakdown": [1, 2], "total_cost_usd": "free"},
        {"case_id": "x", "attempt_history": [None, {"score": float("inf")}, {"score": 0.5}],
         "cost_breakdown": {"g": "oops", "e": {"cost_usd": None}}},
    ])
    result = report(str(results), "-o", str(tmp_path / "r.html"))
    assert result.exit_code == 0, result.stderr
    assert "0.0%" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_missing_bad_and_empty_results_exit_2(tmp_path: Path) -> None:
    missing = report(str(tmp_path / "nope.jsonl"))
    assert missing.exit_code == 2 and "no such results file" in missing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"case_id": "a"}\nnot json\n{"case_id": "b"}\n', encoding="utf-8")
    broken = report(str(bad))
    assert broken.exit_code == 2 and "bad.jsonl:2" in broken.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    none = report(str(empty))
    assert none.exit_code == 2 and "no records" in none.stderr
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 200_000 + "\n", encoding="utf-8")
    nested = report(str(deep))
    assert nested.exit_code == 2 and "deep.jsonl:1" in nested.stderr
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe\x00junk")
    assert report(str(binary)).exit_code == 2
    assert not (tmp_path / "bad.html").exists()
    own = write_results(tmp_path / "r.jsonl", [record("a", passed=True, scores=[0.9])])
    clash = report(str(own), "-o", str(own))
    assert clash.exit_code == 2 and "overwrite the results file" in clash.stderr
    assert json.loads(own.read_text())["case_id"] == "a"


def test_report_size_is_bounded(tmp_path: Path) -> None:
    many = [record(f"case-{i}", passed=i % 3 == 0, scores=[0.1, 0.2]) for i in range(2000)]
    results = write_results(tmp_path / "results.jsonl", many)
    assert report(str(results), "-o", str(tmp_path / "r.html")).exit_code == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "case-199<" in page and "case-1999<" not in page.split("<h2>Worst")[0]
    assert len(page) < 400_000
