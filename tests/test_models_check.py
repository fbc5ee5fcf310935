"""One models check (checks/models.py) decides EL301/EL302 for every kind from model pairs."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import lint_tree, write_files

AGENTS = {
    ".claude/agents/writer.md": "---\nname: writer\ndescription: Drafts the notes.\n"
                                "model: sonnet\n---\nYou are the writer.\n",
    ".claude/agents/coder.md": "---\nname: coder\ndescription: Implements the change.\n"
                               "model: haiku\n---\nYou are the coder.\n",
    ".claude/agents/judge.md": "---\nname: judge\ndescription: Scores the draft.\n"
                               "tools: Read\nmodel: sonnet\n---\nYou are the judge.\n",
}

PROMPTS = {
    "prompts/generate.prompt.md": "---\nmodel: gpt-4o\n---\nWrite an answer to {{ question }}.\n",
    "prompts/judge.prompt.md": "---\nmodel: gpt-4o\n---\nYou are a judge. Score the response "
                               "<response>{{ answer }}</response> from 1 to 10 and reply with "
                               "JSON {\"score\": n}.\n",
}


def _el30x(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str, str]]:
    write_files(tmp_path, files)
    return [(f.code, f.path, f.message) for f in lint_tree(tmp_path, {"EL301", "EL302"}).findings]


def test_one_finding_per_evaluator_and_the_stronger_rule_wins(tmp_path: Path) -> None:
    """The judge shares sonnet with the writer and is not cheaper than the coder's haiku:
    EL301 alone, once."""
    found = _el30x(tmp_path, AGENTS)
    assert [(c, p) for c, p, _ in found] == [("EL301", ".claude/agents/judge.md")]
    assert "evaluator agent 'judge' runs on sonnet, the same model as generating agent " \
           "'writer' (sonnet)" in found[0][2]


def test_prompt_files_and_agents_get_the_same_wording(tmp_path: Path) -> None:
    found = _el30x(tmp_path, PROMPTS)
    assert len(found) == 1
    code, path, message = found[0]
    assert (code, path) == ("EL301", "prompts/judge.prompt.md")
    assert message.startswith("evaluator prompt prompts/judge.prompt.md runs on gpt-4o, the "
                              "same model as generator prompt prompts/generate.prompt.md (gpt-4o)")


def test_a_not_cheaper_judge_is_el302_with_the_shared_wording(tmp_path: Path) -> None:
    files = dict(AGENTS)
    del files[".claude/agents/writer.md"]
    found = _el30x(tmp_path, files)
    assert found == [("EL302", ".claude/agents/judge.md",
                      "evaluator agent 'judge' runs on sonnet, not a cheaper tier than "
                      "generating agent 'coder' (haiku)")]
