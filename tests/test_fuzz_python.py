"""Generated and mutated Python and notebooks never crash the analysis: ParseError only."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evallint.config import Config
from evallint.frontend import ParseError
from evallint.frontends.python_front import parse_python
from evallint.pyflow.analysis import Analysis
from evallint.pyflow.ir import PythonFacts
from evallint.source import SourceFile

NAMES = ["resp", "draft", "verdict", "client", "task", "JUDGE_MODEL", "MODEL", "feedback",
         "history", "steps", "best", "score", "self.model", "CFG['judge']", "os"]
EXPRS = [
    "client.messages.create(model={n}, max_tokens=9, "
    "messages=[{{'role': 'user', 'content': {m}}}])",
    "client.chat.completions.create(model={n}, messages={m})",
    "litellm.completion(model={n}, messages={m}, tools=[{{'type': 'bash_20250124'}}])",
    "judge({n}, {m})", "generate({n})", "extract_answer({n})", "json.loads({n})",
    "{n}.content[0].text", "{n}.choices[0].message.content", "{n}.get('pass')",
    "f'{{{n}}} and {{{m}}}'", "{n} + {m}", "os.environ.get('X', {m})", "open({n}, 'w')",
    "re.sub(r'<think>.*?</think>', '', {n})", "{n}.split('Answer:')[-1]", "'You are a judge'",
    "[x for x in {n} if x]", "lambda: {n}", "{n} if {m} else None", "await {n}",
]
STMTS = [
    "{t} = {e}", "{t} += {e}", "return {e}", "if {e}:\n    break", "while True:\n    {t} = {e}",
    "for {t} in range(3):\n    {t} = {e}", "try:\n    {t} = {e}\nexcept Exception:\n    pass",
    "with {e} as {t}:\n    pass", "def judge(a, b={e}):\n    return {e}",
    "def generate(x, model=MODEL):\n    return {e}", "class C:\n    model = {e}", "{e}",
    "while {t} < 3:\n    {t} = {e}", "assert 0 <= {t} <= 1",
]
HEADER = "import os, re, json\nimport anthropic, litellm\nfrom openai import OpenAI\n"

name = st.sampled_from(NAMES)
expr = st.builds(lambda tpl, n, m: tpl.format(n=n, m=m), st.sampled_from(EXPRS), name, name)
target = st.sampled_from(["resp", "draft", "verdict", "score", "best", "self.x", "a, b"])
stmt = st.builds(lambda tpl, t, e: tpl.format(t=t, e=e), st.sampled_from(STMTS), target, expr)


def indent(lines: list[str], wrap: bool) -> str:
    body = "\n".join(lines)
    if not wrap:
        return body
    return "def step(task):\n" + "\n".join("    " + ln for ln in body.splitlines())


program = st.builds(indent, st.lists(stmt, min_size=1, max_size=12), st.booleans())


def analyse(files: dict[str, str]) -> None:
    facts: list[PythonFacts] = []
    for rel, text in files.items():
        try:
            f = parse_python(SourceFile(Path(rel), rel, text, text.encode()), Config())
        except ParseError:
            continue
        assert isinstance(f, PythonFacts)
        facts.append(f)
    Analysis(facts, Config()).run()


FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(program, program)
def test_generated_programs_never_crash(a: str, b: str) -> None:
    analyse({"loop.py": HEADER + a, "helpers.py": HEADER + b.replace("judge", "llm_call")})


@FUZZ
@given(program, st.data())
def test_mutated_programs_never_crash(src: str, data: st.DataObject) -> None:
    text = HEADER + src
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(text)))
        op = data.draw(st.sampled_from(["del", "ins"]))
        if op == "del":
            text = text[:i] + text[i + 1:]
        else:
            text = text[:i] + data.draw(st.sampled_from(list("()[]{}:'\"\n =.,#%!\t\\"))) + text[i:]
    analyse({"m.py": text})


json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids,
                                                              max_size=4),
    max_leaves=12,
)
cell_source = st.one_of(program.map(lambda p: HEADER + p), st.lists(st.text(max_size=30)),
                        st.sampled_from(["%%bash\nls", "!pip install x\nx = !ls", "%time 1"]),
                        json_value)
cell = st.fixed_dictionaries({"cell_type": st.sampled_from(["code", "markdown", "raw", 3]),
                              "source": cell_source})


@FUZZ
@given(st.one_of(st.lists(cell, max_size=5).map(lambda cs: {"cells": cs}), json_value))
def test_notebook_json_never_crashes(nb: object) -> None:
    analyse({"nb.ipynb": json.dumps(nb)})


@FUZZ
@given(st.text(max_size=200))
def test_arbitrary_text_as_a_notebook_never_crashes(text: str) -> None:
    analyse({"nb.ipynb": text, "judge.py": "import anthropic\n" + text})
