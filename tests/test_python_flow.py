"""Data flow from the generator's call to the evaluator's: helpers across modules, both ends
named in messages, severity from reasoning evidence, configuration of roles and extractors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evallint.engine import RunResult
from tests.conftest import lint_tree, write_files

PY_CODES = {"EL201", "EL202", "EL203", "EL301", "EL302", "EL401", "EL501", "EL502", "EL503",
            "EL504", "EL505"}

LLM = """\
import anthropic

client = anthropic.Anthropic()
DEFAULT_MODEL = "claude-sonnet-4-5"


def llm_call(prompt, system="", model=DEFAULT_MODEL):
    resp = client.messages.create(model=model, system=system, max_tokens=900,
                                  messages=[{"role": "user", "content": prompt}])
    return resp.content[0].text
"""


def lint(tmp_path: Path, files: dict[str, str], codes: set[str] | None = None,
         config: dict[str, Any] | None = None) -> RunResult:
    write_files(tmp_path, files)
    result = lint_tree(tmp_path, codes or PY_CODES, config)
    assert not result.tool_errors, result.tool_errors
    return result


def found(result: RunResult) -> list[tuple[str, str, int]]:
    return sorted((f.code, f.path, f.line) for f in result.findings)


def test_helper_across_modules_and_a_package_relative_import(tmp_path: Path) -> None:
    loop = """\
from .llm import llm_call


def solve(task):
    return llm_call(f"Think step by step: {task}", model="claude-opus-4-1")


def grade(task, answer):
    return llm_call(f"Task: {task}\\nAnswer: {answer}", system="You are a grader.",
                    model="claude-haiku-4-5")


def step(task):
    draft = solve(task)
    return grade(task, draft)
"""
    result = lint(tmp_path, {"pkg/__init__.py": "", "pkg/llm.py": LLM, "pkg/loop.py": loop})
    assert found(result) == [("EL201", "pkg/loop.py", 15)]
    [f] = result.findings
    assert "generated at loop.py:14" in f.message and "at loop.py:15" in f.message
    assert f.severity.value == "error"
    assert [(r.path, r.line) for r in f.related][:2] == [("pkg/loop.py", 14), ("pkg/loop.py", 5)]


def test_three_levels_of_helpers_reach_a_fixpoint(tmp_path: Path) -> None:
    wrap = """\
from llm import llm_call


def ask(prompt, model="claude-sonnet-4-5"):
    return llm_call(prompt, model=model)


def ask_twice(prompt, model="claude-sonnet-4-5"):
    return ask(prompt, model=model)
"""
    loop = """\
from wrap import ask_twice


def write_draft(task):
    return ask_twice(f"Think it through: {task}")


def judge_draft(draft):
    return ask_twice(f"You are a judge. Score: {draft}", model="claude-haiku-4-5")


def main(task):
    return judge_draft(write_draft(task))
"""
    result = lint(tmp_path, {"llm.py": LLM, "wrap.py": wrap, "loop.py": loop})
    assert found(result) == [("EL201", "loop.py", 13)]


def test_reasoning_generator_makes_el201_an_error(tmp_path: Path) -> None:
    loop = """\
from openai import OpenAI
client = OpenAI()


def generate(task):
    out = client.chat.completions.create(model="o3-mini",
                                         messages=[{"role": "user", "content": task}])
    return out.choices[0].message.content


def evaluate(task, answer):
    return client.chat.completions.create(model="gpt-4o-mini",
                                          messages=[{"role": "user", "content": answer}])


def main(task):
    return evaluate(task, generate(task))
"""
    [f] = lint(tmp_path, {"loop.py": loop}).findings
    assert (f.code, f.line, f.severity.value) == ("EL201", 17, "error")
    assert "`o3-mini` is a reasoning model" in f.message


def test_thinking_block_content_is_raw_even_with_an_extractor_elsewhere(tmp_path: Path) -> None:
    loop = """\
import anthropic
client = anthropic.Anthropic()


def critic(text):
    return client.messages.create(model="claude-haiku-4-5", max_tokens=9,
                                  messages=[{"role": "user", "content": text}])


def main(task):
    resp = client.messages.create(model="claude-sonnet-4-5", max_tokens=9,
                                  messages=[{"role": "user", "content": task}])
    thoughts = resp.content[0].thinking
    return critic(thoughts)
"""
    [f] = lint(tmp_path, {"loop.py": loop}).findings
    assert (f.code, f.line, f.severity.value) == ("EL201", 14, "error")
    assert "thinking" in f.message


def test_config_names_roles_and_extractors(tmp_path: Path) -> None:
    loop = """\
import litellm


def first(task):
    return litellm.completion(model="o3-mini", messages=[{"role": "user", "content": task}])


def second(text):
    return litellm.completion(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])


def pipeline(task):
    out = first(task)
    return second(tidy(out.choices[0].message.content))


def tidy(text):
    return text.strip()
"""
    files = {"loop.py": loop}
    assert lint(tmp_path, files).findings == []  # no role evidence: nothing to say
    roles = {"evaluator-functions": ["second"], "generator-functions": ["first"]}
    result = lint(tmp_path, files, config=roles)
    assert found(result) == [("EL201", "loop.py", 14)]
    result = lint(tmp_path, files, config={**roles, "extract-functions": ["tidy"]})
    assert result.findings == []


def test_el301_message_names_both_ends_and_the_shared_default(tmp_path: Path) -> None:
    loop = """\
from llm import llm_call


def generate(task):
    return llm_call(task)


def evaluate(answer):
    return llm_call(answer, system="You are a judge.")
"""
    [f] = lint(tmp_path, {"llm.py": LLM, "loop.py": loop}).findings
    assert (f.code, f.path, f.line) == ("EL301", "loop.py", 9)
    assert "loop.py:9" in f.message and "loop.py:5" in f.message
    assert "default of `model` in `llm_call()`" in f.message
    assert f.related[0].line == 5


def test_el301_through_an_imported_alias_chain_and_env_default(tmp_path: Path) -> None:
    settings = ('import os\nBASE = "claude-sonnet-4-5"\n'
                'JUDGE = os.environ.get("JUDGE_MODEL", BASE)\n')
    loop = """\
import anthropic
import settings

client = anthropic.Anthropic()


def generate(t):
    return client.messages.create(model=settings.BASE, max_tokens=9, messages=t)


def judge(t):
    return client.messages.create(model=settings.JUDGE, max_tokens=9, messages=t)
"""
    result = lint(tmp_path, {"settings.py": settings, "loop.py": loop})
    assert found(result) == [("EL301", "loop.py", 12)]
    assert "JUDGE_MODEL" in result.findings[0].message


def test_unresolvable_models_are_not_compared(tmp_path: Path) -> None:
    loop = """\
import os
import anthropic
client = anthropic.Anthropic()


def generate(t):
    return client.messages.create(model=os.environ["GEN"], max_tokens=9, messages=t)


def judge(t):
    return client.messages.create(model=os.environ["JUDGE"], max_tokens=9, messages=t)
"""
    assert lint(tmp_path, {"loop.py": loop}).findings == []


def test_one_environment_variable_with_no_default_is_one_model(tmp_path: Path) -> None:
    loop = """\
import os
import anthropic
client = anthropic.Anthropic()


def generate(t):
    return client.messages.create(model=os.environ["GEN"], max_tokens=9, messages=t)


def judge(t):
    return client.messages.create(model=os.getenv("GEN"), max_tokens=9, messages=t)
"""
    found = lint(tmp_path, {"loop.py": loop}).findings
    assert [(f.code, f.line) for f in found] == [("EL301", 11)]
    assert "one environment variable picks the model" in found[0].message


def test_one_llm_call_and_no_evaluator_is_clean(tmp_path: Path) -> None:
    app = """\
import json
import anthropic
client = anthropic.Anthropic()


def answer(question):
    while True:
        resp = client.messages.create(model="claude-sonnet-4-5", max_tokens=99,
                                      thinking={"type": "enabled", "budget_tokens": 50},
                                      messages=[{"role": "user", "content": question}])
        data = json.loads(resp.content[0].text)
        if data["passed"]:
            return resp
"""
    assert lint(tmp_path, {"app.py": app}).findings == []


def test_fixtures_clean_python_are_clean() -> None:
    root = Path(__file__).resolve().parents[1]
    result = lint_tree(root, PY_CODES, paths=["fixtures/clean/python"])
    assert result.findings == []
    assert len(result.files) >= 6


def test_a_file_without_llm_words_that_imports_a_helper_module_is_analysed(
        tmp_path: Path) -> None:
    helpers = """\
import anthropic
client = anthropic.Anthropic()
THINK = {"type": "enabled", "budget_tokens": 1024}

def write(task):
    r = client.messages.create(model="claude-sonnet-4-5", max_tokens=9, thinking=THINK,
                               messages=[{"role": "user", "content": task}])
    return r.content[0].text


def score_it(answer):
    r = client.messages.create(model="claude-haiku-4-5", max_tokens=9,
                               messages=[{"role": "user", "content": answer}])
    return r.content[0].text
"""
    main = "from helpers import write, score_it\n\n\ndef main(t):\n    return score_it(write(t))\n"
    result = lint(tmp_path, {"helpers.py": helpers, "main.py": main})
    assert found(result) == [("EL201", "main.py", 5)]


def test_the_project_analysis_cache_follows_changes_to_any_python_file(tmp_path: Path) -> None:
    import os

    from evallint.config import parse_config
    from evallint.engine import run_check

    helpers = LLM
    loop = ("from llm import llm_call\n\n\ndef generate(t):\n    return llm_call(t)\n\n\n"
            "def judge(a):\n    return llm_call(a, model=JUDGE)\n")
    write_files(tmp_path, {"llm.py": helpers, "loop.py": "JUDGE = 'claude-sonnet-4-5'\n" + loop})
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        cfg = parse_config({}, source=None, root=tmp_path)
        cfg.respect_gitignore = False

        def codes() -> list[str]:
            result = run_check(["."], cfg, {"EL301", "EL302"}, jobs=1, use_cache=True)
            return [f.code for f in result.findings]

        assert codes() == ["EL301"]
        assert codes() == ["EL301"]  # from the cache
        assert list((tmp_path / ".evallint_cache" / "v2" / "pyflow").iterdir())
        (tmp_path / "loop.py").write_text("JUDGE = 'claude-haiku-4-5'\n" + loop)
        assert codes() == []
        (tmp_path / "llm.py").write_text(helpers.replace("claude-sonnet-4-5", "claude-opus-4-1"))
        (tmp_path / "loop.py").write_text("JUDGE = 'claude-opus-4-1'\n" + loop)
        assert codes() == ["EL301"]
    finally:
        os.chdir(old)


def test_a_judge_nested_in_the_function_that_holds_its_model(tmp_path: Path) -> None:
    """The nested function reads the enclosing function's chat model and prompt template."""
    code = """\
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI


def compare_runs(questions):
    llm = ChatOpenAI(model="gpt-4.1")
    rubric = ChatPromptTemplate.from_messages([
        ("system", "You are a strict grader. Score the answer from 1 to 10."),
        ("human", "Q: {q}\\n<answer>{a}</answer>"),
    ])

    def mark(q, a):
        return (rubric | llm).invoke({"q": q, "a": a}).content

    def attempt(q):
        return llm.invoke(q).content

    def both(q):
        return mark(q, attempt(q))

    return [both(q) for q in questions]
"""
    result = lint(tmp_path, {"bench/compare.py": code}, {"EL301"})
    assert found(result) == [("EL301", "bench/compare.py", 13)]
    assert result.findings[0].severity.value == "error"  # the template's text makes the judge


def test_a_nested_function_that_binds_the_name_itself_does_not_see_the_outer_one(
        tmp_path: Path) -> None:
    code = """\
from langchain_openai import ChatOpenAI


def session():
    llm = ChatOpenAI(model="gpt-4.1")

    def mark(answer):
        llm = ChatOpenAI(model="claude-sonnet-4-5")
        return llm.invoke("You are a strict grader. Score the answer from 1 to 10: " + answer)

    return mark(llm.invoke("Write a haiku about rain").content)
"""
    result = lint(tmp_path, {"bench/session.py": code}, {"EL301"})
    assert found(result) == []


def test_a_judge_stated_in_chinese_and_a_retrieval_grader_in_chinese(tmp_path: Path) -> None:
    """Who the prompt says the model is, in another language (rules/data/judge-words.yaml):
    a judge of the answer is one; a grader of retrieved documents is not a judge of it."""
    code = """\
from openai import OpenAI

client = OpenAI()


def answer(question):
    r = client.chat.completions.create(model="qwen-plus", messages=[
        {"role": "user", "content": question}])
    return r.choices[0].message.content


def check_answer(question, reply):
    r = client.chat.completions.create(model="qwen-plus", messages=[
        {"role": "system", "content": "你是一位严格的评估员。请判断回答是否正确，给出1到10分。"},
        {"role": "user", "content": f"问题：{question}\\n这是答案：{reply}"}])
    return r.choices[0].message.content


def grade_doc(question, doc):
    r = client.chat.completions.create(model="qwen-plus", messages=[
        {"role": "system", "content": "您是一位评估员，正在评估检索到的文档与用户问题的相关性。"},
        {"role": "user", "content": f"文档：{doc}\\n问题：{question}"}])
    return r.choices[0].message.content


def run(question, docs):
    kept = [d for d in docs if grade_doc(question, d) == "yes"]
    reply = answer(question + "".join(kept))
    return check_answer(question, reply)
"""
    result = lint(tmp_path, {"qa/flow.py": code}, {"EL301"})
    assert found(result) == [("EL301", "qa/flow.py", 13)]


def test_a_call_that_only_restates_data_as_json_is_no_judge(tmp_path: Path) -> None:
    code = """\
from openai import OpenAI

client = OpenAI()
JUDGE_MODEL = "gpt-4.1"


def translate(text):
    r = client.chat.completions.create(model="gpt-4.1", messages=[
        {"role": "system", "content": "You are a literary translator."},
        {"role": "user", "content": text}])
    return r.choices[0].message.content


def package(text, rounds):
    done = translate(text)
    r = client.chat.completions.create(model=JUDGE_MODEL, messages=[
        {"role": "user", "content": f"Return the following data as JSON:\\n{done}\\n{rounds}"}])
    return r.choices[0].message.content
"""
    result = lint(tmp_path, {"tr/pipeline.py": code}, {"EL301"})
    assert found(result) == []


def test_a_chat_model_set_by_the_base_class_of_another_module(tmp_path: Path) -> None:
    base = """\
from langchain_openai import ChatOpenAI


class Bot:
    def __init__(self):
        self.llm = ChatOpenAI(model="gpt-4o")
"""
    desk = """\
from bots.base import Bot


class StoryDesk(Bot):
    def write(self, topic):
        return self.llm.invoke("Write a short story about " + topic).content

    def grade(self, story):
        return self.llm.invoke("You are a strict judge. Score the story from 1 to 10:\\n"
                               + story).content

    def run(self, topic):
        return self.grade(self.write(topic))
"""
    result = lint(tmp_path, {"bots/__init__.py": "", "bots/base.py": base,
                             "bots/desk.py": desk}, {"EL301"})
    assert found(result) == [("EL301", "bots/desk.py", 9)]


def _review_graph(router_test: str) -> dict[str, str]:
    return {
        "app/steps/__init__.py": "from .draft import draft\nfrom .review import review\n"
                                 "from .route import next_step\n",
        "app/steps/draft.py": "from langchain_openai import ChatOpenAI\n\nllm = ChatOpenAI("
                              "model='gpt-4.1')\n\n\ndef draft(state):\n    return {'text': "
                              "llm.invoke('Write a memo on ' + state['topic']).content}\n",
        "app/steps/review.py": "from langchain_anthropic import ChatAnthropic\n\njudge = "
                               "ChatAnthropic(model='claude-sonnet-4-5')\n\n\ndef review(state):\n"
                               "    out = judge.invoke('You are a strict critic. Reply OK or "
                               "REDO.\\n' + state['text'])\n    return {'verdict': out.content, "
                               "'rounds': state.get('rounds', 0) + 1}\n",
        "app/steps/route.py": f"def next_step(state):\n    return 'draft' if {router_test} "
                              "else 'done'\n",
        "app/graph.py": "from langgraph.graph import END, StateGraph\n\nfrom steps import draft, "
                        "next_step, review\n\ng = StateGraph(dict)\ng.add_node('draft', draft)\n"
                        "g.add_node('review', review)\ng.set_entry_point('draft')\n"
                        "g.add_edge('draft', 'review')\ng.add_conditional_edges('review', "
                        "next_step, {'draft': 'draft', 'done': END})\napp = g.compile()\n",
    }


def test_a_router_imported_through_a_package_is_read(tmp_path: Path) -> None:
    """The nodes and the router come through a package ``__init__`` with no LLM words: the
    router's own test decides whether the cycle is bounded."""
    bounded = lint(tmp_path / "a", _review_graph(
        "state['verdict'] == 'REDO' and state['rounds'] < 3"), {"EL501"})
    assert found(bounded) == []
    unbounded = lint(tmp_path / "b", _review_graph("state['verdict'] == 'REDO'"), {"EL501"})
    assert found(unbounded) == [("EL501", "app/graph.py", 10)]


def test_a_model_picked_by_a_field_of_a_settings_parameter(tmp_path: Path) -> None:
    """``model=cfg["models"]["judge"]`` with ``cfg`` a parameter: the caller's settings (a
    parameter's default here) name the model, field by field."""
    settings = """\
PIPELINE = {
    "models": {"writer": "claude-sonnet-4-5", "judge": "claude-sonnet-4-5",
               "checker": "gpt-4.1"},
}
"""
    code = """\
import anthropic

from settings import PIPELINE

client = anthropic.Anthropic()


def write(brief, cfg):
    r = client.messages.create(model=cfg["models"]["writer"], max_tokens=800,
                               messages=[{"role": "user", "content": brief}])
    return r.content[0].text


def judge(brief, text, cfg):
    r = client.messages.create(model=cfg["models"]["judge"], max_tokens=50,
                               system="You are a strict judge. Score the text from 1 to 10.",
                               messages=[{"role": "user",
                                          "content": f"{brief}\\n<text>{text}</text>"}])
    return r.content[0].text


def run(brief, cfg=PIPELINE):
    return judge(brief, write(brief, cfg), cfg)
"""
    result = lint(tmp_path, {"settings.py": settings, "pipeline.py": code}, {"EL301"})
    assert found(result) == [("EL301", "pipeline.py", 23)]
    assert "PIPELINE.models.judge" in result.findings[0].message
