"""The Python/notebook front-end: LLM call-site recognition, prefilter, parse errors, cells."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evallint.config import Config
from evallint.findings import Severity
from evallint.frontends.python_front import module_name, parse_python
from evallint.pyflow.analysis import Analysis
from evallint.pyflow.ir import PythonFacts
from evallint.roles import Role
from evallint.source import SourceFile
from tests.conftest import lint_tree, write_files

PY_CODES = {"EL201", "EL202", "EL203", "EL301", "EL302", "EL401", "EL501", "EL502", "EL503",
            "EL504", "EL505", "EL901", "EL902"}


def facts_of(rel: str, text: str) -> PythonFacts:
    facts = parse_python(SourceFile(Path(rel), rel, text, text.encode()), Config())
    assert isinstance(facts, PythonFacts)
    return facts


def calls_of(files: dict[str, str], config: Config | None = None) -> list[Any]:
    facts = [facts_of(rel, text) for rel, text in files.items()]
    return Analysis(facts, config or Config()).run().calls


def notebook(*cells: tuple[str, str]) -> str:
    out = []
    for kind, src in cells:
        cell: dict[str, Any] = {"cell_type": kind, "metadata": {}, "source": src}
        if kind == "code":
            cell.update(outputs=[], execution_count=None)
        out.append(cell)
    return json.dumps({"cells": out, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


SDK_CASES = [
    ("import anthropic\nc = anthropic.Anthropic()\n"
     "def judge(a):\n    return c.messages.create(model='m', max_tokens=1, messages=a)\n",
     "c.messages.create"),
    ("from anthropic import AsyncAnthropic\nc = AsyncAnthropic()\n"
     "async def judge(a):\n"
     "    return await c.messages.create(model='m', max_tokens=1, messages=a)\n",
     "c.messages.create"),
    ("import anthropic\nc = anthropic.AnthropicBedrock()\n"
     "def judge(a):\n    with c.messages.stream(model='m', max_tokens=1, messages=a) as s:\n"
     "        return s.get_final_text()\n", "c.messages.stream"),
    ("import anthropic\nc = anthropic.Anthropic()\n"
     "def judge(a):\n    return c.beta.messages.parse(model='m', max_tokens=1, messages=a)\n",
     "c.beta.messages.parse"),
    ("import anthropic\nc = anthropic.Anthropic()\n"
     "def judge(a):\n    return c.messages.batches.create(requests=a)\n",
     "c.messages.batches.create"),
    ("from openai import AzureOpenAI\nc = AzureOpenAI()\n"
     "def judge(a):\n    return c.chat.completions.create(model='m', messages=a)\n",
     "c.chat.completions.create"),
    ("from openai import OpenAI\nc = OpenAI()\n"
     "def judge(a):\n    return c.responses.create(model='m', input=a)\n", "c.responses.create"),
    ("import litellm\n"
     "def judge(a):\n    return litellm.completion(model='m', messages=a)\n", "litellm.completion"),
    ("from litellm import acompletion\n"
     "async def judge(a):\n    return await acompletion(model='m', messages=a)\n", "acompletion"),
]


@pytest.mark.parametrize(("code", "callee"), SDK_CASES, ids=[c for _, c in SDK_CASES])
def test_sdk_call_sites_are_recognised_with_a_role(code: str, callee: str) -> None:
    calls = calls_of({"judge_mod.py": code})
    assert [(c.callee, c.role) for c in calls] == [(callee, Role.EVALUATOR)]
    assert calls[0].evidence == ("function name `judge`",)


def test_a_method_named_create_on_an_unrelated_client_is_not_an_llm_call() -> None:
    code = ("from twilio.rest import Client\nclient = Client()\n"
            "def judge(to):\n    return client.messages.create(to=to, body='hi')\n")
    assert calls_of({"sms.py": code}) == []


def test_a_word_in_a_string_is_not_a_call() -> None:
    code = 'DOC = "judge(x) calls client.messages.create(model=JUDGE_MODEL)"\n'
    assert calls_of({"doc.py": code}) == []


def test_prefilter_skips_files_without_llm_words() -> None:
    facts = facts_of("pkg/util.py", "def add(a, b):\n    return a + b\n")
    assert not facts.analyzed and facts.functions == {}
    assert facts.module == "pkg.util"


def test_module_names() -> None:
    assert module_name("src/pkg/helpers.py") == "src.pkg.helpers"
    assert module_name("pkg/__init__.py") == "pkg"
    assert module_name("loop.ipynb") == "loop"


def test_constants_aliases_env_defaults_dicts_and_class_attributes() -> None:
    facts = facts_of("cfg.py", (
        "import os\nDEFAULT_MODEL = 'claude-sonnet-4-5'\nJUDGE_MODEL = DEFAULT_MODEL\n"
        "EVAL_MODEL = os.getenv('EVAL_MODEL', 'claude-haiku-4-5')\n"
        "CFG = {'judge': {'model': 'gpt-4o-mini'}}\n"
        "class Settings:\n    judge_model = 'o3'\n"))
    c = facts.constants
    assert c["JUDGE_MODEL"].ref == ("name", "DEFAULT_MODEL")
    assert c["EVAL_MODEL"].ref == ("env", "EVAL_MODEL", ("lit", "claude-haiku-4-5"))
    assert c["CFG.judge.model"].ref == ("lit", "gpt-4o-mini")
    assert c["Settings.judge_model"].ref == ("lit", "o3")


def test_relative_imports_resolve_against_the_package() -> None:
    facts = facts_of("pkg/sub/loop.py", "from ..llm import ask\nfrom . import judge_prompts\n"
                                        "import openai as oa\n")
    assert facts.imports == {"ask": "pkg.llm.ask", "judge_prompts": "pkg.sub.judge_prompts",
                             "oa": "openai"}


def test_syntax_error_is_el901_at_the_real_position(tmp_path: Path) -> None:
    write_files(tmp_path, {"loop.py": "import anthropic\n\ndef judge(:\n    pass\n"})
    result = lint_tree(tmp_path, PY_CODES)
    [f] = result.findings
    assert (f.code, f.line) == ("EL901", 3)
    assert "syntax" in f.message.lower()


def test_syntax_error_in_a_non_llm_file_is_not_parsed_at_all(tmp_path: Path) -> None:
    # the prefilter decides no CST is needed: evallint has nothing to say about this file
    write_files(tmp_path, {"util.py": "def f(:\n"})
    assert lint_tree(tmp_path, PY_CODES).findings == []


def test_notebook_invalid_json_is_el901(tmp_path: Path) -> None:
    write_files(tmp_path, {"nb.ipynb": '{"cells": [\n  {"cell_type": "code",,}\n]}'})
    [f] = lint_tree(tmp_path, PY_CODES).findings
    assert (f.code, f.line) == ("EL901", 2)


def test_notebook_syntax_error_maps_to_the_cell_and_is_a_note(tmp_path: Path) -> None:
    nb = notebook(("code", "import anthropic\n"), ("markdown", "# x"),
                  ("code", "x = 1\ndef judge(:\n"))
    write_files(tmp_path, {"nb.ipynb": nb})
    [f] = lint_tree(tmp_path, PY_CODES).findings
    assert (f.code, f.cell, f.line, f.severity) == ("EL901", 2, 2, Severity.NOTE)
    assert f.message.startswith("cell 2 skipped: syntax error at line 2")


def test_a_broken_cell_is_skipped_and_the_rest_analysed(tmp_path: Path) -> None:
    cells = [NB_LOOP[0], ("code", "for x in y:\nprint(x)"), *NB_LOOP[1:]]
    write_files(tmp_path, {"nb.ipynb": notebook(*cells)})
    found = [(f.code, f.cell, f.severity) for f in lint_tree(tmp_path, PY_CODES).findings]
    assert found == [("EL901", 2, Severity.NOTE), ("EL201", 3, Severity.ERROR)]


def test_a_cell_libcst_rejects_is_skipped_too(tmp_path: Path) -> None:
    cells = [NB_LOOP[0], ("code", "\U00013460 = 1"), *NB_LOOP[1:]]
    write_files(tmp_path, {"nb.ipynb": notebook(*cells)})
    found = [(f.code, f.cell, f.severity) for f in lint_tree(tmp_path, PY_CODES).findings]
    assert found == [("EL901", 2, Severity.NOTE), ("EL201", 3, Severity.ERROR)]


@pytest.mark.parametrize("line", [
    "cd ..", "pip install -q anthropic", "load_ext autoreload", "anthropic.Anthropic?",
    "rm -rf out/", "pip install \\\n    anthropic==0.40 \\\n    pandas",
    "!curl http://x \\\n  -H 'a: b' \\\n  -d '{}'",
])
def test_automagic_lines_are_magics(tmp_path: Path, line: str) -> None:
    cells = [("code", line), *NB_LOOP]
    write_files(tmp_path, {"nb.ipynb": notebook(*cells)})
    found = [(f.code, f.cell) for f in lint_tree(tmp_path, PY_CODES).findings]
    assert found == [("EL201", 3)]


def test_a_magic_name_used_as_python_is_python() -> None:
    code = "import anthropic\nenv = {\n    'a': 1,\n}\ntime = 3\ncd = env['a'] + time\n"
    facts = facts_of("nb.ipynb", notebook(("code", code)))
    assert facts.skipped_cells == ()
    assert {"env", "time", "cd"} <= set(facts.constants)


NB_LOOP = (
    ("code", "%load_ext autoreload\nimport anthropic\nfiles = !ls\nclient = anthropic.Anthropic()"),
    ("markdown", "## generate and judge"),
    ("code", "r = client.messages.create(model='claude-sonnet-4-5', max_tokens=9,\n"
             "    messages=[{'role': 'user', 'content': 'Think step by step: q'}])\n"
             "v = client.messages.create(model='claude-haiku-4-5', max_tokens=9,\n"
             "    system='You are a judge.',\n"
             "    messages=[{'role': 'user', 'content': r.content[0].text}])"),
)


def test_notebook_positions_are_cell_and_line_and_magics_are_skipped(tmp_path: Path) -> None:
    write_files(tmp_path, {"nb.ipynb": notebook(*NB_LOOP)})
    result = lint_tree(tmp_path, PY_CODES)
    assert [(f.code, f.cell, f.line) for f in result.findings] == [("EL201", 2, 3)]
    assert "nb.ipynb:cell 2:1" in result.findings[0].message


def test_notebook_suppression_in_a_cell(tmp_path: Path) -> None:
    cells = list(NB_LOOP)
    kind, src = cells[2]
    cells[2] = (kind, src.replace("v = client", "# evallint: ignore[EL201] -- demo cell\n"
                                                "v = client"))
    write_files(tmp_path, {"nb.ipynb": notebook(*cells)})
    assert lint_tree(tmp_path, PY_CODES).findings == []


def test_notebook_suppression_in_another_cell_does_not_apply(tmp_path: Path) -> None:
    cells = list(NB_LOOP)
    cells[0] = (cells[0][0], "# evallint: ignore[EL201] -- wrong cell\n" + cells[0][1])
    write_files(tmp_path, {"nb.ipynb": notebook(*cells)})
    codes = sorted(f.code for f in lint_tree(tmp_path, PY_CODES).findings)
    assert codes == ["EL201", "EL902"]


def test_python_suppression_with_reason(tmp_path: Path) -> None:
    write_files(tmp_path, {"loop.py": (
        "import anthropic\nc = anthropic.Anthropic()\n"
        "def judge(a):\n"
        "    return c.messages.create(model='m', max_tokens=1, tools=[{'type': 'bash_20250124',"
        " 'name': 'bash'}], messages=a)  # evallint: ignore[EL401] -- sandboxed grader\n")})
    assert lint_tree(tmp_path, PY_CODES).findings == []


TRICKY = '''\
import anthropic  # é à
c = anthropic.Anthropic()


@decorate(c.x(1))
def judge(a, b=f(g(1))):
    s = "ünïcode"; t = h(s)(k(2))
    msg = f"{c.messages.create(model='m', max_tokens=1, messages=a)} {len(b)}"
    d = {"k": f(1), g(2): [x(i) for i in y(3) if z(i)]}
    return (lambda q: q)(msg) if t else d
'''


def test_call_positions_agree_with_libcst_position_provider() -> None:
    """The analysis reads ``ast``; its columns (UTF-8 bytes there) must still be the character
    columns an editor shows, which libcst's PositionProvider computes independently."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from evallint.pyflow.build import TEXT_BLOCKS


    root = Path(__file__).resolve().parents[1] / "fixtures"
    sources = [TRICKY] + [p.read_text() for p in sorted(root.rglob("*.py"))]
    checked = 0
    for code in sources:
        wrapper = MetadataWrapper(cst.parse_module(code))
        spans = wrapper.resolve(PositionProvider)
        exact = {(r.start.line, r.start.column + 1) for n, r in spans.items()
                 if isinstance(n, cst.Call)}
        facts = parse_python(SourceFile(Path("m.py"), "m.py", code, code.encode()), Config())
        assert isinstance(facts, PythonFacts)
        if not facts.analyzed:
            continue
        for fn in facts.functions.values():
            for call in fn.calls:
                if call.func == TEXT_BLOCKS:  # stands for a comprehension, not a call
                    continue
                assert (call.pos.line, call.pos.column) in exact, (call.func, code[:40])
                checked += 1
    assert checked > 50


def test_an_identifier_libcst_rejects_is_el901_not_a_crash(tmp_path: Path) -> None:
    write_files(tmp_path, {"judge.py": "import anthropic\n\U00013460 = 1\n"})
    [f] = lint_tree(tmp_path, PY_CODES).findings
    assert (f.code, f.line) == ("EL901", 2)


def test_a_notebook_call_uses_the_definition_made_before_it(tmp_path: Path) -> None:
    # cell 2 grades by exact match; cell 3 redefines grade() as an LLM judge: only the call
    # after the redefinition reaches an evaluator
    gen = ("code", "import anthropic\nclient = anthropic.Anthropic()\n"
                   "out = client.messages.create(model='claude-sonnet-4-5', max_tokens=9,\n"
                   "    messages=[{'role': 'user', 'content': 'Think step by step: q'}])"
                   ".content[0].text\n")
    exact = ("code", "def grade(output, gold):\n    return output == gold\n\nok = grade(out, 'a')")
    judge = ("code", "def grade(output, gold):\n"
                     "    return client.messages.create(model='claude-haiku-4-5', max_tokens=9,\n"
                     "        system='You are a judge.',\n"
                     "        messages=[{'role': 'user', 'content': output + gold}])\n\n"
                     "ok = grade(out, 'a')")
    write_files(tmp_path, {"nb.ipynb": notebook(gen, exact, judge)})
    found = [(f.code, f.cell, f.line) for f in lint_tree(tmp_path, PY_CODES).findings]
    assert found == [("EL201", 3, 6)]
