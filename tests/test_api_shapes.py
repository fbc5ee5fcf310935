"""API shapes the catalogue move made visible, each written unlike the fixtures: generic
constructors, a model handed down to both roles, a judge told to grade on a scale whatever
its object is called, open models by size, and the analysis state that only its journal may
change."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import lint_tree, write_files


def _found(tmp_path: Path, files: dict[str, str], codes: set[str]) -> list[tuple[str, str, int]]:
    write_files(tmp_path, files)
    result = lint_tree(tmp_path, codes)
    assert not result.tool_errors
    return [(f.code, f.path, f.line) for f in result.findings]


def test_a_constructor_called_through_its_type_parameters_is_the_class(tmp_path: Path) -> None:
    code = ("from agents import Agent, Runner\n\n"
            "drafter = Agent[None](name='drafter', instructions='Write a haiku about the topic.')\n"
            "marker = Agent[dict[str, int]](name='marker',\n"
            "    instructions='Grade the haiku from 1 to 10. Reply with the number.')\n\n\n"
            "async def once(topic: str) -> str:\n"
            "    draft = await Runner.run(drafter, topic)\n"
            "    verdict = await Runner.run(marker, draft.to_input_list())\n"
            "    return verdict.final_output\n")
    found = _found(tmp_path, {"flows/haiku.py": code}, {"EL202", "EL301"})
    assert ("EL202", "flows/haiku.py", 10) in found and ("EL301", "flows/haiku.py", 10) in found


def test_an_element_of_a_list_called_is_not_a_generic(tmp_path: Path) -> None:
    import ast

    from evallint.pyflow.build import _generic_base

    for src, generic in (("Agent[None](x)", True), ("Agent[Ctx, Out](x)", True),
                         ("steps[0](x)", False), ("handlers[i](x)", False),
                         ("Agent[i](x)", False)):
        call = ast.parse(src, mode="eval").body
        assert isinstance(call, ast.Call)
        assert (_generic_base(call.func) is not call.func) is generic, src


def test_one_model_handed_down_to_the_writer_and_the_checker(tmp_path: Path) -> None:
    code = ("import anthropic\n\nclient = anthropic.Anthropic()\n\n\n"
            "def solve(task, model):\n"
            "    r = client.messages.create(model=model, max_tokens=500,\n"
            "                               messages=[{'role': 'user', 'content': task}])\n"
            "    return r.content[0].text\n\n\n"
            "def check(task, answer, model):\n"
            "    r = client.messages.create(model=model, max_tokens=50,\n"
            "        system='You are a strict grader. Reply PASS or FAIL.',\n"
            "        messages=[{'role': 'user', 'content': f'{task}\\n{answer}'}])\n"
            "    return r.content[0].text\n\n\n"
            "def main(task):\n    chosen = 'claude-sonnet-4-5'\n"
            "    return check(task, solve(task, model=chosen), model=chosen)\n")
    assert _found(tmp_path, {"m.py": code}, {"EL301"}) == [("EL301", "m.py", 21)]
    other = code.replace("model=chosen)\n", "model='claude-haiku-4-5')\n")
    assert _found(tmp_path, {"m.py": other}, {"EL301"}) == []


@pytest.mark.parametrize(("text", "judge"), [
    ("You grade essays from 1 to 10 and reply with the grade.", True),
    ("Rate the product blurb on a scale of 1 to 5.", True),
    ("Score the blurb 1-5 as JSON.", True),
    ("Write an essay. Include a confidence score from 1 to 10.", False),
    ("The examiner will score the essay from 1 to 10 later.", False),
    ("Analyze the CV against the job requirements. Score from 0-10 on skills.", False),
    ("Given the query, rate the relevance of this document on a scale of 1-10.", False),
    ("Given the query and the response, rate the utility of the response from 1 to 5.", True),
    ("Is this explanation correct for a ten year old? Reply PASS or FAIL.", True),
    ("Does the reply follow the refund policy? Answer YES or NO.", True),
    ("Does the user message mention a refund? Reply YES or NO.", False),
    ("Grade the support reply PASS or FAIL: is it correct and polite?", True),
    ("Write a reply to the customer and keep it short.", False),
    ("Write a reply to the customer. Is the tone friendly? Keep it short.", False),
])
def test_a_judging_verb_with_a_scale_makes_a_judge(text: str, judge: bool) -> None:
    from evallint.roles import judge_text

    assert (judge_text(text) is not None) is judge


@pytest.mark.parametrize(("judge", "generator", "cheaper"), [
    ("llama3.1:8b", "llama3.1:70b", True),
    ("meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", False),
    ("qwen2.5:7b", "qwen2.5:72b", True),
    ("mixtral-8x22b", "mixtral-8x7b", False),
])
def test_open_models_are_tiered_by_size(judge: str, generator: str, cheaper: bool) -> None:
    from evallint.models import is_cheaper

    assert is_cheaper(judge, generator) is cheaper


def test_the_analysis_state_is_read_only_outside_its_journal() -> None:
    from evallint.config import Config
    from evallint.pyflow.analysis import Analysis

    an = Analysis([], Config())
    with pytest.raises(TypeError):
        an.chats[("m.py", "f", 0)] = ("gpt-4o", "")  # type: ignore[index]
    with pytest.raises(AttributeError):
        an.scored.add(("m.py", "f", 0))  # type: ignore[attr-defined]
    an.set_state("chats", ("m.py", "f", 0), ("gpt-4o", ""))
    an.add_state("scored", [("m.py", "f", 0)])
    assert an.chats[("m.py", "f", 0)] == ("gpt-4o", "") and ("m.py", "f", 0) in an.scored
    assert an.scored & {("m.py", "f", 0)} == frozenset({("m.py", "f", 0)})


def test_a_chain_built_in_init_carries_its_template_to_the_run(tmp_path: Path) -> None:
    """``self.rater = rating_prompt | self.llm`` set in ``__init__`` and invoked in another
    method: the object and its template are followed through the attribute."""
    code = ("from langchain_core.prompts import PromptTemplate\n"
            "from langchain_openai import ChatOpenAI\n\n"
            "draft_prompt = PromptTemplate.from_template('Write a tagline for {product}.')\n"
            "rating_prompt = PromptTemplate.from_template(\n"
            "    'Given the product {product} and the tagline {tagline}, rate the tagline '\n"
            "    'from 1 to 10 for punch. Reply with the number.')\n\n\n"
            "class Tagliner:\n"
            "    def __init__(self):\n"
            "        self.llm = ChatOpenAI(model='gpt-4o-mini')\n"
            "        self.slogans = draft_prompt | self.llm\n"
            "        self.punch = rating_prompt | self.llm\n\n"
            "    def once(self, product):\n"
            "        tagline = self.slogans.invoke({'product': product}).content\n"
            "        mark = int(self.punch.invoke({'product': product,\n"
            "                                      'tagline': tagline}).content)\n"
            "        return tagline, mark\n")
    found = _found(tmp_path, {"brand/tagline.py": code}, {"EL301"})
    assert ("EL301", "brand/tagline.py", 18) in found, found


def test_a_file_without_llm_words_that_runs_an_agent_built_elsewhere(tmp_path: Path) -> None:
    """``from brain import bot`` then ``bot.run(q)`` in a file the text prefilter skips (no
    LLM word in it): the module-level agent of another module makes it load."""
    files = {
        "app/brain.py": ("from pydantic_ai import Agent\n\n"
                         "bot = Agent('openai:gpt-4o-mini', instructions='Answer from memory.')\n"),
        "app/main.py": ("from app.brain import bot\n\n\n"
                        "async def ask(q: str):\n    return await bot.run(q)\n"),
        "checks/grade.py": (
            "from pydantic_ai import Agent\n\nfrom app.main import ask\n\n"
            "marker = Agent('openai:gpt-4o-mini',\n"
            "               instructions='Grade the reply from 1 to 10. Reply with a number.'"
            ")\n\n\n"
            "async def mark(q: str) -> str:\n"
            "    reply = await ask(q)\n"
            "    verdict = await marker.run(f'Question: {q}\\nReply: {reply.output}')\n"
            "    return verdict.output\n"),
    }
    found = _found(tmp_path, files, {"EL301"})
    assert ("EL301", "checks/grade.py", 11) in found, found
