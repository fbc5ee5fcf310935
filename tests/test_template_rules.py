"""Template rules beyond their YAML examples: positions, attribution, includes, notes, evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from evallint.checks.templates import signal_in
from evallint.findings import Severity
from tests.conftest import lint_tree, write_files

SIGNALS = ["steps", "intermediate_*", "context", "draft*", "system_prompt", "generator*"]


def test_signals_match_tokens_and_prefixes_never_substrings() -> None:
    assert signal_in("reasoning_steps", SIGNALS) == "steps"
    assert signal_in("intermediate_results", SIGNALS) == "intermediate_*"
    assert signal_in("retrievedContext", SIGNALS) == "context"
    assert signal_in("prev_drafts", SIGNALS) == "draft*"
    assert signal_in("generator", SIGNALS) == "generator*"
    for name in ("contextual_hint", "stepsize", "intermediate", "systemprompt", "output"):
        assert signal_in(name, SIGNALS) is None, name
    assert signal_in("plan", [], exact=["plan"]) == "plan"
    assert signal_in("meal_plan", [], exact=["plan"]) is None


def test_loop_attribution_is_reported_once_at_the_loop(tmp_path: Path) -> None:
    write_files(tmp_path, {"prompts/judge.j2": (
        "<output>{{ output }}</output>\n"
        "{% for s in intermediate_steps %}{{ s.text }}{{ s.tool }}{% endfor %}\n")})
    hits = lint_tree(tmp_path, {"EL102"}).findings
    assert [(f.line, f.column) for f in hits] == [(2, 13)]
    assert hits[0].evidence == ["file name token 'judge'"]


def test_attribute_path_names_the_whole_path_and_the_alias(tmp_path: Path) -> None:
    write_files(tmp_path, {"prompts/evaluator.j2": (
        "{% set g = run %}\n<output>{{ run.output }}</output>\n{{ g.generator.scratchpad }}\n")})
    hits = lint_tree(tmp_path, {"EL102"}).findings
    assert len(hits) == 1
    assert (hits[0].line, hits[0].column) == (3, 4)
    assert "run.generator.scratchpad" in hits[0].message and "'g'" in hits[0].message


def test_include_chain_reports_at_the_include_with_the_partial_related(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "prompts/judge.j2": "<output>{{ output }}</output>\n  {% include 'parts/a.j2' %}\n",
        "prompts/parts/a.j2": "{% include 'b.j2' %}\n",
        "prompts/parts/b.j2": "\n{{ transcript }}\n",
    })
    hits = lint_tree(tmp_path, {"EL102"}).findings
    assert [(f.path, f.line, f.column) for f in hits] == [("prompts/judge.j2", 2, 6)]
    rel = hits[0].related[0]
    assert (rel.path, rel.line, rel.column) == ("prompts/parts/b.j2", 2, 4)


def test_include_of_an_evaluator_partial_is_not_double_reported(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "prompts/judge.j2": "<output>{{ output }}</output>{% include 'judge_parts.j2' %}",
        "prompts/judge_parts.j2": "{{ history }}",
    })
    hits = lint_tree(tmp_path, {"EL102"}).findings
    assert [f.path for f in hits] == ["prompts/judge_parts.j2"]


def test_legitimate_declaration_in_config_turns_error_into_note(tmp_path: Path) -> None:
    write_files(tmp_path, {"prompts/judge.j2": "<c>{{ context }}</c><o>{{ output }}</o>"})
    config = {"legitimate": [{"paths": ["prompts/*"], "inputs": ["context"],
                              "reason": "faithfulness needs the passages"}]}
    hits = lint_tree(tmp_path, {"EL102"}, config).findings
    assert [(f.severity, f.code) for f in hits] == [(Severity.NOTE, "EL102")]
    assert "faithfulness needs the passages" in hits[0].message


def test_generator_role_from_front_matter_overrides_a_judge_file_name(tmp_path: Path) -> None:
    write_files(tmp_path, {"prompts/judge_helper.prompt.md":
                           "---\nstep: generator\n---\n{{ steps }} {{ system_prompt }}"})
    assert lint_tree(tmp_path, {"EL102", "EL103"}).findings == []


def test_config_roles_make_any_file_an_evaluator(tmp_path: Path) -> None:
    write_files(tmp_path, {"templates/step2.j2": "{{ reasoning }}"})
    hits = lint_tree(tmp_path, {"EL102"}, {"roles": {"templates/step2.j2": "evaluator"}}).findings
    assert [f.code for f in hits] == ["EL102"]
    assert hits[0].evidence == ["config roles: 'templates/step2.j2' = evaluator"]


def test_unknown_role_files_are_not_checked(tmp_path: Path) -> None:
    write_files(tmp_path, {"prompts/summary.j2": "{{ chat_history }} {{ output }}"})
    assert lint_tree(tmp_path, {"EL102", "EL103", "EL105", "EL601"}).findings == []


def test_el105_reports_every_bare_interpolation(tmp_path: Path) -> None:
    text = "Is {{ output }} right?\n<o>{{ output }}</o>\nThen {{ output }} again"
    write_files(tmp_path, {"prompts/judge.j2": text})
    hits = lint_tree(tmp_path, {"EL105"}).findings
    assert [(f.line, f.column) for f in hits] == [(1, 7), (3, 9)]


def test_contract_partials_are_not_judged_alone(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "prompts/judge.hbs": "<o>{{output}}</o>{{> judge_footer}}",
        "prompts/judge_footer.hbs": 'Reply {"score": 1, "feedback": "x"}',
        "prompts/partials/rubric.j2": "Accuracy matters.",
    })
    assert lint_tree(tmp_path, {"EL601"}).findings == []


def test_model_pairing_names_both_ends(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "loop/generator.prompt.md": "---\nstep: generator\nmodel: claude-opus-4-1\n---\nx\n",
        "loop/evaluator.prompt.md": "---\nstep: evaluator\n\nmodel: claude-opus-4-1\n---\nx\n",
    })
    hits = lint_tree(tmp_path, {"EL301", "EL302"}).findings
    assert [(f.code, f.path, f.line) for f in hits] == [("EL301", "loop/evaluator.prompt.md", 4)]
    assert "loop/generator.prompt.md" in hits[0].message
    assert (hits[0].related[0].path, hits[0].related[0].line) == ("loop/generator.prompt.md", 3)


def test_merged_file_related_points_at_the_generator_heading(tmp_path: Path) -> None:
    write_files(tmp_path, {"prompts/both.md": "intro\n## Writer\nx\n## Judge\ny\n"})
    hits = lint_tree(tmp_path, {"EL101"}).findings
    assert [(f.line, f.related[0].line) for f in hits] == [(4, 2)]


def test_fixture_clean_templates_only_notes() -> None:
    root = Path(__file__).resolve().parents[1]
    result = lint_tree(root, paths=["fixtures/clean/templates"])
    assert {f.severity for f in result.findings} <= {Severity.NOTE}
    assert not result.tool_errors


def test_the_graded_item_named_context_is_not_generator_context(tmp_path: Path) -> None:
    write_files(tmp_path, {"prompts/score_chunk.j2": (
        "Evaluate the cleaned context for depth, from 0 to 10.\n"
        'Return {"score": 1, "reason": "..."}\n'
        "Write it {{ context }} inline.\n"
        "Sources: {{ retrieved_context }}\n")})
    hits = lint_tree(tmp_path, {"EL102", "EL103", "EL105"}).findings
    # The graded item is checked like the output (EL105), never as generator context; a
    # qualified context beside it still is.
    assert [(f.code, f.line) for f in hits] == [("EL105", 3), ("EL102", 4)]


def test_el105_is_a_note_by_default(tmp_path: Path) -> None:
    write_files(tmp_path, {"prompts/judge.j2": "Is {{ output }} right?"})
    hits = lint_tree(tmp_path, {"EL105"}).findings
    assert [h.severity for h in hits] == [Severity.NOTE]


def test_el601_accepts_custom_json_keys_but_not_prose(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "prompts/a/judge.j2": 'Judge <o>{{ output }}</o>. Reply {"apt": 1, "why": "..."}',
        "prompts/b/judge.j2": "Judge <o>{{ output }}</o>. Give a mark and say why.",
    })
    hits = lint_tree(tmp_path, {"EL601"}).findings
    assert [h.path for h in hits] == ["prompts/b/judge.j2"]


def test_a_label_that_says_its_value_is_judged_makes_it_the_subject(tmp_path: Path) -> None:
    write_files(tmp_path, {"prompts/judge.j2": (
        "You are a judge of agent actions.\n"
        'Reply {"score": 1, "reason": "..."}\n'
        "ACTIONS TO BE EVALUATED: {{ tool_calls }}\n"
        "Earlier turns: {{ tool_results }}\n")})
    hits = lint_tree(tmp_path, {"EL102"}).findings
    assert [(f.line, "tool_results" in f.message) for f in hits] == [(4, True)]


# What a judge of a retrieval or agent step is given to grade: its own words decide (issue:
# the built-in judges of an evaluation SDK were reported for the very input they grade).
_HEAD = "---\nstep: evaluator\n---\n"


def _codes(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    write_files(tmp_path, {"prompts/judge.prompt.md": _HEAD + text})
    return [(f.code, f.message.split("'")[1]) for f in
            lint_tree(tmp_path, {"EL102", "EL103"}).findings]


def test_the_reference_a_grounding_judge_checks_against_is_not_generator_context(
        tmp_path: Path) -> None:
    grounded = ("Rate from 1 to 5 how well the reply stays anchored in the provided context.\n"
                "The context is the source of truth.\nContext: {{ context }}\n"
                "Reply: <output>{{ output }}</output>\n")
    assert _codes(tmp_path / "a", grounded) == [("EL103", "context")]
    plain = ("Rate the reply from 1 to 5.\nContext: {{ context }}\n"
             "Reply: <output>{{ output }}</output>\n")
    assert _codes(tmp_path / "b", plain) == [("EL102", "context")]


def test_a_judge_of_each_tool_call_grades_the_tool_calls(tmp_path: Path) -> None:
    judged = ("You are a judge of agent runs who assesses **each tool call made by the agent** "
              "and says whether it failed.\nTOOL CALLS: {{ tool_calls }}\n")
    assert _codes(tmp_path / "a", judged) == []
    other = ("You are a judge who scores the final reply.\nTOOL CALLS: {{ tool_calls }}\n"
             "Reply: <output>{{ output }}</output>\n")
    assert _codes(tmp_path / "b", other) == [("EL102", "tool_calls")]


def test_a_list_of_chunks_under_evaluation_is_the_graded_item(tmp_path: Path) -> None:
    judged = ("You are an expert in evaluating the quality of a list of CONTEXT chunks for a "
              "query.\nQuery: {{ input }}\nChunks: {{ context }}\n")
    assert _codes(tmp_path, judged) == []


def test_a_judge_of_the_whole_conversation_reads_the_transcript(tmp_path: Path) -> None:
    whole = ("Score the conversation-level coherence of the assistant from 1 to 5.\n"
             "CONVERSATION: {{ messages }}\n")
    assert _codes(tmp_path / "a", whole) == []
    last = ("Score the assistant's last reply from 1 to 5.\nCONVERSATION: {{ messages }}\n"
            "Reply: <output>{{ output }}</output>\n")
    assert _codes(tmp_path / "b", last) == [("EL102", "messages")]


# Each cue beside the same prompt without it: what the judge is told it grades or grades
# against is not generator context (EL102); without the cue it still is.
_GRADED_CUES = [
    pytest.param("You are an expert in evaluating tool selection by an agent.\n"
                 'ONLY evaluate the selections in the "TOOL CALLS MADE BY AGENT" section.\n'
                 "QUERY: {{ input }}\nTOOL CALLS MADE BY AGENT: {{ tool_calls }}\n", [],
                 id="the section a task names holds the graded item"),
    pytest.param("Rate the final reply from 1 to 5.\n"
                 'Read the "TOOL CALLS" section for context only.\n'
                 "TOOL CALLS: {{ tool_calls }}\nReply: <output>{{ output }}</output>\n",
                 [("EL102", "tool_calls")], id="a section named for context only"),
    pytest.param("Rate from 1 to 5 the groundedness of a draft against a source document.\n"
                 "### SOURCE INFORMATION\n{{ context }}\n### DRAFT\n"
                 "<output>{{ output }}</output>\n", [("EL103", "context")],
                 id="a label naming the reference the task judges against"),
    pytest.param("Rate the draft from 1 to 5.\n### SOURCE INFORMATION\n{{ context }}\n"
                 "### DRAFT\n<output>{{ output }}</output>\n", [("EL102", "context")],
                 id="the same label with no reference named by the task"),
    pytest.param("There is a conversation between a user (customer) and an AI assistant.\n"
                 "Rate from 1 to 5 whether the responses resolve the user's query.\n\n"
                 "Task data.\n[Conversation]: {{ conversation }}\n", [],
                 id="a transcript framed as the user's exchange with the assistant"),
    pytest.param("There is a conversation between the planner and the coder.\n"
                 "Rate from 1 to 5 whether the final reply resolves the query.\n\n"
                 "Task data.\n[Conversation]: {{ conversation }}\n"
                 "Reply: <output>{{ output }}</output>\n", [("EL102", "conversation")],
                 id="a conversation among the agent's workers"),
    pytest.param("Evaluate whether the tools used by the agent were the right ones for the "
                 "request. Score it from 0 to 1.\nRequest: {{ input }}\n"
                 "Agent steps:\n{{ steps_taken }}\n", [],
                 id="a judge of the agent's tool choices grades its steps"),
    pytest.param("You are an evaluator assessing the **Tool Argument Quality** of an AI "
                 "agent. Score it from 0 to 1.\nRequest: {{ input }}\n"
                 "Assistant messages:\n{{ assistant_messages }}\n", [],
                 id="a judge of the arguments an agent passed reads its messages"),
    pytest.param("Evaluate whether the agent's final answer solves the request. Score it "
                 "from 0 to 1.\nRequest: {{ input }}\nAnswer: <output>{{ output }}</output>\n"
                 "Agent steps:\n{{ steps_taken }}\n", [("EL102", "steps_taken")],
                 id="a judge of the answer that is shown the steps"),
    pytest.param("Evaluate whether the answer is right. The agent had tools to look it up.\n"
                 "Request: {{ input }}\nAnswer: <output>{{ output }}</output>\n"
                 "Agent steps:\n{{ steps_taken }}\n", [("EL102", "steps_taken")],
                 id="tools named outside the sentence that sets the task"),
]


@pytest.mark.parametrize(("text", "want"), _GRADED_CUES)
def test_what_a_judge_is_told_it_grades(tmp_path: Path, text: str,
                                        want: list[tuple[str, str]]) -> None:
    assert _codes(tmp_path, text) == want


def test_the_criteria_a_judge_is_told_to_evaluate_by_are_not_the_candidate(
        tmp_path: Path) -> None:
    write_files(tmp_path, {"prompts/judge.prompt.md": _HEAD + (
        "You need to evaluate the following criteria:\n{{ criteria }}\n"
        "Reply: <output>{{ output }}</output>\n")})
    assert [f.code for f in lint_tree(tmp_path, {"EL102", "EL103", "EL105"}).findings] == []


def test_the_references_a_prompt_names_are_whole_words() -> None:
    from evallint.frontends.prompt_files import reference_names

    text = ("Decide whether the ANSWER is entailed by the CONTEXT. Ground truth aside, the "
            "documents are the source of truth. Judge it based on their relevance and on "
            "these criteria; a reply anchored in the provided passages scores higher.")
    assert reference_names(text) == ["context", "document", "passage"]
    # after a grounding verb only retrieval material is a reference, never the steps
    assert reference_names("Score the answer based on the reasoning steps shown.") == []
