"""Hostile inputs cannot crash or stall a run (issue 14): alias bombs, deep nesting, files that
crash or outlast a worker. Each one is reported by name (EL901) and every other file's findings
still come out."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evallint import frontend
from evallint.config import Config, parse_config
from evallint.engine import run_check
from evallint.frontend import ParseError
from evallint.frontends.prompt_files import parse_prompt_file
from evallint.frontends.python_front import parse_python
from evallint.kinds import FileKind
from evallint.marks import load_yaml
from evallint.registry import PROJECT_CHECKS, load_checks, load_rules
from evallint.source import SourceFile
from tests.conftest import write_files
from tests.test_fuzz_configs import PARSERS

DIRTY_JUDGE = "You are a strict judge.\n<answer>{{ output }}</answer>\n{{ system_prompt }}\n"


def alias_bomb(levels: int = 8, width: int = 9, indent: str = "") -> str:
    """Eight levels of nine aliases: 0.2 KB of YAML that would expand to 9**8 leaves."""
    lines = [f'{indent}a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        refs = ", ".join([f"*a{i - 1}"] * width)
        lines.append(f"{indent}a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


BOMBS = {
    "prompts/judge.prompt.md": "---\nstep: evaluator\n" + alias_bomb() + "---\nGrade {{output}}\n",
    "promptfooconfig.yaml": "prompts: [p.txt]\nproviders: [openai:gpt-4.1]\n" + alias_bomb(),
    "evallint.loop.yaml": "generator: {prompt: g.md, model: m}\n" + alias_bomb(),
}


def cli(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    return subprocess.run([sys.executable, "-m", "evallint", "check", "--no-cache", *args],
                          cwd=root, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


def lint(root: Path, **config: Any) -> Any:
    load_checks()
    old = Path.cwd()
    os.chdir(root)
    try:
        cfg = parse_config(config, source=None, root=root)
        cfg.respect_gitignore = False
        return run_check(["."], cfg, set(load_rules()), jobs=2, use_cache=False)
    finally:
        os.chdir(old)


@pytest.mark.parametrize("rel", sorted(BOMBS))
def test_an_alias_bomb_is_refused_in_under_a_second(tmp_path: Path, rel: str) -> None:
    write_files(tmp_path, {rel: BOMBS[rel], "prompts/dirty.j2": DIRTY_JUDGE})
    start = time.perf_counter()
    proc = cli(tmp_path)
    took = time.perf_counter() - start
    assert proc.returncode == 1, proc.stderr
    assert f"{rel}:" in proc.stdout and "alias bomb" in proc.stdout
    assert "prompts/dirty.j2:3:4: EL102" in proc.stdout  # the other file is still checked
    assert took < 10  # the whole process, start-up included; the refusal itself is below
    text = BOMBS[rel]
    start = time.perf_counter()
    with pytest.raises(ParseError, match="alias bomb"):
        load_yaml(text.split("---\n")[1] if text.startswith("---") else text)
    assert time.perf_counter() - start < 1.0


def test_yaml_aliases_that_stay_small_are_still_read() -> None:
    doc = load_yaml("base: &b {model: claude-haiku-4-5}\njudge: *b\ngrader:\n  <<: *b\n")
    assert doc.data["judge"] == {"model": "claude-haiku-4-5"}
    assert doc.data["grader"] == {"model": "claude-haiku-4-5"}


def test_a_self_referring_yaml_alias_is_refused() -> None:
    with pytest.raises(ParseError, match="contains it"):
        load_yaml("a: &a [1, *a]\n")


def test_deep_yaml_nesting_is_refused_with_a_line() -> None:
    with pytest.raises(ParseError) as err:
        load_yaml("x: " + "[" * 3000 + "]" * 3000 + "\n")
    assert err.value.line >= 1


HOSTILE_PYTHON = {
    "nested_calls.py": "x = " + "f(" * 3000 + "1" + ")" * 3000,
    "attribute_chain.py": "x = a" + ".b" * 20_000,
    "plus_chain.py": "x = " + " + ".join(["a"] * 50_000),
    "plus_chain_5k.py": "x = " + " + ".join(["a"] * 5_000),
}


def test_hostile_python_is_reported_never_a_crash(tmp_path: Path) -> None:
    files = {name: "import anthropic\n" + body + "\n" for name, body in HOSTILE_PYTHON.items()}
    files["prompts/dirty.j2"] = DIRTY_JUDGE
    write_files(tmp_path, files)
    proc = cli(tmp_path, "--time-budget", "3")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    for name in HOSTILE_PYTHON:
        assert f"{name}:" in proc.stdout and "EL901" in proc.stdout, name
    assert "prompts/dirty.j2:3:4: EL102" in proc.stdout


def test_a_huge_line_with_an_sdk_call_finishes_within_the_budget(tmp_path: Path) -> None:
    call = ", ".join(['{"role": "user", "content": "x"}'] * 50_000)
    write_files(tmp_path, {
        "huge.py": "import anthropic\nclient = anthropic.Anthropic()\n"
                   f"r = client.messages.create(model='m', messages=[{call}])\n",
        "prompts/dirty.j2": DIRTY_JUDGE})
    assert (tmp_path / "huge.py").stat().st_size > 1_500_000
    start = time.perf_counter()
    proc = cli(tmp_path, "--time-budget", "2")
    took = time.perf_counter() - start
    assert proc.returncode == 1 and "prompts/dirty.j2:3:4: EL102" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    # Either analysed within the budget or reported as not analysed, naming the budget.
    huge = [ln for ln in proc.stdout.splitlines() if ln.startswith("huge.py:")]
    assert all("time budget of 2 s" in ln for ln in huge if "EL901" in ln)
    assert took < 60


def _slow_or_fatal(real: Any) -> Any:
    def parse(source: SourceFile, config: Config) -> Any:
        if source.rel.endswith("slow.j2"):
            time.sleep(30)
        if source.rel.endswith("segv.j2"):
            os.kill(os.getpid(), signal.SIGSEGV)
        if source.rel.endswith("exit.j2"):
            os._exit(3)
        return real(source, config)
    return parse


def test_a_file_past_the_budget_or_killing_its_worker_is_el901_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_checks()
    monkeypatch.setitem(frontend.FRONTENDS, FileKind.JINJA.value,
                        _slow_or_fatal(frontend.FRONTENDS[FileKind.JINJA.value]))
    files = {f"prompts/judge_{i:02d}.j2": DIRTY_JUDGE for i in range(60)}
    files.update({"prompts/slow.j2": "x", "prompts/segv.j2": "x", "prompts/exit.j2": "x"})
    write_files(tmp_path, files)
    start = time.perf_counter()
    result = lint(tmp_path, **{"time-budget": 1.5})
    took = time.perf_counter() - start
    by_path = {f.path: f for f in result.findings if f.code == "EL901"}
    assert "time budget of 1.5 s" in by_path["prompts/slow.j2"].message
    assert "died (killed by SIGSEGV)" in by_path["prompts/segv.j2"].message
    assert "died (exit status 3)" in by_path["prompts/exit.j2"].message
    assert by_path["prompts/slow.j2"].severity.value == "error"
    el102 = {f.path for f in result.findings if f.code == "EL102"}
    assert el102 == {f"prompts/judge_{i:02d}.j2" for i in range(60)}
    assert not result.tool_errors
    assert took < 25  # the sleeping worker was killed, not waited for


def test_the_project_analysis_has_a_budget_too(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    load_checks()
    slow = PROJECT_CHECKS[0]

    def forever(project: Any, ctx: Any) -> Any:
        time.sleep(30)
        yield from ()

    monkeypatch.setattr("evallint.engine.PROJECT_CHECKS",
                        [dataclasses.replace(slow, fn=forever), *PROJECT_CHECKS[1:]])
    write_files(tmp_path, {"prompts/dirty.j2": DIRTY_JUDGE})
    start = time.perf_counter()
    result = lint(tmp_path, **{"project-time-budget": 1})
    assert time.perf_counter() - start < 20
    assert any("time budget of 1 s (project-time-budget)" in e for e in result.tool_errors)
    assert any(f.code == "EL102" for f in result.findings)


def test_time_budgets_are_validated(tmp_path: Path) -> None:
    from evallint.config import ConfigError

    for bad in (0, -1, "5", True, 10_000):
        with pytest.raises(ConfigError, match="time-budget"):
            parse_config({"time-budget": bad}, source=None, root=tmp_path)
    assert parse_config({"time-budget": 2}, source=None, root=tmp_path).time_budget == 2.0


# ------------------------------------------------------------------ property tests

HOSTILE = settings(max_examples=40, deadline=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _alias_doc(levels: int, width: int, shape: str) -> str:
    lines = ["a0: &a0 " + ("{k: v}" if shape == "map" else "[x]")]
    for i in range(1, levels + 1):
        refs = [f"*a{i - 1}"] * width
        body = ("{" + ", ".join(f"k{j}: {r}" for j, r in enumerate(refs)) + "}"
                if shape == "map" else "[" + ", ".join(refs) + "]")
        lines.append(f"a{i}: &a{i} {body}")
    return "\n".join(lines) + "\n"


@HOSTILE
@given(st.integers(1, 12), st.integers(1, 12), st.sampled_from(["list", "map"]),
       st.sampled_from(["promptfooconfig.yaml", "evallint.loop.yaml", ".claude/agents/j.md",
                        "prompts/judge.prompt.md"]))
def test_alias_heavy_documents_are_quick(levels: int, width: int, shape: str, rel: str) -> None:
    doc = _alias_doc(levels, width, shape)
    text = f"---\n{doc}---\nGrade {{{{output}}}}\n" if rel.endswith(".md") else doc
    parse = PARSERS.get(rel, parse_prompt_file)
    start = time.perf_counter()
    try:
        parse(SourceFile(Path(rel), rel, text, text.encode()), Config())
    except ParseError as exc:
        assert exc.line >= 1
    assert time.perf_counter() - start < 1.0


@HOSTILE
@given(st.sampled_from([" + ", " * ", " and ", " or ", ".", " if x else ", "(", "[", "-"]),
       st.integers(10, 30_000))
def test_long_operator_chains_are_quick(op: str, n: int) -> None:
    if op in ("(", "["):
        closing = ")" if op == "(" else "]"
        body = "x = " + op * n + "1" + closing * n
    elif op == ".":
        body = "x = a" + ".b" * n
    elif op == "-":
        body = "x = " + "-" * n + "1"
    else:
        body = "x = " + op.join(["a"] * n)
    text = "import anthropic\n" + body + "\n"
    start = time.perf_counter()
    try:
        parse_python(SourceFile(Path("m.py"), "m.py", text, text.encode()), Config())
    except ParseError as exc:
        assert exc.line >= 1
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("op", [" &&\n", " ||\n", " ??\n", " +\n", "\n.b", " ? x :\n", "[\n"])
def test_long_script_chains_are_reported_never_a_crash(op: str) -> None:
    """A script's long chain is analysed or refused by name (tree-sitter nests a chain one
    level per operator; the lowering's recursion limit is caught, not raised)."""
    from evallint.frontends.script_front import parse_script

    n = 20_000
    body = "[\n" * n + "1" + "]\n" * n if op == "[\n" else op.join(["a"] * n)
    text = ("import Anthropic from '@anthropic-ai/sdk';\nconst client = new Anthropic();\n"
            f"const x = {body};\nconst r = await client.messages.create({{model: 'claude-x', "
            "max_tokens: 5, messages: [{role: 'user', content: String(x)}]});\n")
    try:
        facts = parse_script(SourceFile(Path("m.ts"), "m.ts", text, text.encode()), Config())
    except ParseError as exc:
        assert "too deeply nested" in str(exc)
    else:
        assert facts.analyzed


def test_a_notebook_heavy_with_outputs_is_analysed_but_a_padded_template_is_not(
        tmp_path: Path) -> None:
    """Only a notebook's code cells are analysed, so its outputs do not count against
    max-file-size; any other file past the limit stays EL901 (padding must not hide it)."""
    picture = "A" * 600_000
    cells = [{"cell_type": "code", "source": ["from anthropic import Anthropic\n",
                                              "client = Anthropic()\n"],
              "outputs": [{"output_type": "display_data", "data": {"image/png": picture}}]}
             for _ in range(5)]
    (tmp_path / "tour.ipynb").write_text(json.dumps({"cells": cells, "nbformat": 4}))
    (tmp_path / "judge.prompt.md").write_text(
        "---\nrole: evaluator\n---\nScore the answer.\n" + " " * 3_000_000 + "{{ answer }}\n")
    run = lint(tmp_path, **{"max-file-size": 1_000_000})
    el901 = {f.path for f in run.findings if f.code == "EL901"}
    assert el901 == {"judge.prompt.md"}
    assert any(t.path == "tour.ipynb" for t in run.files)
