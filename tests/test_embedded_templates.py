"""Templates inside other files: JSONL/JSON prompt collections, judge configs and the template
files they name, promptfoo ``file://`` targets."""

from __future__ import annotations

import json
import os
from pathlib import Path

from evallint.classify import classify
from evallint.config import parse_config
from evallint.engine import run_check
from evallint.frontends.embedded import decode_quoted, string_locator
from evallint.frontends.jsonl_front import parse_collection
from evallint.registry import load_checks, load_rules
from evallint.source import LineIndex, SourceFile
from tests.conftest import lint_tree, write_files

JUDGE = {"name": "tone_judge", "model": "gpt-4o-mini",
         "system_prompt": "You are a strict grader. Reply with JSON {\"score\": 1}.",
         "prompt_template": "Caf\u00e9 question: {question}\n\"Notes\": {scratchpad}\n"
                            "<answer>{answer}</answer>"}


def _codes(result: object) -> list[tuple[str, int, int, str]]:
    return sorted((f.path, f.line, f.column, f.code) for f in result.findings)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- positions


def test_decoded_offsets_follow_escapes() -> None:
    raw = '{"t": "a\\u00e9\\n\\"{x}\\ud83d\\ude00{y}"}'
    start = raw.index('"a')
    text, offs = decode_quoted(raw, start) or ("", [])
    assert text == json.loads(raw)["t"]
    assert raw[offs[text.index("{x}")]] == "{"
    assert raw[offs[text.index("{y}")]] == "{"
    assert raw[offs[len(text)]] == '"'  # the closing quote


def test_string_locator_gives_file_columns_after_escaped_newlines() -> None:
    line = json.dumps(JUDGE)
    start = line.index('"Caf')
    text, locate = string_locator(line, LineIndex(line), start, JUDGE["prompt_template"])
    tline, tcol = LineIndex(text).pos(text.index("scratchpad"))
    from evallint.facts import Pos

    pos = locate(Pos(tline, tcol))
    assert line[pos.column - 1:].startswith("scratchpad")


def test_jsonl_judge_record_reports_at_the_placeholder(tmp_path: Path) -> None:
    line = json.dumps(JUDGE)
    write_files(tmp_path, {"sets/judges.jsonl": line + "\n"})
    found = _codes(lint_tree(tmp_path, {"EL102"}))
    assert found == [("sets/judges.jsonl", 1, line.index("scratchpad") + 1, "EL102")]


def test_pretty_json_collection_positions(tmp_path: Path) -> None:
    text = json.dumps({"prompts": [JUDGE]}, indent=2)
    write_files(tmp_path, {"sets/judges.json": text})
    found = _codes(lint_tree(tmp_path, {"EL102"}))
    lines = text.split("\n")
    (_path, line, col, _code), = found
    assert lines[line - 1][col - 1:].startswith("scratchpad")


# ---------------------------------------------------------------------------- data files


def test_data_rows_are_not_prompt_collections() -> None:
    rows = "\n".join(json.dumps({"id": i, "prompt": f"What is {i}+1?", "answer": str(i + 1)})
                     for i in range(50))
    assert classify("data/cases.jsonl", rows[:16384]) is None
    assert classify("sets/judges.jsonl", json.dumps(JUDGE)) is not None


def test_a_big_collection_is_read_and_one_past_the_size_limit_is_el901(tmp_path: Path) -> None:
    """A collection is told by its first records, whatever its size: over a megabyte it is
    still read (padding must not hide a judge), and past max-file-size it is EL901, never
    silently dropped."""
    line = json.dumps(JUDGE) + "\n"
    write_files(tmp_path, {"sets/big.jsonl": line * (1_100_000 // len(line))})
    result = lint_tree(tmp_path, {"EL102", "EL901"})
    assert {f.code for f in result.findings} == {"EL102"}
    result = lint_tree(tmp_path, {"EL102", "EL901"}, config={"max-file-size": 1_000_000})
    assert [(f.path, f.code) for f in result.findings] == [("sets/big.jsonl", "EL901")]
    assert "max-file-size" in result.findings[0].message


def test_records_after_a_templateless_start_are_not_read(tmp_path: Path) -> None:
    rows = [json.dumps({"template": "plain text, no fields", "model": "m"})] * 5
    text = "\n".join([*rows, json.dumps(JUDGE)]) + "\n"
    path = tmp_path / "x.jsonl"
    path.write_text(text, encoding="utf-8")
    cfg = parse_config({}, source=None, root=tmp_path)
    facts = parse_collection(SourceFile(path=path, rel="x.jsonl", text=text,
                                        data=text.encode()), cfg)
    assert facts.records == []


def test_broken_lines_and_odd_shapes_do_not_crash(tmp_path: Path) -> None:
    text = '{"prompt_template": "a {x}"\n[1, 2]\n"str"\n{"prompt_template": 3}\n'
    write_files(tmp_path, {"sets/odd.jsonl": text,
                           "sets/odd.json": '{"template": ["{a}", 1, null]}'})
    result = lint_tree(tmp_path)
    assert not result.tool_errors


# ---------------------------------------------------------------------------- configs

ANNOTATOR = """\
{name}:
  prompt_template: "{target}"
  fn_completions: "openai_completions"
  completions_kwargs:
    model_name: "gpt-4o-mini"
  fn_completion_parser: "ranking_parser"
"""
LEAKY = ("You are a judge. Pick the better answer to {instruction}.\n"
         "How model_1 reasoned: {chain_of_thought}\n"
         'Answer 1: """{output_1}"""\nAnswer 2: """{output_2}"""\n')


def test_a_template_named_by_two_configs_is_reported_once(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "judges_configs/a/configs.yaml": ANNOTATOR.format(name="a", target="shared/p.txt"),
        "judges_configs/b/configs.yaml": ANNOTATOR.format(name="b", target="shared/p.txt"),
        "judges_configs/shared/p.txt": LEAKY,
    })
    found = lint_tree(tmp_path, {"EL102"}).findings
    assert [(f.path, f.line) for f in found] == [("judges_configs/shared/p.txt", 2)]
    assert found[0].related[0].path == "judges_configs/a/configs.yaml"


def test_a_template_read_on_its_own_owns_its_findings(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "judges_configs/a/configs.yaml": ANNOTATOR.format(name="a", target="../prompts/p.txt"),
        "judges_configs/prompts/p.txt": LEAKY,
    })
    found = lint_tree(tmp_path, {"EL102"}).findings
    assert [(f.path, f.line, f.code) for f in found] == [
        ("judges_configs/prompts/p.txt", 2, "EL102")]


def test_a_config_never_reads_outside_the_project(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_files(outside, {"secret.txt": "You are a judge {chain_of_thought}"})
    inside = tmp_path / "proj"
    write_files(inside, {
        "judges_configs/a/configs.yaml": ANNOTATOR.format(name="a",
                                                          target="../../../outside/secret.txt"),
    })
    result = lint_tree(inside, {"EL102", "EL611"})
    assert [f.code for f in result.findings] == ["EL611"]


def test_a_changed_template_is_seen_through_the_cache(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "judges_configs/a/configs.yaml": ANNOTATOR.format(name="a", target="a/p.txt"),
        "judges_configs/a/p.txt": LEAKY.replace("{chain_of_thought}", "(hidden)"),
    })
    load_checks()

    def run() -> list[str]:
        old = Path.cwd()
        os.chdir(tmp_path)
        try:
            cfg = parse_config({}, source=None, root=tmp_path)
            cfg.respect_gitignore = False
            res = run_check(["."], cfg, set(load_rules()), jobs=1, use_cache=True)
            return [f.code for f in res.findings if f.code == "EL102"]
        finally:
            os.chdir(old)

    assert run() == []
    (tmp_path / "judges_configs/a/p.txt").write_text(LEAKY, encoding="utf-8")
    assert run() == ["EL102"]
    # a template that was missing and then appears is read too
    (tmp_path / "judges_configs/a/p.txt").rename(tmp_path / "p.txt")
    assert run() == []
    (tmp_path / "p.txt").rename(tmp_path / "judges_configs/a/p.txt")
    assert run() == ["EL102"]


def test_model_configs_are_not_judge_configs() -> None:
    head = ANNOTATOR.format(name="m", target="m/p.txt").replace(
        '  fn_completion_parser: "ranking_parser"\n', "")
    assert classify("src/models_configs/m/configs.yaml", head) is None
    assert classify("src/evaluators_configs/m/configs.yaml", head) is not None


def test_dollar_template_markdown_is_a_prompt(tmp_path: Path) -> None:
    write_files(tmp_path, {"evaluation/eval_template.md":
                           "You are an expert evaluator.\n## Scratchpad\n{$scratchpad}\n"
                           "## Reply\n```\n{$candidate_A}\n```\nReturn JSON {\"choice\": 1}\n"})
    found = _codes(lint_tree(tmp_path, {"EL102", "EL105"}))
    assert found == [("evaluation/eval_template.md", 3, 3, "EL102")]


CLASSIFIER = """\
name: relevance
optimization_direction: maximize
messages:
  - role: user
    content: |-
      You are an evaluator. Is the retrieved text relevant to the request?
      <request>{{input}}</request>
      <retrieved>{{context}}</retrieved>
      {extra}
      Answer relevant or unrelated.
choices:
  relevant: 1
  unrelated: 0
"""


def test_a_judge_without_a_candidate_output_grades_what_it_renders(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "evals/relevance.yaml": CLASSIFIER.replace("{extra}", ""),
        "evals/faithful.yaml": CLASSIFIER.replace("{extra}", "<reply>{{output}}</reply>"),
    })
    found = {f.path: f.severity.value for f in lint_tree(tmp_path, {"EL102"}).findings}
    # (context is a name as often the task's own material: EL102's weak signals make notes)
    assert found == {"evals/relevance.yaml": "note", "evals/faithful.yaml": "note"}


def test_el103_has_no_ground_when_the_judge_renders_no_candidate_output(tmp_path: Path) -> None:
    """Without an output alias, one of the judge's variables is the graded item, so "neither
    the task input nor the output" cannot be said of any; with one, EL103 still applies."""
    extra = "<profile>{{user_profile}}</profile>"
    write_files(tmp_path, {
        "evals/relevance.yaml": CLASSIFIER.replace("{extra}", extra),
        "evals/faithful.yaml": CLASSIFIER.replace("{extra}", extra + "<reply>{{output}}</reply>"),
    })
    found = {(f.path, f.message.split("'")[1]) for f in lint_tree(tmp_path, {"EL103"}).findings}
    assert ("evals/faithful.yaml", "user_profile") in found
    assert not {p for p, _ in found} & {"evals/relevance.yaml"}


def test_a_template_read_on_its_own_without_a_role_gets_the_configs_role(tmp_path: Path) -> None:
    # (no role of its own: "pick the better answer" would make it a judge by its text)
    plain = LEAKY.replace("You are a judge. Pick the better answer to", "Two answers to")
    write_files(tmp_path, {
        "judges_configs/a/configs.yaml": ANNOTATOR.format(name="a", target="../prompts/p.txt"),
        "judges_configs/prompts/p.txt": plain,
    })
    found = lint_tree(tmp_path, {"EL102"}).findings
    assert [(f.path, f.line) for f in found] == [("judges_configs/prompts/p.txt", 2)]
    assert found[0].related[-1].path == "judges_configs/a/configs.yaml"


def test_block_scalar_positions_with_the_kept_final_newline(tmp_path: Path) -> None:
    text = CLASSIFIER.replace("{extra}", "<reply>{{output}}</reply> {{scratchpad}}").replace(
        "content: |-", "content: |")
    write_files(tmp_path, {"evals/faithful.yaml": text})
    (f,) = [f for f in lint_tree(tmp_path, {"EL102"}).findings if "scratchpad" in f.message]
    assert text.split("\n")[f.line - 1][f.column - 1:].startswith("scratchpad")


def test_a_judge_prompt_under_promptfoo_test_is_not_a_generator(tmp_path: Path) -> None:
    config = ("prompts: [file://judge.txt]\nproviders: [openai:chat:gpt-4o]\n"
              "tests:\n  - assert:\n      - type: equals\n        value: PASS\n")
    write_files(tmp_path, {
        "promptfooconfig.yaml": config,
        "judge.txt": "You are a strict judge. Apply the rubric {{rubric}} to "
                     "<answer>{{answer}}</answer>. Reply PASS or FAIL.\n",
        "writer.txt": "Write an answer to {{question}} meeting {{rubric}}.\n",
    })
    assert lint_tree(tmp_path, {"EL106"}).findings == []
    write_files(tmp_path, {"promptfooconfig.yaml": config.replace("judge.txt", "writer.txt")})
    assert [f.path for f in lint_tree(tmp_path, {"EL106"}).findings] == ["writer.txt"]


def test_a_judge_on_the_baseline_model_is_a_note(tmp_path: Path) -> None:
    write_files(tmp_path, {"config/judge_config.yaml": (
        "judge_model: gpt-4o\nbaseline_model: gpt-4o-2024-05-13\n"
        'system_prompt: "You are an impartial judge. End with [[A]] or [[B]]."\n'
        'prompt_template: ["{question}\\n<a>{answer_1}</a>\\n<b>{answer_2}</b>"]\n'
        "model_list: [claude-haiku-4-5]\n")})
    found = lint_tree(tmp_path, {"EL301"}).findings
    assert [(f.line, f.severity.value) for f in found] == [(1, "note")]
