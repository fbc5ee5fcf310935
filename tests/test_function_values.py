"""Functions given as values: an evaluation harness's task and scorers (braintrust, evalite,
LangSmith), scorers made by a project factory over a model parameter, a closure a factory
returns and a module calls, and a function picked from a table of functions. The harness's
structure, not a name, makes the roles (each shape has a variant that must stay clean)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from evallint.frontends import scriptparse
from evallint.frontends.scriptlower import lower
from evallint.pyflow.cues import makes_judge
from evallint.pyflow.providers import CAT
from tests.conftest import lint_tree, write_files


def _codes(tmp_path: Path, codes: set[str]) -> list[tuple[str, str, int]]:
    result = lint_tree(tmp_path, codes)
    return sorted((f.code, f.path, f.line) for f in result.findings)


# A scorer named like a writer is still the harness's scorer: structure outranks the name.
BRAINTRUST_NAMES_MISLEAD = """\
from braintrust import EvalAsync
import anthropic

llm = anthropic.Anthropic()


def grade_ticket(ticket):
    m = llm.messages.create(model="claude-opus-4-1", max_tokens=300,
                            messages=[{"role": "user", "content": ticket}])
    return m.content[0].text


def write_summary(input, output, expected=None):
    m = llm.messages.create(model="MODEL", max_tokens=5,
                            messages=[{"role": "user", "content": f"0 or 1? <r>{output}</r>"}])
    return int(m.content[0].text.strip() == "1")


EvalAsync("tickets", data=lambda: [{"input": "refund"}], task=grade_ticket,
          scores=[write_summary])
"""


@pytest.mark.parametrize(("scorer_model", "flagged"), [("claude-opus-4-1", True),
                                                       ("claude-haiku-4-5", False)])
def test_a_harness_scorer_is_an_evaluator_whatever_its_name(tmp_path: Path, scorer_model: str,
                                                            flagged: bool) -> None:
    write_files(tmp_path, {"qa/bt_tickets.py": BRAINTRUST_NAMES_MISLEAD.replace(
        "MODEL", scorer_model)})
    found = _codes(tmp_path, {"EL301"})
    assert found == ([("EL301", "qa/bt_tickets.py", 14)] if flagged else [])


FACTORY_SCORER = """\
from braintrust import Eval
from openai import OpenAI

oai = OpenAI()


def solve(problem: str) -> str:
    r = oai.chat.completions.create(model="gpt-4.1",
                                    messages=[{"role": "user", "content": problem}])
    return r.choices[0].message.content


def rater_for(which: str):
    def rate(input, output, expected=None):
        r = oai.chat.completions.create(
            model=which,
            messages=[{"role": "user", "content": f"1 if <a>{output}</a> solves {input}, else 0"}])
        return int(r.choices[0].message.content)
    return rate


Eval("math", data=lambda: [{"input": "2+2"}], task=lambda input: solve(input),
     scores=[rater_for("JUDGE")])
"""


@pytest.mark.parametrize(("judge", "flagged"), [("gpt-4.1", True), ("o4-mini", False)])
def test_a_scorer_made_by_a_factory_runs_on_the_model_the_factory_was_given(
        tmp_path: Path, judge: str, flagged: bool) -> None:
    write_files(tmp_path, {"evals/math_eval.py": FACTORY_SCORER.replace("JUDGE", judge)})
    found = _codes(tmp_path, {"EL301"})
    assert found == ([("EL301", "evals/math_eval.py", 22)] if flagged else [])


CLOSURE_TS = """\
import Anthropic from "@anthropic-ai/sdk";

const claude = new Anthropic();

async function compose(brief: string): Promise<string> {
  const m = await claude.messages.create({ model: "claude-sonnet-4-5", max_tokens: 800,
    messages: [{ role: "user", content: `Write a cover letter: ${brief}` }] });
  return m.content[0].type === "text" ? m.content[0].text : "";
}

function examinerOn(model: string) {
  return async (letter: string) => {
    const m = await claude.messages.create({ model, max_tokens: 10,
      messages: [{ role: "user",
                   content: `Score this letter from 1 to 10.\\n<l>${letter}</l>` }] });
    return m.content[0].type === "text" ? m.content[0].text : "";
  };
}

const examine = examinerOn("MODEL");

export async function coverLetter(brief: string) {
  const letter = await compose(brief);
  const mark = await examine(letter);
  return { letter, mark };
}
"""


@pytest.mark.parametrize(("model", "flagged"), [("claude-sonnet-4-5", True),
                                                ("claude-haiku-4-5", False)])
def test_a_closure_a_factory_returns_runs_on_the_factory_arguments_model(
        tmp_path: Path, model: str, flagged: bool) -> None:
    write_files(tmp_path, {"src/letters.ts": CLOSURE_TS.replace("MODEL", model)})
    found = _codes(tmp_path, {"EL301"})
    assert found == ([("EL301", "src/letters.ts", 24)] if flagged else [])


TABLE_OF_FUNCTIONS = """\
from openai import OpenAI

client = OpenAI()


def respond(question):
    r = client.chat.completions.create(model="gpt-4o",
                                       messages=[{"role": "user", "content": question}])
    return r.choices[0].message.content


def helpful(reply):
    r = client.chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user",
                   "content": f"Grade the helpfulness of this reply from 1 to 5: <r>{reply}</r>"}])
    return r.choices[0].message.content


def short(reply):
    return len(reply) < 400


CHECKS = {"helpful": helpful, "short": short}


def run_suite(questions):
    table = []
    for q in questions:
        reply = respond(q)
        table.append({name: check(reply) for name, check in CHECKS.items()})
    return table
"""


def test_a_function_picked_from_a_table_of_functions_is_called_there(tmp_path: Path) -> None:
    write_files(tmp_path, {"suite.py": TABLE_OF_FUNCTIONS})
    result = lint_tree(tmp_path, {"EL301"})
    assert [(f.code, f.line) for f in result.findings] == [("EL301", 13)]


def test_a_table_without_model_calls_runs_nothing(tmp_path: Path) -> None:
    text = TABLE_OF_FUNCTIONS.replace('CHECKS = {"helpful": helpful, "short": short}',
                                      'CHECKS = {"short": short}')
    write_files(tmp_path, {"suite.py": text.replace("Grade the helpfulness of this reply",
                                                    "Say something about")})
    assert _codes(tmp_path, {"EL301"}) == []


def test_a_plain_text_parameter_is_not_forwarded_as_options() -> None:
    """``function pipeline(topic: string) { return draft(topic) }`` hands on a text: it is a
    positional parameter (a caller's argument reaches it), not a call's options object."""
    code = ("import OpenAI from 'openai';\nconst c = new OpenAI();\n"
            "export async function pipeline(topic: string) { return draft(topic); }\n"
            "export async function ask(args) { return c.chat.completions.create(args); }\n")
    tree = scriptparse.parse(code, "m.ts")
    module, _ = lower(tree.root_node, code.encode(), "m.ts", CAT)
    text = ast.unparse(module)
    assert "def pipeline(topic):" in text
    assert "def ask(**args):" in text  # an SDK call's options, handed whole, still are


@pytest.mark.parametrize(("text", "judge"), [
    ("Grade the clarity of this answer from 1 to 5.", True),
    ("Assess the tone of the reply below.", True),
    ("Rate the factuality of each summary.", True),
    ("Improve the clarity of this answer.", False),
    ("Evaluate the relevance of the sources you found.", False),
])
def test_a_quality_of_a_made_thing_graded_makes_a_judge(text: str, judge: bool) -> None:
    assert makes_judge(text) is judge
