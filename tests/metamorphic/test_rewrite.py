"""The rewriter of the metamorphic suite: what it renames, what it leaves, and that the program
it rewrites still does the same thing (run before and after, against a stand-in SDK)."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_files
from tests.metamorphic import Case, all_cases
from tests.metamorphic.rewrite import (
    CELL_MARK,
    REWRITES,
    Result,
    aliased_imports,
    neutral_names,
    read_unit,
    reformat,
    rename_modules,
    rewrite_all,
    split_cells,
    to_class,
    to_module,
)

NEUTRAL = re.compile(r"^[fcvpakCmxqQ]\d+$")

# A stand-in SDK, outside every rewritten project: it records what the project hands it.
FAKESDK = '''\
import json

LOG = []


class _Completions:
    def create(self, **kw):
        LOG.append(["create", {k: kw[k] for k in sorted(kw)}])
        return {"choices": [{"message": {"content": json.dumps({"score": 7, "pass": True})}}]}


class _Chat:
    completions = _Completions()


class Client:
    def __init__(self, **kw):
        self.chat = _Chat()
        LOG.append(["client", sorted(kw)])


class Graph:
    """Nodes named after their function, as LangGraph's add_node(fn) does."""

    def __init__(self):
        self.nodes = {}

    def add_node(self, fn):
        self.nodes[fn.__name__] = fn

    def run(self, start, state, router, then):
        node = start
        for _ in range(8):
            state = {**state, **self.nodes[node](state)}
            if node in then:
                node = then[node]
                continue
            node = router(state)
            if node == "END":
                break
        return state


def call_back(fn, **kw):
    return fn(**kw)


def tool(fn):
    """A library decorator that reads the function's name and parameters (a tool schema)."""
    code = fn.__code__
    LOG.append(["tool", fn.__name__, sorted(code.co_varnames[:code.co_argcount])])
    return fn
'''

APP = '''\
"""Every construct the rewrites touch."""
import functools
import json
from dataclasses import dataclass

import fakesdk
import settings
from fakesdk import Client, Graph
from pkg import shapes
from pkg.shapes import Square
from tools import lookup as find

client = Client(timeout=3)
MODEL = settings.MODEL
CONFIG = {"writer": "model-a", "judge": "model-b"}
counter = 0


def bump(step=1):
    global counter
    counter += step
    return counter


def ask(prompt, model=MODEL, temperature=0.0):
    r = client.chat.completions.create(model=model, temperature=temperature,
                                       messages=[{"role": "user", "content": prompt}])
    return r["choices"][0]["message"]["content"]


quick = functools.partial(ask, model=CONFIG["writer"], temperature=0.5)


def relay(**opts):
    return ask(**opts)


def traced(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        return fn(*args, **kwargs)
    return inner


@traced
def scaled(x, factor=2):
    return x * factor


@fakesdk.tool
def search_notes(query, limit=3):
    return query[:limit]


@dataclass
class Verdict:
    score: int
    passed: bool = False


class Base:
    def __init__(self, label="base"):
        self.label = label

    def describe(self, prefix=""):
        return f"{prefix}{self.label}"


class Judge(Base):
    threshold = 5
    ceiling = threshold * 2

    def __init__(self, label="judge", strict=True):
        super().__init__(label=label)
        self.strict = strict
        self.history = []

    def grade(self, text, *, model=None) -> "Verdict":
        raw = json.loads(ask(f"Grade: {text}", model=model or CONFIG["judge"]))
        verdict = Verdict(score=raw["score"], passed=raw["pass"])
        self.history.append(verdict)
        return verdict

    @property
    def count(self):
        return len(self.history)

    @staticmethod
    def clamp(x, low=0, high=10):
        return max(low, min(high, x))

    @classmethod
    def make(cls, strict=False):
        return cls(strict=strict)

    def flag(self):
        return getattr(self, "strict"), hasattr(self, "history")


def make_counter():
    total = 0

    def add(n):
        nonlocal total
        total += n
        return total
    return add


def write_node(state):
    return {"draft": quick(state["topic"]), "rounds": state.get("rounds", 0) + 1}


def review_node(state):
    verdict = Judge.make(strict=True).grade(state["draft"])
    return {"status": "ok" if verdict.passed and state["rounds"] > 1 else "again"}


def route(state):
    return "END" if state["status"] == "ok" else "write_node"


def long_prompt(topic):
    return f"""Write about {topic}.
    Keep this indentation, and {{literal braces}}.
{'-' * 3} "quotes" {topic!r:>5}"""


def fill(state):
    return "Draft: {draft}".format(**state)


async def later(x, *, factor=2):
    return x * factor


def main():
    import asyncio

    judge = Judge(label="J", strict=False)
    print(judge.describe(prefix="> "), judge.threshold, judge.ceiling, Judge.clamp(x=12, high=9))
    print(judge.grade("hello", model="m").score, judge.count, judge.flag())
    add = make_counter()
    add(2)
    print(add(3), bump(), bump(step=2), counter)
    graph = Graph()
    graph.add_node(write_node)
    graph.add_node(review_node)
    state = graph.run("write_node", {"topic": "tides"}, route, then={"write_node": "review_node"})
    print(state["rounds"], state["status"] == "ok", len(state), fill(state))
    print(find(key="b", table={"a": 1, "b": 2}), scaled(3, factor=4), search_notes("abcdef"))
    print(shapes.area(Square(side=3)), settings.describe(unit="cm"), relay(prompt="p", model="r"))
    print(long_prompt("x"))
    print(fakesdk.call_back(lambda value: value + 1, value=1))
    labels = dict(kind="a")
    print(labels["kind"] == "a", sorted(CONFIG.values()))
    print([h.score for h in judge.history], asyncio.run(later(3, factor=3)))
    print(json.dumps(fakesdk.LOG))
'''

PROJECT = {
    "start.py": "from app import main\n\nmain()\n",
    "app.py": APP,
    "settings.py": ('MODEL = "model-x"\n\n\ndef describe(unit="m"):\n'
                    '    return f"{MODEL} in {unit}"\n'),
    "tools.py": "def lookup(key, table=None):\n    return (table or {}).get(key)\n",
    "pkg/__init__.py": "",
    "pkg/shapes.py": ("from .geometry import square_area\n\n\nclass Square:\n"
                      "    def __init__(self, side):\n        self.side = side\n\n\n"
                      "def area(shape):\n    return square_area(shape.side)\n"),
    "pkg/geometry.py": "def square_area(side):\n    return side * side\n",
}


def _execute(files: dict[str, Any], origin: dict[str, str], tmp: Path) -> tuple[int, str, str]:
    """Run the project's start.py (wherever a rewrite put it) as an import, the stand-in SDK
    beside it on the path."""
    entry = next(p for p, o in origin.items() if o == "start.py")
    project, lib = tmp / "project", tmp / "lib"
    write_files(project, files)
    write_files(lib, {"fakesdk.py": FAKESDK, "entry.py": f"import {entry[:-3]}\n"})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project), str(lib)]),
           "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, str(lib / "entry.py")], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, str]:
    out = _execute(PROJECT, {p: p for p in PROJECT}, tmp_path_factory.mktemp("reference"))
    assert out[0] == 0, out[2]
    assert '"model": "model-a"' in out[1]  # the SDK saw its own keywords
    return out


@pytest.mark.parametrize("name", sorted(REWRITES))
def test_a_rewritten_program_does_the_same(name: str, reference: tuple[int, str, str],
                                           tmp_path: Path) -> None:
    """Same output, the stand-in SDK's log included: the SDK got the same keywords, keys and
    values, a library decorator the same name and parameters, a callback the same keywords."""
    result = REWRITES[name](PROJECT)
    assert result.changed
    assert _execute(result.files, result.origin, tmp_path) == reference


def _parse_all(files: dict[str, Any]) -> dict[str, ast.Module]:
    out = {}
    for path, text in files.items():
        if path.endswith(".py"):
            out[path] = ast.parse(text, path)
        elif path.endswith(".ipynb"):
            unit = read_unit(path, text)
            assert unit is not None
            out[path] = ast.parse(unit.text, path)
    return out


def _defined(tree: ast.AST) -> list[str]:
    """What a module defines: functions, classes, parameters, assigned names, self attributes."""
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(node.name)
        elif isinstance(node, ast.arg):
            out.append(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.append(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.append(node.attr)
    return out


def _shape(tree: ast.AST) -> list[str]:
    """The kinds of the nodes in order: a rename changes no node's kind."""
    return [type(n).__name__ for n in ast.walk(tree)]


LOOP = {
    "loop.py": '''\
import json
import anthropic
from helpers import CONFIG, parse

client = anthropic.Anthropic()
JUDGE_PROMPT = "You are a strict judge. Reply as JSON with a score."


class Refiner:
    def __init__(self, model="claude-sonnet-4-5"):
        self.model = model

    def generate(self, task):
        r = client.messages.create(model=self.model, max_tokens=100,
                                   messages=[{"role": "user", "content": task}])
        return r.content[0].text

    def judge(self, answer):
        r = client.messages.create(model=CONFIG["judge"], max_tokens=100, system=JUDGE_PROMPT,
                                   messages=[{"role": "user", "content": answer}])
        verdict = json.loads(r.content[0].text)
        return verdict["score"]


def run(task, rounds=3):
    refiner = Refiner(model="claude-opus-4-1")
    state = {"best": None}
    for _ in range(rounds):
        draft = refiner.generate(task)
        if parse(refiner.judge(draft)) > 5:
            state["best"] = draft
    return state["best"]
''',
    "helpers.py": '''\
CONFIG = {"judge": "claude-haiku-4-5"}


def parse(value):
    return float(value)
''',
}


def test_neutral_names_leave_no_project_name_and_every_sdk_name() -> None:
    result = neutral_names(LOOP)
    before, after = _parse_all(LOOP), _parse_all(result.files)
    for path in LOOP:
        assert _shape(before[path]) == _shape(after[path]), path
        assert len(_defined(before[path])) == len(_defined(after[path]))
        for name in _defined(after[path]):
            assert NEUTRAL.match(name) or name in ("self", "__init__", "_"), (path, name)
    text = result.files["loop.py"]
    # the SDK's names, keywords and keys, the prompt, the JSON key the model writes: unchanged
    assert ".messages.create(model=" in text and "max_tokens=100" in text
    assert '{"role": "user", "content": ' in text and "system=" in text
    assert "You are a strict judge. Reply as JSON with a score." in text
    assert 'verdict["score"]' not in text and '["score"]' in text
    assert "import anthropic" in text and "import json" in text
    # the project's own label, written in helpers.py and read in loop.py, is renamed in both
    assert '"judge"' not in text and '"judge"' not in result.files["helpers.py"]
    # keyword arguments follow the parameters they name, across classes
    assert "model=" in text and 'Refiner(' not in text
    assert re.search(r"c\d+\(p\d+=\"claude-opus-4-1\"\)", text)


@pytest.fixture(scope="module")
def rewritten() -> list[tuple[Case, dict[str, Result]]]:
    """Every rewrite of every rule example and of the fixtures, made once."""
    return [(case, rewrite_all(case.files)) for case in all_cases()]


def test_a_sdk_call_stays_an_sdk_call(rewritten: list[tuple[Case, dict[str, Result]]]) -> None:
    """Neutral names keep every SDK call's method, keywords and message keys."""
    for case, results in rewritten:
        if case.fixture:
            continue
        result = results["names"]
        for path, tree in _parse_all(result.files).items():
            original = _parse_all({result.origin[path]: case.files[result.origin[path]]})
            calls = [_call_shape(n) for n in ast.walk(original[result.origin[path]])
                     if isinstance(n, ast.Call) and _sdk_call(n)]
            kept = [_call_shape(n) for n in ast.walk(tree)
                    if isinstance(n, ast.Call) and _sdk_call(n)]
            assert calls == kept, (case.rule, case.name, path)


def _sdk_call(call: ast.Call) -> bool:
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr in ("create", "completion", "invoke", "parse",
                                                       "stream", "complete")


def _call_shape(call: ast.Call) -> tuple[str, list[str | None], list[list[str]]]:
    """The method, its keywords, the keys of the dicts it is given (``messages``' role and
    content), and the SDK's part of the receiver (``chat.completions``)."""
    keys = [[k.value for k in d.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            for d in ast.walk(call) if isinstance(d, ast.Dict)]
    chain = []
    node: ast.expr = call.func
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    sdk = [a for a in chain if a in ("messages", "completions", "chat", "responses", "beta")]
    return ".".join([*reversed(sdk), chain[0]]), [k.arg for k in call.keywords], keys


def test_scopes_are_followed_exactly() -> None:
    files = {"m.py": '''\
x = 1


def f(x):
    return x + 1


def g():
    x = 2

    def h():
        return x
    return h() + sum(x for x in range(3))


class K:
    x = 5

    def create(self):
        return self.x


def use(client):
    return client.messages.create(model="m"), K().create()
'''}
    text = neutral_names(files).files["m.py"]
    tree = ast.parse(text)
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert len(funcs) == 3 and all(NEUTRAL.match(n) for n in funcs)
    first = tree.body[0]
    assert isinstance(first, ast.Assign) and isinstance(first.targets[0], ast.Name)
    module_x = first.targets[0].id
    f_param = next(iter(funcs.values())).args.args[0].arg
    assert module_x != f_param  # a parameter is not the module's variable of the same name
    # ``create`` is also an SDK method: a project method of that name keeps it
    assert "client.messages.create(model=" not in text or "def create(self)" in text
    assert ".messages.create(model=\"m\")" in text
    assert "K" not in re.findall(r"\b[A-Za-z_]\w*\b", text)


def test_aliased_imports() -> None:
    files = {"loop.py": "import anthropic\nfrom openai import OpenAI\nfrom helpers import ask\n"
                        "a = anthropic.Anthropic()\nb = OpenAI()\nprint(ask(a, b))\n",
             "helpers.py": "def ask(a, b):\n    return a, b\n"}
    text = aliased_imports(files).files["loop.py"]
    assert re.search(r"^import anthropic as q\d+$", text, re.M)
    assert re.search(r"^from openai import OpenAI as Q\d+$", text, re.M)
    assert re.search(r"^from helpers import ask as q\d+$", text, re.M)
    assert "anthropic.Anthropic()" not in text and "= OpenAI()" not in text
    assert ".Anthropic()" in text


def test_reformatting_changes_positions_not_the_program() -> None:
    files = {"a.py": "x = (1 +\n     2)  # a comment\ndef f(a,b):\n    return [a,\n  b]\n"}
    result = reformat(files)
    assert result.files["a.py"] != files["a.py"]
    assert ast.dump(ast.parse(result.files["a.py"])) == ast.dump(ast.parse(files["a.py"]))


def test_a_function_moved_into_a_class() -> None:
    files = {"a.py": "def f(x):\n    '''doc'''\n    return f'''{x}\n  kept'''\n\n\n"
                     "print(f(1))\n",
             "b.py": "from a import f\nimport a\nprint(f(2), a.f(3))\n"}
    result = to_class(files)
    a, b = result.files["a.py"], result.files["b.py"]
    assert re.search(r"class (C\d+):\n    @staticmethod\n    def f\(x\):", a)
    cls = re.search(r"class (C\d+):", a).group(1)  # type: ignore[union-attr]
    assert f"print({cls}.f(1))" in a and "  kept'''" in a  # a string's own lines not indented
    assert f"from a import {cls}" in b and f"print({cls}.f(2), a.{cls}.f(3))" in b


def test_a_function_moved_into_another_module() -> None:
    files = {"pkg/loop.py": "import json\nLIMIT = 3\n\n\ndef f(x):\n    return json.dumps(x)"
                            "[:LIMIT]\n\n\nprint(f(1))\n",
             "pkg/run.py": "from pkg.loop import f\n"}
    result = to_module(files)
    moved = [p for p in result.files if p not in files]
    assert len(moved) == 1 and result.origin[moved[0]] == "pkg/loop.py"
    new = result.files[moved[0]]
    module = moved[0][:-3].replace("/", ".")
    assert "import json" in new and re.search(r"import pkg\.loop as (x\d+)", new)
    assert re.search(r"\[:x\d+\.LIMIT\]", new)
    assert f"from {module} import f" in result.files["pkg/loop.py"]
    assert result.files["pkg/run.py"] == files["pkg/run.py"]


def test_modules_renamed_with_their_imports() -> None:
    files = {"judge.py": "def grade(x):\n    return x\n",
             "loop.py": "import judge\nfrom judge import grade\nprint(judge.grade(1), grade(2))\n",
             "evals/promptfooconfig.yaml": "tests: file://grader.py\n",
             "evals/grader.py": "def get_assert(output, context):\n    return True\n"}
    result = rename_modules(files)
    renamed = {result.origin[p]: p for p in result.files}
    assert renamed["judge.py"] != "judge.py" and renamed["loop.py"] != "loop.py"
    assert renamed["evals/grader.py"] == "evals/grader.py"  # a config names it
    stem = renamed["judge.py"][:-3]
    assert result.files[renamed["loop.py"]] == (
        f"import {stem}\nfrom {stem} import grade\nprint({stem}.grade(1), grade(2))\n")


NOTEBOOK = json.dumps({"cells": [
    {"cell_type": "markdown", "metadata": {}, "source": ["# A loop\n", "score = 1"]},
    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
     "source": ["%pip install anthropic\n", "import anthropic\n",
                "client = anthropic.Anthropic()"]},
    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
     "source": ["%%bash\n", "echo hi"]},
    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
     "source": ["def judge(answer):\n", "    return client.messages.create(model='m',\n",
                "        messages=[{'role': 'user', 'content': answer}])\n", "!ls\n",
                "verdict = judge('x')"]},
], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.mark.parametrize("name", sorted(REWRITES))
def test_a_notebook_keeps_its_cells_and_magics(name: str) -> None:
    result = REWRITES[name]({"nb.ipynb": NOTEBOOK})
    out = json.loads(result.files["nb.ipynb"])
    before = json.loads(NOTEBOOK)
    assert len(out["cells"]) == len(before["cells"])
    assert out["cells"][0] == before["cells"][0]  # markdown untouched
    assert out["cells"][2] == before["cells"][2]  # a cell magic's cell untouched
    code = ["".join(c["source"]) for c in out["cells"]]
    assert code[1].startswith("%pip install anthropic\n") and "\n!ls\n" in code[3]
    for text in (code[1], code[3]):
        ast.parse("\n".join(line for line in text.splitlines() if line[:1] not in "%!"))
    if name == "names":
        assert "def judge" not in code[3] and "client = " not in code[1]


def test_notebook_cells_split_back() -> None:
    unit = read_unit("nb.ipynb", NOTEBOOK)
    assert unit is not None and unit.text.count(CELL_MARK) == 1
    assert [c.splitlines()[0] for c in split_cells(unit, unit.text)] == [
        "%pip install anthropic", "def judge(answer):"]


def test_every_rewrite_of_every_example_parses(
        rewritten: list[tuple[Case, dict[str, Result]]]) -> None:
    """The rule examples and the fixtures: every rewrite parses, and keeps the files' kinds."""
    for case, results in rewritten:
        for name, result in results.items():
            _parse_all(result.files)
            assert set(result.origin.values()) == set(case.files), (case.name, name)
            assert {p.rsplit(".", 1)[-1] for p in result.files} == \
                {p.rsplit(".", 1)[-1] for p in case.files}, (case.name, name)
