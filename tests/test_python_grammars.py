"""Every Python grammar from 3.8 to 3.14 is read on every supported interpreter (3.10 up).

Each module below uses one construct next to a real finding (a thinking generator's raw text
reaching a judge: EL201; a judge template rendering the generator's plan: EL102; a grader
shown a run's intermediate steps: EL202), and the finding must come at the line and column
of the source as written, whether the interpreter reads the construct itself or
:mod:`evallint.pygrammar` rewrites it into older syntax first.

Run under another interpreter (CI runs it under the oldest supported one)::

    .venv/bin/python -m tests.test_python_grammars /root/.pyenv/versions/3.10.13/bin/python

makes (once) a virtual environment with that interpreter in the temporary directory
(``evallint-py3.10``; a second argument names another folder), installs the project there
(``pip install -e .[dev]``: the package index must be reachable) and runs this file's tests
in it; an interpreter that does not exist is skipped with a note.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evallint.pygrammar import parse_module, rewrite
from tests.conftest import lint_tree, write_files

CODES = {"EL102", "EL201", "EL202", "EL901"}
VERSION = sys.version_info[:2]

LLM = """\
import anthropic

client = anthropic.Anthropic()


def generate(task):
    resp = client.messages.create(
        model="claude-sonnet-4-5", max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 2000},
        messages=[{"role": "user", "content": task}])
    return resp.content[0].text


def judge(task, answer):
    resp = client.messages.create(model="claude-haiku-4-5", max_tokens=300,
                                  system="You are a grader. Score the answer from 1 to 5.",
                                  messages=[{"role": "user", "content": answer}])
    return resp.content[0].text
"""

HEAD = 'from llm import generate, judge\n\nstate = {"topic": "algebra"}\n\n\n'

# (name, the grammar it needs, the module; the finding is at its one call of "judge(")
CASES: list[tuple[str, tuple[int, int], str]] = [
    ("walrus", (3, 8), """\
        def step(task):
            if (n := len(task)) > 1: return judge(task, (draft := generate(task[:n])))
        """),
    ("positional-only parameters", (3, 8), """\
        def step(task, /, *, retries=1): draft = generate(task); return judge(task, draft)
        """),
    ("parenthesized context managers", (3, 10), """\
        def step(task):
            draft = generate(task)
            with (open("a") as a, open("b") as b): return judge(task, draft)
        """),
    ("match statement", (3, 10), """\
        def step(task):
            draft = generate(task)
            match draft:
                case str() if draft: return judge(task, draft)
        """),
    ("except*", (3, 11), """\
        def step(task):
            draft = generate(task)
            try:
                check(draft)
            except* ValueError: verdict = judge(task, draft)
            except *TypeError: pass
        """),
    ("star expressions in subscripts and annotations (PEP 646)", (3, 11), """\
        def step(*task: *Ts) -> tuple[*Ts]: draft = generate(task); return judge(task, draft)
        """),
    ("nested quotes in an f-string (PEP 701)", (3, 12), """\
        def step(task):
            draft = generate(f"Topic {state["topic"]}: {task}")
            note = f"{state["topic"]!r:>{len(state['topic'])}}"; return judge(task, draft)
        """),
    ("an f-string field over lines, with a comment (PEP 701)", (3, 12), """\
        def step(task):
            draft = generate(task)
            note = f"{
                state["topic"]  # the "topic", quoted
            }"; return judge(task, draft)
        """),
    ("backslashes and five levels of f-strings (PEP 701)", (3, 12), """\
        def step(task):
            draft = generate(task)
            note = f"{"\\n".join(f"- {f"{f"{f"{x}"}"}"}" for x in task)}"; return judge(task, draft)
        """),
    ("type parameters (PEP 695)", (3, 12), """\
        class Loop[T: str, *Ts, **P]:
            def step[U](self, task: T) -> U: draft = generate(task); return judge(task, draft)
        """),
    ("type parameters over lines (PEP 695)", (3, 12), """\
        def step[
            T,  # the task's type
        ](task: T) -> T:
            draft = generate(task); return judge(task, draft)
        """),
    ("type statements (PEP 695)", (3, 12), """\
        type Pair[T] = tuple[T, T]
        def step(task):
            type Verdict = str; draft = generate(task); return judge(task, draft)
        """),
    ("type parameter defaults (PEP 696)", (3, 13), """\
        def step[T = str, *Ts = *tuple[int]](task: T) -> T: return judge(task, generate(task))
        """),
    ("except without parentheses (PEP 758)", (3, 14), """\
        def step(task):
            draft = generate(task)
            try:
                return int(draft)
            except ValueError, TypeError: return judge(task, draft)
        """),
    ("template strings (PEP 750)", (3, 14), """\
        def step(task):
            draft = generate(task)
            shown = t"{state["topic"]!r}: {task}"; return judge(task, draft)
        """),
]


def lint(tmp_path: Path, files: dict[str, str]) -> list[Any]:
    write_files(tmp_path, files)
    result = lint_tree(tmp_path, CODES)
    assert not result.tool_errors, result.tool_errors
    return list(result.findings)


def position(text: str, needle: str) -> tuple[int, int]:
    """1-based line and column of ``needle``'s only occurrence in ``text``."""
    assert text.count(needle) == 1, needle
    before = text[:text.index(needle)]
    return before.count("\n") + 1, len(before) - before.rfind("\n")


def native(version: tuple[int, int]) -> bool:
    return version <= VERSION


@pytest.mark.parametrize(("name", "version", "body"), CASES, ids=[c[0] for c in CASES])
def test_a_construct_of_any_grammar_keeps_the_finding_beside_it(
        tmp_path: Path, name: str, version: tuple[int, int], body: str) -> None:
    loop = HEAD + textwrap.dedent(body)
    if not native(version):  # the interpreter cannot read it: the fallback must
        with pytest.raises(SyntaxError):
            ast.parse(loop)
    found = lint(tmp_path, {"llm.py": LLM, "loop.py": loop})
    assert [(f.code, f.path, f.line, f.column) for f in found] == [
        ("EL201", "loop.py", *position(loop, "judge("))], name


def test_a_judge_template_on_a_rewritten_line_is_reported_at_its_variable(
        tmp_path: Path) -> None:
    # ``type Plan = str;`` is deleted before the rewritten line is parsed: the string's
    # column, and so the variable's, are mapped back
    prompts = ('type Plan = str; CHECKER_PROMPT = ("You are a strict judge. Score the result '
               'from 1 to 10. Plan: {plan} " "Result: <result>{result}</result>")\n')
    found = lint(tmp_path, {"checks/prompts.py": prompts})
    assert [(f.code, f.line, f.column) for f in found] == [
        ("EL102", *position(prompts, "plan} "))]


def test_a_key_in_a_nested_quote_f_string_stays_a_name_of_the_flow(tmp_path: Path) -> None:
    grade = """\
from openai import OpenAI

client = OpenAI()


def grade_answer(run):
    r = client.chat.completions.create(model="gpt-4o-mini", messages=[
        {"role": "system", "content": "You are a grader. Score the final answer from 1 to 5."},
        {"role": "user", "content": f"{run["final_answer"]}: {run["intermediate_steps"]}"}])
    return r.choices[0].message.content
"""
    [f] = lint(tmp_path, {"grade.py": grade})
    assert (f.code, f.line, f.column) == ("EL202", 7, 9)
    assert "`run.intermediate_steps`" in f.message  # the key, read through the rewrite
    (tmp_path / "grade.py").write_text(grade.replace(': {run["intermediate_steps"]}', ""))
    assert lint(tmp_path, {}) == []  # the other key alone is no generator context


def test_a_notebook_cell_in_a_newer_grammar_is_analysed_not_skipped(tmp_path: Path) -> None:
    cells = [LLM, 'state = {"topic": "algebra"}\ndraft = generate("q")',
             'note = f"{state["topic"]}"; verdict = judge("q", draft)']
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [],
                     "execution_count": None} for c in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    found = lint(tmp_path, {"loop.ipynb": json.dumps(nb)})
    assert [(f.code, f.cell, f.line, f.column) for f in found] == [
        ("EL201", 3, 1, cells[2].index("judge") + 1)]


BROKEN = [
    "import anthropic\n\ndef judge(:\n    pass\n",
    # a real error after a construct of a newer grammar: libcst refuses the file too
    'import anthropic\nx = f"{state["topic"]}"\ntype X = int\nprint "hello"\n',
    'import anthropic\n\ndef f[T](x):\n    return x +\n',
]


@pytest.mark.parametrize("code", BROKEN)
def test_a_real_syntax_error_is_el901_at_pythons_own_position(tmp_path: Path,
                                                               code: str) -> None:
    with pytest.raises(SyntaxError) as err:
        ast.parse(code)
    with pytest.raises(SyntaxError) as ours:
        parse_module(code)
    assert (ours.value.msg, ours.value.lineno, ours.value.offset) == (
        err.value.msg, err.value.lineno, err.value.offset)
    [f] = lint(tmp_path, {"loop.py": code})
    assert (f.code, f.line, f.column) == ("EL901", err.value.lineno, err.value.offset)
    assert err.value.msg in f.message


# ---------------------------------------------------------------------------- the rewrite

# (source, names and values it defines: the rewritten code run on this interpreter must give
# the values Python 3.12+ gives the source)
SEMANTICS: list[tuple[str, dict[str, object]]] = [
    ('d = {"k": "v"}\nx = f"{d["k"]}-{d[\'k\']!r}"\n', {"x": "v-'v'"}),
    ('x = f"{"\\n".join(["a", "b"])}|{"\\t"}|{"\\\\"}"\n', {"x": "a\nb|\t|\\"}),
    ('x = f"{f"{f"{f"{f"{1}"}"}"}"}"\n', {"x": "1"}),
    ('x = f"{f"{f"{f"{f"a{1}\\n{2!r:>3}{3=}"}"}"}"}"\n', {"x": "a1\n  23=3"}),
    ('v = 7\nx = f"{v:{"<"}{5:{1}}}|"\n', {"x": "7    |"}),
    ('x = f"{\n  1  # one\n  + 2}" + rf"\\d{"y"}"\n', {"x": "3\\dy"}),
    ("x = f'''{'''a\\nb'''.upper()}''' + f'{\"q\" + \"\"\"r\"\"\"}'\n", {"x": "A\nBqr"}),
    ('x = f"""{\n"""a\\tb\nc""".join("xy")}"""\n', {"x": "xa\tb\ncy"}),
    ('x = f"it\'s {"a"} \\"{"b"}\\""\n', {"x": "it's a \"b\""}),
    ('x = t"{1}"\n', {"x": "1"}),
    ('x = f"{"a" "\\n" f"{1}"}|{f"{f"{f"{f"{"b" "c"}"}"}"}"}"\n', {"x": "a\n1|bc"}),
]


@pytest.mark.parametrize(("code", "values"), SEMANTICS, ids=range(len(SEMANTICS)))
def test_a_rewritten_f_string_has_the_same_value(code: str, values: dict[str, object]) -> None:
    rewritten = rewrite(code, min(VERSION, (3, 11)))
    assert rewritten is not None
    assert rewritten.code.count("\n") == code.count("\n")  # no line joined or split
    scope: dict[str, object] = {}
    exec(compile(rewritten.code, "<rewritten>", "exec"), scope)
    assert {k: scope[k] for k in values} == values


def names(tree: ast.AST) -> list[tuple[str, int, int, int | None, int | None]]:
    return sorted((n.id, n.lineno, n.col_offset, n.end_lineno, n.end_col_offset)
                  for n in ast.walk(tree) if isinstance(n, ast.Name))


# columns: (source, the names the rewrite keeps with their exact places)
COLUMNS = [
    'é = f"{ü["ß"]}" + f"{\n a # c\n}" + z\n',
    "def f[T: int](x: T, é=1) -> T: return g(x)\n",
    "class C[\n T\n](B): y = h(T)\n",
    "type X[T] = list[T]; y = z\n",
    "try: pass\nexcept A, B: c = d\n",
    "try: pass\nexcept* A: c = d\n",
    "def f(*a: *Ts) -> tuple[*Ts]: return g(a)\n",
    'x = t"{a["k"]}" + f"{"\\n".join(b)}" + z\n',
]


@pytest.mark.parametrize("code", COLUMNS, ids=range(len(COLUMNS)))
def test_names_keep_the_columns_of_the_source(code: str) -> None:
    rewritten = rewrite(code, (3, 10))
    assert rewritten is not None
    tree = rewritten.parse()
    assert tree is not None
    lines = code.splitlines()
    for name, line, col, end_line, end_col in names(tree):
        text = lines[line - 1].encode()
        if name in ("chr",):  # written by the rewrite
            continue
        assert text[col:end_col].decode() == name, (name, line, col)
        assert end_line == line


NEWER = [p for p in ("/root/.pyenv/versions/3.13.0/bin/python",
                     "/root/.pyenv/versions/3.12.1/bin/python") if os.access(p, os.X_OK)]


@pytest.mark.skipif(not NEWER, reason="no Python 3.12+ interpreter to compare with")
def test_positions_equal_those_a_newer_interpreter_gives() -> None:
    """Every name outside the dropped type parameters is where Python 3.12+ puts it."""
    sources = [c for c in COLUMNS if "except A, B" not in c and 't"' not in c]
    dump = ("import ast, json, sys\n"
            "print(json.dumps([sorted([n.id, n.lineno, n.col_offset, n.end_lineno, "
            "n.end_col_offset] for n in ast.walk(ast.parse(s)) if isinstance(n, ast.Name)) "
            "for s in json.loads(sys.stdin.read())]))")
    out = subprocess.run([NEWER[0], "-c", dump], input=json.dumps(sources), text=True,
                         capture_output=True, check=True).stdout
    for code, theirs in zip(sources, json.loads(out), strict=True):
        rewritten = rewrite(code, (3, 10))
        assert rewritten is not None
        tree = rewritten.parse()
        assert tree is not None
        ours = {tuple(n) for n in names(tree)}
        # the type parameters' bounds are not in the rewritten tree; nothing else is missing
        missing = {tuple(n) for n in theirs} - ours
        assert all(n[0] in ("T", "int", "Ts") for n in missing), (code, missing)


DEEP = {  # libcst's native parser crashes the process (no exception) on such nesting
    "lambdas": "x = " + "lambda: " * 5000 + "1",
    "nested f-strings": "x = " + 'f"{' * 1500 + "1" + '}"' * 1500,
    "unary minus over continuation lines": "x = " + "- \\\n" * 10000 + "1",
    "brackets over lines": "x = " + "(\n" * 5000 + "1" + ")" * 5000,
    "an attribute chain in a field": 'x = f"{a' + ".b" * 8000 + '}"',
}


@pytest.mark.parametrize("body", DEEP.values(), ids=list(DEEP))
def test_nesting_libcst_cannot_take_is_refused_before_it_is_parsed(body: str) -> None:
    # a construct of 3.14 first: every older interpreter hands the file to the fallback
    code = 'import anthropic\nt = t"{x}"\n' + body + "\n"
    probe = ("import sys\nfrom evallint.pygrammar import parse_module\n"
             "try:\n    parse_module(sys.stdin.read())\n    print('parsed')\n"
             "except (SyntaxError, RecursionError, MemoryError) as e:\n"
             "    print(type(e).__name__)")
    done = subprocess.run([sys.executable, "-c", probe], input=code, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]  # (a crash is -11)
    assert done.stdout.split() != ["parsed"]


def test_deep_but_ordinary_nesting_is_still_read() -> None:
    # (700 levels: Python 3.12's own C recursion limit stops libcst's codegen near 750)
    code = ('x = f"{d["k"]}"\ny = ' + " + ".join(["a"] * 700) + "\nz = "
            + "(" * 150 + "1" + ")" * 150 + "\n")
    rewritten = rewrite(code, (3, 10))
    assert rewritten is not None and rewritten.parse() is not None


def test_ordinary_code_never_imports_libcst() -> None:
    """The front-end's fast path is ``ast.parse`` alone: the fallback module and libcst are
    imported for a file Python refuses, and only then."""
    probe = ("import sys\nfrom evallint.frontends.python_front import _parse\n"
             "_parse('x = f\"{y}\"\\n')\n"
             "print('evallint.pygrammar' in sys.modules, 'libcst' in sys.modules)\n"
             "try:\n    _parse('def f(:\\n')\nexcept SyntaxError:\n    pass\n"
             "print('evallint.pygrammar' in sys.modules, 'libcst' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    # (from 3.14 on, no grammar is newer: libcst is not tried at all)
    assert out == ["False", "False", "True", "True" if VERSION < (3, 14) else "False"]


# ---------------------------------------------------------------------------- under 3.10


def _run_under(argv: list[str]) -> int:
    """``python -m tests.test_python_grammars PYTHON [VENV]``: these tests under ``PYTHON``."""
    python = argv[0] if argv else "/root/.pyenv/versions/3.10.13/bin/python"
    if not os.access(python, os.X_OK):
        print(f"note: no interpreter at {python}: the grammar tests ran only under "
              f"{sys.version.split()[0]}")
        return 0
    root = Path(__file__).resolve().parent.parent
    tag = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    venv = Path(argv[1]) if len(argv) > 1 else Path(tempfile.gettempdir()) / (
        f"evallint-py{tag}")
    bin_dir = venv / "bin"
    if not (bin_dir / "pytest").exists():
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(bin_dir / "pip"), "install", "-q", "-e", ".[dev]"], cwd=root,
                       check=True)
    return subprocess.run([str(bin_dir / "python"), "-m", "pytest", "-q", "-p",
                           "no:cacheprovider", "tests/test_python_grammars.py"],
                          cwd=root).returncode


if __name__ == "__main__":
    sys.exit(_run_under(sys.argv[1:]))


def test_the_warnings_python_raises_about_a_users_code_are_not_printed() -> None:
    """``"C:\\cache"`` is an invalid escape: ``ast.parse`` warns about it (a SyntaxWarning
    printed to stderr on 3.12+, a DeprecationWarning before), and that warning is about the
    user's file, not a message of evallint's."""
    import warnings

    code = 'import openai\nCACHE = "C:\\cache\\answers"\n'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ast.parse(code)
    assert caught, "the interpreter no longer warns: the test shows nothing"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tree = parse_module(code)
    assert [str(w.message) for w in caught] == []
    assert isinstance(tree.body[1], ast.Assign)
