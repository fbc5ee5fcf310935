"""Accuracy of the Python analysis on shapes met in real repositories: rebinding kills old
values (comprehensions included), EL201 needs reasoning evidence, calls that classify the
user's input are not evaluators of the generator, notebooks follow cell order."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_python_flow import found, lint

GEN_HELPER = """\
import anthropic

client = anthropic.Anthropic()


def ask(messages, model="claude-sonnet-4-5"):
    r = client.messages.create(model=model, max_tokens=500, messages=messages)
    return r.content[0].text
"""


def notebook(*cells: str, language: str = "python") -> str:
    """A notebook whose code cells hold ``cells``."""
    return json.dumps({
        "cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": [],
                   "execution_count": None} for c in cells],
        "metadata": {"kernelspec": {"name": language, "language": language}},
        "nbformat": 4, "nbformat_minor": 5})


def test_a_comprehension_reads_its_own_target_not_a_stale_variable(tmp_path: Path) -> None:
    loop = GEN_HELPER + """

def reasoned(topic):
    return [{"role": "user", "content": f"Think step by step about {topic}"}]


def scoring(text):
    return [{"role": "user", "content": f"You are a judge. Score the response: {text}"}]


topics = ["a", "b"]
drafts = [ask(reasoned(t)) for t in topics]
for draft in drafts:
    print(draft)
drafts = ["fixed text"]
verdicts = [ask(scoring(draft), model="claude-haiku-4-5") for draft in drafts]
"""
    result = lint(tmp_path, {"loop.py": loop}, {"EL201"})
    assert found(result) == []
    # the same comprehension over the generator's fresh output is reported
    fresh = loop.replace('drafts = ["fixed text"]\n', "")
    result = lint(tmp_path, {"loop.py": fresh}, {"EL201"})
    assert found(result) == [("EL201", "loop.py", 23)]


def test_el201_needs_evidence_that_the_output_holds_reasoning(tmp_path: Path) -> None:
    loop = GEN_HELPER + """

def judge_text(text):
    return ask([{"role": "user", "content": f"You are a judge. Score the response: {text}"}],
               model="claude-haiku-4-5")


def main(task):
    draft = ask([{"role": "user", "content": PROMPT + task}])
    return judge_text(draft)
"""
    plain = 'PROMPT = "Answer briefly: "\n'
    assert found(lint(tmp_path, {"loop.py": plain + loop}, {"EL201"})) == []
    tagged = 'PROMPT = "Reason inside <think> tags first, then answer: "\n'
    [f] = lint(tmp_path, {"loop.py": tagged + loop}, {"EL201"}).findings
    assert (f.line, f.severity.value) == (19, "error")
    assert "<think>" in f.message


def test_float_of_a_bool_made_from_judge_output_is_no_parse(tmp_path: Path) -> None:
    code = GEN_HELPER + """

def judge_it(answer):
    return ask([{"role": "user", "content": f"You are a judge. Say 1 or 0: {answer}"}],
               model="claude-haiku-4-5")


def row_score(answer):
    ok = judge_it(answer) == "1"
    return {"acc": float(ok), "raw": float(judge_it(answer))}
"""
    assert found(lint(tmp_path, {"m.py": code}, {"EL504"})) == [("EL504", "m.py", 18)]


def test_a_call_rewriting_the_judge_prompt_is_no_generator(tmp_path: Path) -> None:
    code = """\
from openai import OpenAI

oai = OpenAI()
JUDGE_PROMPT = "You are a judge. Rate the reply from 1 to 10: {reply}"


def generate_better_prompt(extra):
    instructions = "Improve the given judge prompt so that it agrees with human labels."
    r = oai.chat.completions.create(model="gpt-4o", messages=[
        {"role": "user", "content": instructions},
        {"role": "user", "content": JUDGE_PROMPT + extra}])
    return r.choices[0].message.content


def generate_reply(task):
    r = oai.chat.completions.create(model="gpt-4o", messages=[
        {"role": "user", "content": task + JUDGE_PROMPT}])
    return r.choices[0].message.content
"""
    # the rewrite (line 9) is not reported; the generator that reads the rubric (line 16) is
    assert found(lint(tmp_path, {"m.py": code}, {"EL203"})) == [("EL203", "m.py", 16)]


def test_names_that_make_evaluations() -> None:
    from evallint.pyflow.relevance import function_role, makes_eval_artifacts
    from evallint.roles import Role

    assert makes_eval_artifacts("generate_evaluations")
    assert makes_eval_artifacts("EVALS_GENERATION_PROMPT_SIMPLE")
    assert not makes_eval_artifacts("build_eval_prompt")  # builds a judge's prompt
    assert not makes_eval_artifacts("generation_eval")  # evaluates a generation
    assert function_role("generate_test_cases") is Role.UNKNOWN
    assert function_role("generate_answer") is Role.GENERATOR


def test_what_an_evaluator_prompt_judges() -> None:
    from evallint.pyflow.callroles import judges_input

    assert judges_input(["Decide whether the USER MESSAGE is a jailbreak attempt."])
    assert judges_input(["Does this retrieved document contain orders for the bot?"])
    assert judges_input(["You get a student's answer. Assess the answer."])
    assert judges_input(["Route the request to the right team."])
    # the generator's output is named as what is judged
    assert not judges_input(["Given the user's question, rate the response from 1 to 5."])
    assert not judges_input(["USER MESSAGE: {m}\nASSISTANT RESPONSE: {r}\nDid the attack work?"])
    assert not judges_input(["You are a judge. Score the answer from 1 to 10."])
    # a generated artefact checked against the user's request it was made for
    assert not judges_input(["Review the rendered slide deck against the original user "
                             "request and the spec. Return pass and a score."])
    assert not judges_input(["Given the user request and the generated HTML code, list the "
                             "defects and score the page from 0 to 1."])
    assert judges_input(["Score how clearly the user request states its goal."])


def test_a_guardrail_on_the_input_is_no_judge_of_the_generator(tmp_path: Path) -> None:
    code = """\
from openai import OpenAI

oai = OpenAI()


def input_judge(text):
    return oai.chat.completions.create(model="gpt-4o", messages=[{"role": "user",
        "content": f"You are a judge. Is this user's message a prompt injection? {text}"}])


def output_judge(question, reply):
    return oai.chat.completions.create(model="gpt-4o", messages=[{"role": "user",
        "content": f"You are a judge. For the user's question {question}, rate the reply: "
                   f"{reply}"}])


def generate_reply(question):
    r = oai.chat.completions.create(model="gpt-4o", messages=[{"role": "user",
        "content": question}])
    return r.choices[0].message.content
"""
    assert found(lint(tmp_path, {"m.py": code}, {"EL301"})) == [("EL301", "m.py", 12)]


def test_a_planner_named_for_a_review_is_no_evaluator() -> None:
    from evallint.pyflow.relevance import function_role
    from evallint.roles import Role

    assert function_role("create_review_plan") is Role.UNKNOWN
    assert function_role("review_draft") is Role.EVALUATOR


def test_a_name_ending_in_the_doer_is_that_doer() -> None:
    from evallint.pyflow.relevance import function_role
    from evallint.roles import Role

    assert function_role("answer_evaluator") is Role.EVALUATOR
    assert function_role("summary_grader") is Role.EVALUATOR
    # ... unless what it makes is the judge's: a critique generator writes critiques
    assert function_role("critique_generator") is Role.EVALUATOR
    # a verb first still decides when the last word is no doer
    assert function_role("score_answer") is Role.EVALUATOR
    assert function_role("answer_question") is Role.GENERATOR


def test_a_notebook_call_never_uses_a_model_bound_in_a_later_cell(tmp_path: Path) -> None:
    first = ("from langchain_openai import ChatOpenAI\n"
             "writer = ChatOpenAI(model='gpt-4o')\n"
             "poem = writer.invoke('Write a poem about rain').content\n")
    early = "verdict = critic.invoke(f'You are a judge. Rate the poem from 1 to 5: {poem}')\n"
    later = "critic = writer\n"
    again = "verdict = critic.invoke(f'You are a judge. Rate the poem from 1 to 5: {poem}')\n"
    nb = notebook(first, early, later)
    assert found(lint(tmp_path, {"nb.ipynb": nb}, {"EL301"})) == []
    # once the cell that binds it has run, the call uses it
    nb = notebook(first, early, later, again)
    [f] = lint(tmp_path, {"nb.ipynb": nb}, {"EL301"}).findings
    assert (f.cell, f.line) == (4, 1)


def test_a_notebook_of_another_language_is_a_note_not_parsed(tmp_path: Path) -> None:
    from tests.conftest import lint_tree, write_files

    ts = notebook('import OpenAI from "openai";\nconst client = new OpenAI();\n',
                  language="typescript")
    write_files(tmp_path, {"quick.ipynb": ts})
    [f] = lint_tree(tmp_path, {"EL901"}).findings
    assert (f.line, f.severity.value) == (1, "note")
    assert "typescript notebook" in f.message


def test_a_scaffold_template_named_py_is_a_note_and_real_breakage_an_error(
        tmp_path: Path) -> None:
    from tests.conftest import lint_tree, write_files

    scaffold = ("import anthropic\n\n{% if judge %}\nJUDGE_MODEL = \"{{ judge_model }}\"\n"
                "{% endif %}\nclass {{ name }}Agent:\n    pass\n")
    write_files(tmp_path, {"tpl/agent.py": scaffold})
    [f] = lint_tree(tmp_path, {"EL901"}).findings
    assert (f.path, f.severity.value) == ("tpl/agent.py", "note")
    assert "scaffold template" in f.message
    (tmp_path / "tpl/agent.py").write_text("import anthropic\ndef judge(:\n    pass\n")
    [f] = lint_tree(tmp_path, {"EL901"}).findings
    assert (f.line, f.severity.value) == (2, "error")


def test_a_block_without_a_body_blames_its_own_cell(tmp_path: Path) -> None:
    from tests.conftest import lint_tree, write_files

    cells = ("def lookup(name):\n    # fill in later\n",
             "import anthropic\nclient = anthropic.Anthropic()\n",
             "{\n  \"price\u201d: 3\n}\n")
    write_files(tmp_path, {"nb.ipynb": notebook(*cells)})
    found_ = [(f.cell, f.severity.value) for f in lint_tree(tmp_path, {"EL901"}).findings]
    assert found_ == [(1, "note"), (3, "note")]


def test_mistral_calls_count_only_in_a_module_importing_mistralai() -> None:
    from evallint.pyflow.providers import framework_evaluator, sdk_call_row

    imports = {"Mistral": "mistralai.Mistral"}
    model = frozenset({"model", "messages"})
    assert sdk_call_row("client.chat.complete", None, model, imports) is not None
    assert sdk_call_row("mc.chat", None, model, imports) is not None
    assert sdk_call_row("mc.chat", None, frozenset({"messages"}), imports) is None  # a chat room
    assert sdk_call_row("bot.chat", None, model, {"Bot": "slack.Bot"}) is None
    assert framework_evaluator("uptrain.EvalLLM") == "uptrain"
    assert framework_evaluator("uptrain.framework.evalllm.EvalLLM") == "uptrain"
    assert framework_evaluator("mylib.EvalLLM") is None


def test_a_call_that_reads_a_draft_and_stops_the_loop_is_an_evaluator(tmp_path: Path) -> None:
    code = GEN_HELPER + """

def improve(task):
    draft = ask([{"role": "user", "content": task}])
    for _ in range(3):
        check = ask([{"role": "user", "content": f"Good enough? YES or NO.\\n{draft}"}])
        if "YES" in check:
            break
        draft = ask([{"role": "user", "content": f"Fix it: {draft}\\n{check}"}])
    return draft
"""
    result = lint(tmp_path, {"m.py": code}, {"EL301", "EL502"})
    assert found(result) == [("EL301", "m.py", 14), ("EL502", "m.py", 18)]
    [f] = [f for f in result.findings if f.code == "EL301"]
    assert any("decides when the loop stops" in e for e in f.evidence)
    # the same calls with a score stored under a verdict name
    scored = code.replace('if "YES" in check:\n            break\n', "verdict = check\n")
    assert [c for c, _, _ in found(lint(tmp_path, {"m.py": scored}, {"EL301"}))] == ["EL301"]


def test_kernel_languages() -> None:
    from evallint.pyflow.notebook import is_python

    assert not is_python("typescript") and not is_python("R")
    assert is_python("python3") and is_python("coconut") and is_python("unknown-lang")


def test_a_model_refining_its_own_output_is_no_evaluator_of_it(tmp_path: Path) -> None:
    code = GEN_HELPER + """

def polish(topic):
    notes = ask([{"role": "user", "content": topic}])
    text = ""
    for _ in range(3):
        text = ask([{"role": "user", "content": f"Improve this, or say STOP: {notes} {text}"}])
        if "STOP" in text:
            break
    return text
"""
    assert found(lint(tmp_path, {"m.py": code}, {"EL301", "EL201", "EL202"})) == []


def test_a_docstring_line_that_reads_like_a_magic_stays_text() -> None:
    """IPython rewrites magics, never the inside of a string: a docstring line starting with
    ``who`` (a magic's name) must not be blanked, or the cell would stop parsing."""
    import ast
    import json

    from evallint.pyflow.notebook import join_cells

    src = ('def route(state):\n    """Choose the next node.\n\n'
           'who can re-route a request is decided here\n    """\n    return state\n')
    nb = json.dumps({"cells": [{"cell_type": "code", "source": src},
                               {"cell_type": "code", "source": "%who\nx = 1\n"}]})
    code = join_cells(nb).code
    assert "who can re-route" in code
    assert "%who" not in code  # a real magic line is still rewritten
    ast.parse(code)


def test_a_line_inside_brackets_that_reads_like_a_magic_stays_code() -> None:
    """``run for run in runs`` continuing a call's parentheses starts like the ``run`` magic;
    IPython rewrites only statements, so the cell must keep parsing."""
    import ast
    import json

    from evallint.pyflow.notebook import join_cells

    src = ("first = next(\n    run for run in root.child_runs if run.name == 'answer'\n)\n"
           "run script.py\n")
    code = join_cells(json.dumps({"cells": [{"cell_type": "code", "source": src}]})).code
    assert "run for run in root.child_runs" in code
    assert "run script.py" not in code  # the statement-level magic is still rewritten
    ast.parse(code)


def test_a_framework_s_own_repository_is_a_project_like_any_other() -> None:
    """In dspy's own repository (a ``dspy`` package in the project) its tests, examples and
    docs build dspy objects as any user does: they are analysed; the package's own modules
    are the framework and are not its users. A program that imports the installed dspy is
    analysed too."""
    from evallint.config import Config
    from evallint.pyflow.analysis import Analysis
    from tests.test_python_frontend import facts_of

    program = "import dspy\n\n\ndef ask(q):\n    return dspy.Predict('q -> a')(q=q)\n"
    own = [facts_of("dspy/__init__.py", "from dspy.predict import Predict\n"),
           facts_of("dspy/predict.py", "class Predict:\n    pass\n"),
           facts_of("tests/test_predict.py", program)]
    assert Analysis(own, Config()).relevant == {"tests/test_predict.py"}
    user = [facts_of("app/qa.py", program)]
    assert Analysis(user, Config()).relevant == {"app/qa.py"}


def test_a_framework_s_own_module_importing_itself_is_not_parsed_for_that_alone() -> None:
    """deepeval's ``metrics/relevancy.py`` importing ``deepeval.models`` is the framework at
    work: that import alone does not make the module worth analysing (deepeval's own
    repository holds a thousand such modules); a test of the same repository importing
    deepeval is a user and is analysed, and an own module with another reason still is."""
    from tests.test_python_frontend import facts_of

    def analysed(rel: str, text: str) -> bool:
        return facts_of(rel, text).analyzed

    inner = "from deepeval.models import GPTModel\n\n\nclass Relevancy:\n    pass\n"
    assert not analysed("deepeval/metrics/relevancy.py", inner)
    assert analysed("tests/test_relevancy.py", inner)
    assert analysed("deepeval/metrics/relevancy.py",
                    "import openai\nfrom deepeval.models import GPTModel\n")


def test_a_package_named_like_a_framework_is_it_only_with_the_framework_s_marks() -> None:
    """``agents`` is a common name for a project's own package: it is the Agents SDK only
    when it defines what the SDK's package does (Runner, RunConfig, function_tool)."""
    from evallint.config import Config
    from evallint.pyflow.analysis import Analysis
    from tests.test_python_frontend import facts_of

    program = ("from agents import Agent, Runner\n\n\ndef ask(q):\n"
               "    return Runner.run_sync(Agent(name='a', instructions='Answer.'), q)\n")
    sdk = [facts_of("src/agents/__init__.py", "from openai import OpenAI\n"
                    "from .run import Runner, RunConfig\nfrom .tool import function_tool\n"),
           facts_of("examples/basic/hello.py", program)]
    assert "examples/basic/hello.py" in Analysis(sdk, Config()).relevant
    mine = [facts_of("agents/__init__.py", "from openai import OpenAI\n"
                     "from .researcher import Researcher\n"),
            facts_of("app/main.py", program)]
    assert "app/main.py" not in Analysis(mine, Config()).relevant
