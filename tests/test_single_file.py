"""Checking named files the way pre-commit and editors name them: with the project around them
(a judge's model is compared with its generator's in another file), reporting only on them."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from evallint.cli import main
from tests.conftest import write_files

WRITER = ("---\nstep: generator\nmodel: claude-sonnet-4-5\n---\n"
          "Write a short story about {{ input }}.\n")
GRADER = ("---\nstep: evaluator\nmodel: claude-sonnet-4-5\n---\n"
          "You grade stories. <story>{{ output }}</story> for <task>{{ input }}</task>.\n"
          'Reply as JSON: {"score": 0.0, "feedback": "..."}\n')
LOOP = ("generator:\n  prompt: prompts/writer.prompt.md\n  model: claude-sonnet-4-5\n"
        "evaluator:\n  prompt: prompts/grader.prompt.md\n  model: claude-sonnet-4-5\n"
        "pass_threshold: 0.8\nmax_attempts: 3\ncases: cases.jsonl\nresults: out.jsonl\n")
LEAKY = GRADER.replace("<story>{{ output }}</story>",
                       "<story>{{ output }}</story> {{ scratchpad }}")


def check(root: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    old = Path.cwd()
    os.chdir(root)
    try:
        res = CliRunner().invoke(main, ["check", "--no-cache", *args], input=stdin)
    finally:
        os.chdir(old)
    assert "Traceback" not in res.output
    return res.exit_code, res.stdout, res.stderr


def _tree(root: Path) -> None:
    write_files(root, {"prompts/writer.prompt.md": WRITER, "prompts/grader.prompt.md": GRADER,
                       "story.loop.yaml": LOOP, "cases.jsonl": '{"id": "1", "input": "a cat"}\n',
                       "other/judge.j2":
                           "You are a judge. {{ system_prompt }} <o>{{ output }}</o>\n"})


def test_a_named_file_is_checked_with_its_project(tmp_path: Path) -> None:
    """The grader and the writer share a model; the grader named alone still shows EL301,
    and findings in files not named (other/judge.j2's EL102) are not reported."""
    _tree(tmp_path)
    code, out, err = check(tmp_path, "prompts/grader.prompt.md")
    assert code == 1 and "EL301" in out
    assert {line.split(":")[0] for line in out.splitlines() if not line.startswith(" ")} == {
        "prompts/grader.prompt.md"}
    assert "1 file checked" in err and "other files of the project" in err
    code, out, _ = check(tmp_path, "--no-project", "prompts/grader.prompt.md")
    assert "EL301" not in out  # alone, its generator is unknown


def test_standard_input_stands_for_the_named_file_in_its_project(tmp_path: Path) -> None:
    _tree(tmp_path)
    code, out, _ = check(tmp_path, "--stdin-filename", "prompts/grader.prompt.md", stdin=LEAKY)
    assert code == 1 and "EL102" in out and "scratchpad" in out and "EL301" in out
    assert "other/judge.j2" not in out
    # the file on disk is unchanged and still clean of EL102
    code, out, _ = check(tmp_path, "prompts/grader.prompt.md")
    assert "EL102" not in out


def test_a_named_file_the_listing_leaves_out_is_still_checked(tmp_path: Path) -> None:
    _tree(tmp_path)
    write_files(tmp_path, {"pyproject.toml": "[tool.evallint]\nextend-exclude = ['drafts']\n",
                           "drafts/judge.j2": "You are a judge. {{ chain_of_thought }} "
                                              "<o>{{ output }}</o>\n"})
    code, out, _ = check(tmp_path, "drafts/judge.j2")
    assert code == 1 and "drafts/judge.j2" in out and "EL102" in out
    code, out, _ = check(tmp_path)
    assert "drafts/judge.j2" not in out
