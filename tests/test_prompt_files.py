"""Prompt-file front-end: front matter, dialect choice, sections, model, roles, contracts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evallint.config import parse_config
from evallint.facts.prompt_files import PromptFileFacts
from evallint.frontend import ParseError
from evallint.frontends.format_front import parse_format
from evallint.frontends.prompt_files import dialect_for, parse_prompt_file
from evallint.roles import Role
from evallint.source import SourceFile
from tests.conftest import lint_tree, write_files


def parse(rel: str, text: str, config: dict[str, Any] | None = None) -> PromptFileFacts:
    cfg = parse_config(config or {}, source=None, root=Path.cwd())
    src = SourceFile(path=Path(rel), rel=rel, text=text, data=text.encode())
    return parse_prompt_file(src, cfg)


AIWG = """---
step: evaluator
model: claude-haiku-4-5
temperature: 0
---
# Grader

## System
You grade answers.
Reply {"score": 0.0, "feedback": "..."}

## User
<input>{{ input }}</input>
"""


def test_aiwg_layout() -> None:
    facts = parse("prompts/evaluator.prompt.md", AIWG)
    assert facts.front_matter["temperature"] == 0
    assert facts.front_matter_lines == {"step": 2, "model": 3, "temperature": 4}
    assert facts.body_start_line == 6
    assert (facts.model, facts.model_pos and facts.model_pos.line) == ("claude-haiku-4-5", 3)
    assert [(s.title, s.level, s.pos.line) for s in facts.sections] == [
        ("Grader", 1, 6), ("System", 2, 8), ("User", 2, 12)
    ]
    assert facts.role.role is Role.EVALUATOR and facts.role.explicit
    assert facts.role.evidence == ["front matter step: evaluator (line 2)"]
    assert facts.template.dialect == "jinja"
    assert [(v.name, v.pos.line, v.pos.column) for v in facts.template.variables] == [
        ("input", 13, 11)
    ]
    assert {"score", "feedback"} <= set(facts.contract_keys)


def test_invalid_front_matter_reports_the_real_line() -> None:
    with pytest.raises(ParseError) as info:
        parse("prompts/judge.prompt.md", "---\nstep: evaluator\nmodel: [unclosed\n---\nbody\n")
    assert info.value.line in (3, 4)
    assert "YAML" in info.value.message


def test_unclosed_front_matter_in_prompty_is_an_error() -> None:
    with pytest.raises(ParseError):
        parse("p/x.prompty", "---\nname: x\n")


def test_prompty_model_and_outputs() -> None:
    text = ("---\nname: Summary judge\nmodel:\n  api: chat\n  configuration:\n"
            "    azure_deployment: gpt-4o-mini\noutputs:\n  score:\n    type: number\n"
            "  feedback:\n    type: string\n---\nuser:\n{{output}}\n")
    facts = parse("prompts/summary.prompty", text)
    assert facts.model == "gpt-4o-mini"
    assert facts.model_pos is not None and facts.model_pos.line == 6
    assert {"score", "feedback"} <= set(facts.contract_keys)
    assert facts.role.evidence == ["front matter name token 'judge'"]


def test_dotprompt_is_handlebars_with_picoschema_contract() -> None:
    text = ("---\nmodel: googleai/gemini-2.0-flash\noutput:\n  schema:\n    score: number\n"
            "    feedback?: string, what to fix\n---\n{{#each items}}{{this}}{{/each}}\n")
    facts = parse("prompts/grader.prompt", text)
    assert facts.template.dialect == "mustache"
    assert facts.model == "googleai/gemini-2.0-flash"
    assert {"score", "feedback"} <= set(facts.contract_keys)
    assert facts.batch_pos is not None and facts.batch_pos.line == 8


@pytest.mark.parametrize(("rel", "body", "fm", "want"), [
    ("a.j2", "{{#x}}", {}, "jinja"),
    ("a.hbs", "{% x %}", {}, "mustache"),
    ("p/a.md", "{{#each x}}{{/each}}", {}, "mustache"),
    ("p/a.md", "{% if x %}{% endif %}", {}, "jinja"),
    ("p/a.md", "Hello {{ name }}", {}, "jinja"),
    ("p/a.md", "Hello {name}, reply {\"score\": 1}", {}, "format"),
    ("p/a.md", "Hello {{ name }}", {"template_format": "mustache"}, "mustache"),
    ("p/a.txt", "plain prose", {}, "none"),
])
def test_dialect(rel: str, body: str, fm: dict[str, Any], want: str) -> None:
    assert dialect_for(rel, body, fm) == want


def test_failed_guess_falls_back_to_the_other_dialect() -> None:
    # {{ a }} looks like Jinja, but "{{ d | }}" is not a Jinja expression; mustache reads it.
    facts = parse("prompts/x.md", "{{ a }} then {{ b.c }} {{ d | }}\n")
    assert facts.template.dialect == "mustache"


def test_format_prompt_ignores_json_and_escapes() -> None:
    facts = parse_format('Q: {question}\nReply {"score": 1} or {{not_a_var}} {obj.attr[0]:>4}')
    assert [(v.name, v.path, v.pos.column) for v in facts.variables] == [
        ("question", ("question",), 5), ("obj", ("obj", "attr", "0"), 38)
    ]


def test_headings_inside_fences_are_not_sections_but_variables_there_count() -> None:
    facts = parse("prompts/g.md", "# Real\n```\n# Not a heading\n{{ x }}\n```\n")
    assert [s.title for s in facts.sections] == ["Real"]
    assert [v.name for v in facts.template.variables] == ["x"]
    assert facts.template.variables[0].delimited


def test_prose_is_never_a_variable() -> None:
    facts = parse("prompts/judge.prompt.md",
                  "You never see the system prompt or the chain of thought.\n<o>{{ output }}</o>")
    assert [v.name for v in facts.template.variables] == ["output"]


@pytest.mark.parametrize(("rel", "text", "config", "role", "evidence"), [
    ("prompts/x.md", "text", {"roles": {"prompts/x.md": "evaluator"}}, Role.EVALUATOR,
     "config roles: 'prompts/x.md' = evaluator"),
    ("prompts/judge.md", "---\nrole: generator\n---\n", None, Role.GENERATOR,
     "front matter role: generator (line 2)"),
    ("prompts/x.md", "---\nevallint: {role: judge}\n---\n", None, Role.EVALUATOR,
     "front matter evallint.role: judge (line 2)"),
    ("prompts/answer_grader.md", "x", None, Role.UNKNOWN, "headings"),
    ("prompts/rubric_checker.md", "x", None, Role.EVALUATOR, "file name token 'rubric'"),
    ("prompts/x.md", "## Task\n## Grading rubric\n", None, Role.UNKNOWN, None),
    ("prompts/x.md", "## Task\n## Grading rubric\nPoints on a scale of 1 to 5.\n", None,
     Role.EVALUATOR, "heading 'Grading rubric' (line 2)"),
    ("prompts/x.md", "\n\nYou are an impartial judge of essays.", None, Role.EVALUATOR,
     "content: 'You are an impartial judge' (line 3)"),
    ("prompts/x.md", "Summarize the text.", None, Role.UNKNOWN, None),
])
def test_role_inference_and_evidence(rel: str, text: str, config: dict[str, Any] | None,
                                     role: Role, evidence: str | None) -> None:
    facts = parse(rel, text, config)
    assert facts.role.role is role
    if evidence is not None and role is not Role.UNKNOWN:
        assert facts.role.evidence[0] == evidence


def test_declarations_from_front_matter() -> None:
    text = ("---\nevallint:\n  legitimate:\n    context: needs the passages\n---\n")
    assert parse("prompts/j.md", text).declarations == {"context": "needs the passages"}
    text = ("---\nevallint:\n  legitimate:\n    - {inputs: [a, b], reason: why}\n---\n")
    assert parse("prompts/j.md", text).declarations == {"a": "why", "b": "why"}


def test_format_prompt_with_escaped_json_is_read_as_format() -> None:
    facts = parse("prompts/judge.txt", 'Grade {answer} for {question}.\nReply {{"score": 1}}\n')
    assert facts.template.dialect == "format"
    assert [v.name for v in facts.template.variables] == ["answer", "question"]


def test_described_judging_does_not_make_a_judge() -> None:
    facts = parse("prompts/x.md", "Write an essay. A reviewer will grade the essay later and "
                                  "your answer will be scored from 1 to 10 against a rubric.")
    assert facts.role.role is Role.UNKNOWN
    facts = parse("prompts/x.md", "Grade the response below on a scale of 1 to 10.")
    assert facts.role.role is Role.EVALUATOR
    assert len(facts.role.evidence) == 2


def test_a_heading_alone_does_not_make_a_judge() -> None:
    # A reflection step receives an evaluation under a heading; it does not produce one.
    facts = parse("prompts/retro/user.md", "# Task\n{{ input }}\n## Evaluation\n{{ evaluation }}\n"
                                           "Write lessons for the next attempt.\n")
    assert facts.role.role is Role.UNKNOWN


def test_the_stated_identity_of_a_refiner_beats_critique_headings() -> None:
    text = ("# Improve the reply\nYou are the **Reviser** of this loop.\n## Critique and notes\n"
            "{{ feedback }}\n## Reply\n{{ output }}\nEvaluate the response against the notes.\n")
    facts = parse("prompts/step3/system.md", text)
    assert facts.role.role is Role.GENERATOR
    assert facts.role.evidence == ["content: 'You are the **Reviser' (line 2)"]


def test_folder_names_the_step_but_project_areas_do_not() -> None:
    facts = parse("prompts/Refine/user.md", "Make {{ output }} shorter.")
    assert facts.role.role is Role.GENERATOR
    assert facts.role.evidence == ["folder name token 'refine' ('Refine/')"]
    assert parse("prompts/Judge/user.md", "{{ output }}").role.role is Role.EVALUATOR
    assert parse("evals/user.md", "{{ output }}").role.role is Role.UNKNOWN
    assert parse("evaluation/user.md", "{{ output }}").role.role is Role.UNKNOWN


def test_a_verb_that_produces_an_evaluator_artifact_is_not_a_generator() -> None:
    for name in ("generate_verdicts.txt", "generate_reason.txt", "write_feedback.md"):
        assert parse(f"prompts/{name}", "{{ output }}").role.role is Role.UNKNOWN, name
    assert parse("prompts/generate_answer.txt", "{{ input }}").role.role is Role.GENERATOR
    assert parse("prompts/refine_with_feedback.md", "x").role.role is Role.GENERATOR


@pytest.mark.parametrize(("title", "role"), [
    ("Evaluator", "evaluator"), ("Judge prompt", "evaluator"), ("Grading rubric", "evaluator"),
    ("Step 2: Judge the draft", "evaluator"), ("Step 3 — Evaluate", "evaluator"),
    ("Pipeline - Evaluate Node System Prompt", "evaluator"),
    ("Evaluation", "unknown"), ("Critique and Feedback", "unknown"),
    ('Critique Says "Done"', "unknown"), ("Evaluation Dimensions", "unknown"),
    ("Case 4: A Perspective on the Evaluation Section", "unknown"),
    ("Feedback from the judge", "unknown"), ("Evaluator feedback", "unknown"),
    ("Step 1: Generate a draft", "generator"), ("Generator output", "unknown"),
    ("Results from the solver", "unknown"),
])
def test_heading_names_a_role_only_in_so_many_words(title: str, role: str) -> None:
    from evallint.roles import heading_role

    assert heading_role(title) == role


def test_headings_inside_an_examples_section_name_no_role() -> None:
    text = ("# Writer\nWrite {{ input }}.\n## Examples\n### Judge prompt\nexample text\n"
            "## Evaluator\nreal section\n")
    facts = parse("prompts/x.md", text)
    assert [(s.title, s.role) for s in facts.sections] == [
        ("Writer", "generator"), ("Examples", "unknown"), ("Judge prompt", "unknown"),
        ("Evaluator", "evaluator")]


def test_an_activity_in_the_name_needs_the_text_to_evaluate_something() -> None:
    # A router named "verify_..." decides a conversation's state; it grades no candidate.
    router = ("You decide whether the chat is over. Reply DONE or MORE.\n"
              "{% for t in chat_history %}User: {{ t.user }}\nBot: {{ t.bot }}\n{% endfor %}")
    facts = parse("flows/verify_if_chat_is_over.j2", router)
    assert facts.role.role is Role.UNKNOWN
    assert facts.role.evidence == [
        "file name token 'verify' alone: the text never evaluates anything"]
    # The same name over a text that sets a grading task is a judge.
    facts = parse("flows/score_passage.j2", "Score the passage from 0 to 10.\n{{ passage }}")
    assert facts.role.role is Role.EVALUATOR
    assert facts.role.evidence[0] == "file name token 'score'"
    assert facts.role.evidence[1].startswith("content: 'Score the passage")
    # "Your task is to evaluate ..." sets the task; it does not report someone else's.
    facts = parse("p/eval_sql.prompty", "---\nname: x\n---\nYour task is to evaluate the query.")
    assert facts.role.role is Role.EVALUATOR


def test_a_judge_noun_that_only_qualifies_a_topic_needs_support() -> None:
    text = "<ctx>The user edits a judge. Call `load_judge` first. {{ user_name }}</ctx>"
    assert parse("app/JUDGE_SETTINGS_CONTEXT.xml.j2", text).role.role is Role.UNKNOWN
    assert parse("app/context/JUDGE_FORM.xml.j2", text).role.role is Role.UNKNOWN
    assert parse("app/judge_prompt.j2", text).role.role is Role.EVALUATOR
    assert parse("app/judge.j2", "{{ history }}").role.role is Role.EVALUATOR


def test_evaluated_subjects_are_the_head_noun_after_the_task_verb() -> None:
    from evallint.frontends.prompt_files import evaluated_subjects

    assert evaluated_subjects("Evaluate the cleaned context against the criteria.") == [
        "context", "cleaned_context"]
    assert evaluated_subjects("Assess the given snippets for clarity.") == ["snippet"]
    assert evaluated_subjects("Grade the answer given the context.") == ["answer"]
    assert evaluated_subjects("A reviewer will rate the context later.") == []
    assert evaluated_subjects("Analyze the following {{ lang }} snippet for bugs.") == ["snippet"]
    facts = parse("p/score_chunk.j2", "Evaluate the cleaned context, 0 to 10.\n{{ context }}")
    assert facts.subjects == ["context", "cleaned_context"]


@pytest.mark.parametrize(("body", "json"), [
    ('Reply:\n{"clarity": 4, "notes": "..."}', True),
    ("Respond in JSON with the keys tone and why.", True),
    ("Return a JSON object whose fields are ok and hint.", True),
    ("Respond in JSON.", False),
    ("Give a score from 1 to 10.", False),
])
def test_any_explicit_json_contract_is_marked(body: str, json: bool) -> None:
    from evallint.facts.prompt_files import JSON_KEY

    assert (JSON_KEY in parse("p/judge.md", body).contract_keys) is json


def test_a_front_matter_schema_is_a_json_contract() -> None:
    from evallint.facts.prompt_files import JSON_KEY

    text = "---\noutputs:\n  apt:\n    type: int\n---\nJudge {{ output }}."
    assert JSON_KEY in parse("p/judge.prompty", text).contract_keys


@pytest.mark.parametrize(("body", "stated"), [
    ("Return a single integer between 1 and 5. Include no other text.", True),
    ("Output only the number.", True),
    ("The number of steps is not important; reply briefly.", False),
    ("q: a\nmark: 1\nq: b\nmark: 2\nq: {{ q }}\nmark:", True),
    ("q: a\nmark: 1\nq: {{ q }}\nmark:", False),
    ("q: a\nmark:\n1\n\nq: b\nmark: \n2\nq: {{ q }}\nmark:", True),
    ("q: a\nmark:\nq: b\nmark:\nq: {{ q }}\nmark:", False),
    ("q: a\nmark: 1\nq: b\nmark: 2\nq: {{ q }}\nExplain your mark.", False),
])
def test_a_number_or_a_shown_completion_is_a_stated_format(body: str, stated: bool) -> None:
    from evallint.facts.prompt_files import FORMAT_KEY

    assert (FORMAT_KEY in parse("p/judge.md", body).contract_keys) is stated


def test_a_schema_named_in_front_matter_is_a_json_contract() -> None:
    from evallint.facts.prompt_files import JSON_KEY

    text = "---\noutput:\n  schema: Review\n---\nYou are a judge. Judge {{ output }}."
    assert JSON_KEY in parse("p/judge.prompt", text).contract_keys
    text = "---\noutput:\n  format: text\n---\nYou are a judge. Judge {{ output }}."
    assert JSON_KEY not in parse("p/judge.prompt", text).contract_keys


# VS Code and Claude Code read a prompt file's header as ``key: value`` lines; the OpenSpec
# generator writes headers such as this one, which strict YAML refuses (": " inside a value).
LENIENT_HEADER = """---
description: Review: grade the draft
mode: agent
role: evaluator
tools:
  - read
---
Score this answer.
<answer>{{ answer }}</answer>
Earlier attempts: {{ intermediate_steps }}
"""


def test_a_prompt_file_header_yaml_refuses_is_read_as_key_value_lines() -> None:
    facts = parse("prompts/review.prompt.md", LENIENT_HEADER)
    assert facts.front_matter == {"description": "Review: grade the draft", "mode": "agent",
                                  "role": "evaluator", "tools": ["read"]}
    assert facts.front_matter_lines == {"description": 2, "mode": 3, "role": 4, "tools": 5}
    assert facts.role.role is Role.EVALUATOR and facts.role.explicit
    assert [v.name for v in facts.template.variables] == ["answer", "intermediate_steps"]
    assert facts.template.variables[1].pos.line == 10  # body positions are file positions


def test_the_leniently_read_header_feeds_the_rules(tmp_path: Path) -> None:
    """The role it declares counts: its evaluator prompt shows the generator's steps."""
    write_files(tmp_path, {"prompts/review.prompt.md": LENIENT_HEADER})
    found = lint_tree(tmp_path, {"EL102", "EL901"}).findings
    assert [(f.code, f.line) for f in found] == [("EL102", 10)]


@pytest.mark.parametrize(("rel", "header"), [
    ("prompts/review.prompt.md", "name: judge\ntools: [read, write\n"),  # an unclosed list
    ("prompts/review.prompt.md", "[not, closed\n"),  # no key at a line's start
    ("prompts/review.prompty", "name: Review: Grade\n"),  # Prompty loads strict YAML
    ("prompts/review.prompt", "model: x: y\n"),  # so does Dotprompt
])
def test_headers_no_reading_can_follow_stay_parse_errors(rel: str, header: str) -> None:
    with pytest.raises(ParseError):
        parse(rel, f"---\n{header}---\nScore {{{{ answer }}}}.\n")


@pytest.mark.parametrize(("header", "body", "dialect"), [
    # mustache sections, no Jinja statement: what Azure AI Inference's loader renders
    ("name: chat\n", "{{#documents}}\n## {{title}}\n{{content}}\n{{/documents}}\n{{question}}\n",
     "mustache"),
    ("name: chat\ntemplate: mustache\n", "Answer {{question}}.\n", "mustache"),
    ("name: chat\ntemplate:\n  type: mustache\n", "Answer {{question}}.\n", "mustache"),
    ("name: chat\n", "Answer {{ question }}.\n", "jinja"),  # Prompty's default
    ("name: chat\n", "{# notes #}{% for d in documents %}{{ d }}{% endfor %}\n", "jinja"),
])
def test_a_prompty_file_renders_jinja_unless_it_says_or_shows_mustache(
        header: str, body: str, dialect: str) -> None:
    facts = parse("assets/chat.prompty", f"---\n{header}---\n{body}")
    assert facts.template.dialect == dialect


def test_a_prompty_file_with_mustache_sections_is_no_parse_error() -> None:
    facts = parse("assets/chat.prompty",
                  "---\nname: chat\n---\nsystem:\nUse these.\n{{#documents}}\n{{content}}\n"
                  "{{/documents}}\nuser:\n{{question}}\n")
    assert {v.name for v in facts.template.variables} >= {"documents", "question"}
