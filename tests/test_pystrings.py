"""Prompt templates held in Python strings: which strings, which variables, which positions."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from evallint.facts import Pos
from evallint.frontends.pystrings import (
    PyPromptFacts,
    find_templates,
    may_hold_templates,
    prompt_module,
)
from tests.conftest import lint_tree, write_files


def _templates(code: str) -> list[PyPromptFacts]:
    return find_templates(ast.parse(code), code, "m.py", lambda line, col: Pos(line, col + 1))


def _at(code: str, prompt: PyPromptFacts) -> dict[str, str]:
    """Each variable and the source text at its reported position (must start with its name)."""
    lines = code.split("\n")
    out: dict[str, str] = {}
    for var in prompt.template.variables:
        line = lines[var.pos.line - 1]
        out[var.name] = line[var.pos.column - 1:var.pos.column - 1 + len(var.name)]
    return out


def test_positions_survive_concatenation_escapes_raw_and_triple_quotes() -> None:
    code = (
        'JUDGE_PROMPT = ("You are a strict judge.\\tScore the answer from 1 to 10.\\n"\n'
        "                'Escapes: \\x41\\u00e9 {{\"score\": 1}} then {plan}\\n'  # note\n"
        '                r"Raw \\n text {steps}"\n'
        '                """\n'
        "Triple: é {chain_of_thought.text}\n"
        '""")\n'
    )
    [prompt] = _templates(code)
    assert prompt.role.is_evaluator
    found = _at(code, prompt)
    assert found == {n: n for n in ("plan", "steps", "chain_of_thought")}
    cot = next(v for v in prompt.template.variables if v.name == "chain_of_thought")
    assert cot.path == ("chain_of_thought", "text")
    assert (cot.pos.line, cot.pos.column) == (5, 12)  # characters, not UTF-8 bytes


def test_fstring_fields_point_at_their_names_and_escaped_braces_are_text() -> None:
    code = (
        "def judge_it(answer, plan, steps):\n"
        '    prompt = f"You are a judge. Grade the answer below from 1 to 10.\\n'
        "Answer: {answer}\\nPlan: {plan['text']} then {show(steps)} {{x}}\"\n"
        "    return prompt\n"
    )
    [prompt] = _templates(code)
    assert _at(code, prompt) == {"answer": "answer", "plan": "plan", "steps": "steps"}
    plan = next(v for v in prompt.template.variables if v.name == "plan")
    assert plan.path == ("plan", "text")
    answer = next(v for v in prompt.template.variables if v.name == "answer")
    assert answer.delimited  # "Answer: {answer}" alone on its line after a label


def test_dollar_percent_and_jinja_dialects_follow_the_use() -> None:
    code = (
        "import string\n"
        "from jinja2 import Template\n"
        'EVAL_TMPL = string.Template("You are a grader. Grade the answer: $answer with '
        '${history} for $$5")\n'
        'GRADER_PROMPT = "You are a grader. Evaluate the response %(response)s against '
        '%(reasoning)s with care." % {}\n'
        'CRITIC = Template("You are a critic. Critique the response.\\n'
        '{{ intermediate_steps }}\\n<output>{{ output }}</output>")\n'
    )
    by_name = {p.name: p for p in _templates(code)}
    assert {v.name for v in by_name["EVAL_TMPL"].template.variables} == {"answer", "history"}
    assert _at(code, by_name["EVAL_TMPL"]) == {"answer": "answer", "history": "history"}
    assert _at(code, by_name["GRADER_PROMPT"]) == {"response": "response",
                                                   "reasoning": "reasoning"}
    critic = by_name["CRITIC"]
    assert critic.template.dialect == "jinja"
    out = next(v for v in critic.template.variables if v.name == "output")
    assert out.delimited


def test_strings_that_are_not_prompts_never_become_prompts() -> None:
    code = (
        "import logging\n"
        "RUNS_QUERY_TEMPLATE = \"SELECT id FROM runs WHERE rubric = '{rubric}' AND s = {plan}\"\n"
        'LOG_TEMPLATE = "%(asctime)s %(levelname)s %(message)s"\n'
        'REPORT_URL_TEMPLATE = "https://example.org/runs/{run_id}/steps/{steps}"\n'
        'PAGE_TEMPLATE = "<html><h1>{title}</h1><p>{chain_of_thought}</p></html>"\n'
        'GENERATE_RUBRIC_PROMPT = "Write a grading rubric for the task below: {task} and more"\n'
        "logging.basicConfig(format=LOG_TEMPLATE)\n"
    )
    assert _templates(code) == []


def test_a_generator_name_never_outweighs_a_text_that_grades() -> None:
    code = ('ABSOLUTE_REFINE_PROMPT = """Write a detailed feedback and a score from 1 to 5.\n'
            "###Response to evaluate:\n{response}\n###Score rubric:\n{score_rubric}\n\"\"\"\n")
    assert _templates(code) == []


def test_conversation_reads_as_one_prompt_and_data_messages_delimit() -> None:
    code = (
        "def grade(client, task, answer, notes):\n"
        "    return client.chat.completions.create(model='m', messages=[\n"
        "        {'role': 'system', 'content': 'You are a grader. Score the answer from 1 to "
        "10.'},\n"
        "        {'role': 'user', 'content': f'{task}\\n{answer}\\n{notes}'},\n"
        "    ])\n"
    )
    [prompt] = _templates(code)
    assert prompt.role.is_evaluator
    assert all(v.delimited for v in prompt.template.variables)
    assert _at(code, prompt) == {"task": "task", "answer": "answer", "notes": "notes"}


def test_prefilter_wants_a_template_shape_and_a_word_a_rule_can_use() -> None:
    assert may_hold_templates("JUDGE_PROMPT = '...'")
    assert may_hold_templates("PROMPT = 'Rate the answer from 1 to 5: {answer}'")
    assert may_hold_templates("    prompt = f'You are a reviewer: {x}'")
    assert may_hold_templates("class A(dspy.Signature):\n    q = dspy.InputField()  # score")
    assert not may_hold_templates("SQL_TEMPLATE = 'SELECT id FROM runs WHERE id = {id}'")
    assert not may_hold_templates("def add(a, b):\n    return a + b  # judge\n")
    # a module without LLM words is parsed for templates only on a prompt-specific shape
    assert prompt_module("CHECK_PROMPT = 'You are a reviewer. {answer}'")
    assert not prompt_module("TEMPLATES = [{'score': '{x}'}]\ntemplate = 'review {x}'")


def test_end_to_end_findings_in_a_module_and_a_notebook(tmp_path: Path) -> None:
    module = ('WRITER_PROMPT = """You are a careful writer. Answer in three sentences.\n'
              'Task: {task}\n"""\n\n'
              'JUDGE_PROMPT = """You are a strict judge. Score the answer from 1 to 10.\n'
              "<task>{task}</task>\n<answer>{answer}</answer>\nPlan: {plan}\n\"\"\"\n")
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
            "source": ["x = 1\n", 'CHECK_PROMPT = "You are a judge. Score the answer 1-5. '
                       'Steps: {steps}"\n']}
    notebook = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# t"]}, cell],
                "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
                "nbformat": 4, "nbformat_minor": 5}
    write_files(tmp_path, {"prompts.py": module, "check.ipynb": json.dumps(notebook)})
    hits = lint_tree(tmp_path, {"EL101", "EL102"}).findings
    got = sorted((f.path, f.cell, f.line, f.column, f.code) for f in hits)
    assert got == [
        ("check.ipynb", 1, 2, 64, "EL102"),
        ("prompts.py", None, 5, 16, "EL101"),
        ("prompts.py", None, 8, 8, "EL102"),
    ]
    merged = next(f for f in hits if f.code == "EL101")
    assert merged.severity.value == "warning"
    assert [(r.line, r.column) for r in merged.related] == [(1, 17)]


def test_python_module_rule_can_be_switched_off(tmp_path: Path) -> None:
    module = ('WRITER_PROMPT = "You are a careful writer. Answer the task in full: {task}"\n'
              'JUDGE_PROMPT = "You are a strict judge. Score the answer from 1 to 10: '
              '<answer>{answer}</answer>"\n')
    write_files(tmp_path, {"prompts.py": module})
    assert len(lint_tree(tmp_path, {"EL101"}).findings) == 1
    off = {"rules": {"EL101": {"python_modules": "off"}}}
    assert lint_tree(tmp_path, {"EL101"}, config=off).findings == []


def test_a_label_says_what_is_judged_but_never_hides_generator_context(tmp_path: Path) -> None:
    module = (
        "def grade(client, task, draft, previous_answer, essay):\n"
        "    return client.chat.completions.create(model='m', messages=[\n"
        "        {'role': 'system', 'content': 'You are a grader. Evaluate the depth of the "
        "following essay and score the answer from 1 to 10.'},\n"
        "        {'role': 'user', 'content': f'Answer:\\n{draft}\\n"
        "Previous answer: {previous_answer}\\nEssay:\\n{essay}'},\n"
        "    ])\n"
    )
    write_files(tmp_path, {"grade.py": module})
    hits = lint_tree(tmp_path, {"EL102", "EL103", "EL105"}).findings
    # 'draft' under "Answer:" is the candidate; 'essay' is what the task evaluates; the
    # previous answer stays the generator's earlier attempt
    assert [(f.code, f.line, f.message.split("'")[1]) for f in hits] == [
        ("EL102", 4, "previous_answer")]


def test_a_function_name_alone_makes_no_judge_of_a_text_that_scores_nothing() -> None:
    code = (
        "def assess_severity(llm, disaster_type, weather):\n"
        "    prompt = f'Given the disaster type {disaster_type} and the weather {weather}, '\n"
        "    prompt += 'assess the severity level. Respond with Critical, High or Low.'\n"
        "    return llm.invoke(prompt)\n"
        "def assess_essay(llm, essay):\n"
        "    prompt = f'Assess the argument of the essay below and give a score from 1 to 5."
        "\\nEssay: {essay}'\n"
        "    return llm.invoke(prompt)\n"
    )
    [prompt] = _templates(code)
    assert prompt.name == "prompt" and prompt.role.is_evaluator and prompt.by_scope
    assert prompt.role.evidence[0] == "in function 'assess_essay' (token 'assess')"


def test_prefix_signals_survive_the_plural_rule() -> None:
    """``previous_*`` once never matched: the name's tokens are singularised ("previou")."""
    from evallint.checks.templates import signal_in

    assert signal_in("previous_answer", ["previous_*"]) == "previous_*"
    assert signal_in("prior_outputs", ["prior_*"]) == "prior_*"
    assert signal_in("previously", ["previous_*"]) is None


def test_a_function_named_for_a_prompt_returns_its_template() -> None:
    code = (
        "from textwrap import dedent\n"
        "def build_judge_prompt(answer, plan):\n"
        '    return dedent(f"""\\\n'
        "        You are a strict judge. Score the answer from 1 to 10.\n"
        "        Plan: {plan}\n"
        '        """)\n'
        "def render(answer):\n"
        '    return f"You are a strict judge. Score {answer} from 1 to 10 with care."\n'
    )
    [prompt] = _templates(code)
    assert prompt.name == "build_judge_prompt" and prompt.role.is_evaluator
    assert _at(code, prompt) == {"plan": "plan"}


def test_el103_reads_python_strings_only_when_asked(tmp_path: Path) -> None:
    module = ('JUDGE_PROMPT = "You are a strict judge. Score the answer from 1 to 5.\\n'
              '<answer>{answer}</answer>\\n<notes>{model_name}</notes>"\n')
    write_files(tmp_path, {"judge.py": module})
    assert lint_tree(tmp_path, {"EL103"}).findings == []
    on = {"rules": {"EL103": {"python_strings": True}}}
    hits = lint_tree(tmp_path, {"EL103"}, config=on).findings
    assert [(f.line, f.column) for f in hits] == [(1, 107)]


def test_a_field_that_only_measures_a_value_does_not_render_it(tmp_path: Path) -> None:
    """``{len(history)}`` shows a count: the judge never sees the history itself."""
    write_files(tmp_path, {"judge.py": (
        "from openai import OpenAI\n\nclient = OpenAI()\n\n\n"
        "def grade(response, history):\n"
        '    prompt = f"""You are a judge. Score the response from 1 to 10.\n'
        "<response>{response}</response>\n"
        'History length: {len(history)} messages"""\n'
        "    return client.chat.completions.create(model='gpt-4o-mini', messages=[\n"
        "        {'role': 'user', 'content': prompt}])\n")})
    found = [f for f in lint_tree(tmp_path, {"EL102"}).findings]
    assert found == []
    (tmp_path / "judge.py").write_text((tmp_path / "judge.py").read_text().replace(
        "{len(history)} messages", "{history}"))
    assert [f.code for f in lint_tree(tmp_path, {"EL102"}).findings] == ["EL102"]


def test_a_judge_noun_in_a_constant_name_needs_the_text_to_evaluate(tmp_path: Path) -> None:
    """A user simulator kept as ``*_EVALUATOR_PROMPT`` evaluates nothing: no judge, so the
    conversation it renders is no EL102; the same name over a grading text is a judge."""
    sim = ('ASSISTANT_EVALUATOR_PROMPT = """You play a user talking to a chatbot.\n'
           "Here is the conversation so far:\n{conversation}\n"
           'Reply with the next message this user would send."""\n')
    write_files(tmp_path, {"sim.py": sim})
    assert lint_tree(tmp_path, {"EL102"}).findings == []
    (tmp_path / "sim.py").write_text(sim.replace(
        "Reply with the next message this user would send.",
        "Score the response from 1 to 10.\n<response>{response}</response>"))
    assert [f.code for f in lint_tree(tmp_path, {"EL102"}).findings] == ["EL102"]


def test_a_python_judge_reads_the_users_earlier_turns_but_not_an_agents_history(
        tmp_path: Path) -> None:
    """The history under "the user's conversation" is a multi-turn judge's input; the same
    variable under a plain "History:" label is the generator's context (EL102)."""
    judge = (
        'TURN_JUDGE_PROMPT = """You are a strict judge. Score the last reply from 1 to 5.\n'
        "Conversation between the user and the assistant:\n"
        "{history}\n"
        'Last reply: <reply>{output}</reply>"""\n'
    )
    write_files(tmp_path, {"grading/prompts.py": judge})
    assert lint_tree(tmp_path, {"EL102"}).findings == []
    write_files(tmp_path, {"grading/prompts.py": judge.replace(
        "Conversation between the user and the assistant:", "Agent history:")})
    hits = lint_tree(tmp_path, {"EL102"}).findings
    assert [(f.code, f.line) for f in hits] == [("EL102", 3)]


def test_a_graph_state_entry_under_a_candidate_label_is_the_graded_item(tmp_path: Path) -> None:
    """An evaluator-optimizer node renders ``state['response_draft']`` under "Generated
    Response:" and a ``---`` rule: the draft in hand is what the judge grades; the earlier
    drafts are not."""
    module = (
        "def evaluate(state, llm):\n"
        "    prompt = f'''Evaluate the following response to the customer on its tone.\n"
        "Customer message:\n---\n{state['message']}\n---\n"
        "Generated Response:\n---\n{state['response_draft']}\n---\n"
        "Earlier attempts:\n{state['previous_drafts']}\n"
        "Score it from 1 to 5.'''\n"
        "    return llm.invoke(prompt)\n"
    )
    write_files(tmp_path, {"graph.py": module})
    hits = lint_tree(tmp_path, {"EL102"}).findings
    assert [(f.line, f.message.split("'")[1]) for f in hits] == [
        (12, "state.previous_drafts")]
