"""The project analysis in independent parts: how a project splits, and that an edit solves
only its own part again while the findings stay those of a run without the cache."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from evallint.config import parse_config
from evallint.engine import run_check
from evallint.facts import Pos
from evallint.pyflow import analysis
from evallint.pyflow.ir import PythonFacts
from evallint.pyflow.parts import Part, names_digest, plan, relevant_modules
from evallint.pyflow.project import merge
from evallint.pyflow.results import Event, Result
from evallint.pyflow.summaries import Tables
from tests.conftest import lint_tree, write_files

LLM = """\
import anthropic

client = anthropic.Anthropic()


def llm_call(prompt, model="claude-sonnet-4-5"):
    r = client.messages.create(model=model, max_tokens=9,
                               messages=[{"role": "user", "content": prompt}])
    return r.content[0].text
"""


def loop(helper: str, judge_model: str) -> str:
    return (f"from {helper} import llm_call\n\n\ndef generate(t):\n    return llm_call(t)\n\n\n"
            f"def judge(a):\n    return llm_call(a, model={judge_model!r})\n")


def findings(root: Path, cache: bool = True) -> list[tuple[str, str, int]]:
    """The EL301/EL302 findings of a check of ``root`` (the working folder)."""
    cfg = parse_config({}, source=None, root=root)
    cfg.respect_gitignore = False
    result = run_check(["."], cfg, {"EL301", "EL302"}, jobs=1, use_cache=cache)
    assert not result.tool_errors
    return sorted((f.code, f.path, f.line) for f in result.findings)


def parts_of(tmp_path: Path, files: dict[str, str]) -> list[Part]:
    write_files(tmp_path, files)
    result = lint_tree(tmp_path, {"EL301"})
    facts = [f for f in result.project.files.values() if isinstance(f, PythonFacts)]
    tables = Tables(facts)
    return plan(facts, tables, relevant_modules(tables))


def groups(parts: list[Part]) -> list[list[str]]:
    return sorted(sorted(p.paths) for p in parts)


def test_modules_that_do_not_import_each_other_are_separate_parts(tmp_path: Path) -> None:
    parts = parts_of(tmp_path, {"a/llm.py": LLM, "a/loop.py": loop("llm", "claude-sonnet-4-5"),
                                "b/helper.py": LLM, "b/run.py": loop("helper", "x")})
    assert groups(parts) == [["a/llm.py", "a/loop.py"], ["b/helper.py", "b/run.py"]]


def test_an_import_joins_two_parts(tmp_path: Path) -> None:
    both = "from helper import llm_call as other\n" + loop("llm", "x")
    parts = parts_of(tmp_path, {"llm.py": LLM, "loop.py": both, "helper.py": LLM,
                                "alone.py": LLM})
    assert groups(parts) == [["alone.py"], ["helper.py", "llm.py", "loop.py"]]


def test_users_of_a_framework_with_an_ambient_model_are_one_part(tmp_path: Path) -> None:
    # dspy.configure in one file sets the model of every dspy module in the project
    conf = "import dspy\ndspy.configure(lm=dspy.LM('openai/gpt-4o'))\n"
    use = "import dspy\nqa = dspy.Predict('question -> answer')\nqa(question='q')\n"
    parts = parts_of(tmp_path, {"setup_lm.py": conf, "pipeline/qa.py": use,
                                "other/llm.py": LLM})
    assert groups(parts) == [["other/llm.py"], ["pipeline/qa.py", "setup_lm.py"]]


def test_a_file_without_llm_words_importing_helpers_of_two_parts_joins_them(
        tmp_path: Path) -> None:
    # the prefilter skips main.py; the analysis loads it because it imports LLM helpers
    main = "from one import llm_call\nfrom two import llm_call as b\n\nb(llm_call('x'))\n"
    parts = parts_of(tmp_path, {"one.py": LLM, "two.py": LLM, "main.py": main})
    assert groups(parts) == [["one.py", "two.py"]]
    assert [f.path for f in parts[0].skipped] == ["main.py"]


def test_a_part_reads_the_modules_its_modules_import(tmp_path: Path) -> None:
    prompts = "JUDGE_MODEL = 'claude-sonnet-4-5'\n"
    run = "from prompts import JUDGE_MODEL\n" + loop("llm", "x")
    parts = parts_of(tmp_path, {"llm.py": LLM, "run.py": run, "prompts.py": prompts,
                                "unrelated.py": "import os\nprint(os.sep)\n"})
    assert groups(parts) == [["llm.py", "run.py"]]
    assert parts[0].inputs == {"llm.py", "run.py", "prompts.py"}


def test_the_module_names_digest_follows_files_added_and_renamed() -> None:
    a = [PythonFacts(path="a.py", kind="python", module="a")]
    b = [PythonFacts(path="b.py", kind="python", module="b")]
    assert names_digest(a) == names_digest(list(a))
    assert names_digest(a) != names_digest(b)
    assert names_digest(a) != names_digest(a + b)


def test_merged_results_are_ordered_by_module() -> None:
    def ev(path: str, line: int) -> Event:
        return Event("EL502", path, Pos(line, 0), "k")

    first = Result(events=[ev("z.py", 3), ev("z.py", 1)])
    second = Result(events=[ev("a.py", 2)])
    out = merge([first, second], {"a.py": 0, "z.py": 1})
    assert [(e.path, e.pos.line) for e in out.events] == [("a.py", 2), ("z.py", 3), ("z.py", 1)]


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[set[str]]]:
    """The modules of every part solved (the analysis of a part ran)."""
    solved: list[set[str]] = []
    original = analysis.Analysis.run

    def run(self: analysis.Analysis) -> Result:
        solved.append(set(self.relevant))
        return original(self)

    monkeypatch.setattr(analysis.Analysis, "run", run)
    yield solved


def test_an_edit_solves_only_its_own_part_again(tmp_path: Path, counted: list[set[str]],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    files = {"a/llm.py": LLM, "a/loop.py": loop("llm", "claude-sonnet-4-5"),
             "b/helper.py": LLM, "b/run.py": loop("helper", "claude-haiku-4-5"),
             "c/prompts.py": "JUDGE = 'x'\n"}
    write_files(tmp_path, files)
    monkeypatch.chdir(tmp_path)

    def check(cache: bool = True) -> list[tuple[str, str, int]]:
        return findings(tmp_path, cache)

    first = check()
    assert first == [("EL301", "a/loop.py", 9)]
    assert len(counted) == 2  # cold: both parts
    counted.clear()
    assert check() == first
    assert counted == []  # warm: nothing solved
    (tmp_path / "b/run.py").write_text(loop("helper", "claude-sonnet-4-5"))
    edited = check()
    assert counted == [{"b/helper.py", "b/run.py"}]  # only the edited part
    counted.clear()
    assert edited == check(cache=False) == [("EL301", "a/loop.py", 9),
                                            ("EL301", "b/run.py", 9)]
    counted.clear()
    # a module a part imports is one of its inputs: editing it solves that part again
    (tmp_path / "a/loop.py").write_text("from consts import M\n" +
                                        loop("llm", "claude-haiku-4-5"))
    (tmp_path / "a/consts.py").write_text("M = 'claude-haiku-4-5'\n")
    check()
    counted.clear()
    (tmp_path / "a/consts.py").write_text("M = 'claude-opus-4-1'\n")
    check()
    assert counted == [{"a/llm.py", "a/loop.py"}]
    counted.clear()
    # a file no part reads changes nothing
    (tmp_path / "c/prompts.py").write_text("JUDGE = 'y'\n")
    check()
    assert counted == []


def test_a_forked_child_returns_its_result_or_none_when_it_fails() -> None:
    import signal

    from evallint.workers import Forked

    assert Forked(lambda: [1, "two"]).result() == [1, "two"]

    def boom() -> int:
        raise ValueError("bug")

    assert Forked(boom).result() is None

    def die() -> int:
        os.kill(os.getpid(), signal.SIGKILL)
        return 1

    assert Forked(die).result() is None


def test_parts_solved_in_a_second_process_give_the_same_findings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evallint.pyflow import project

    files = {f"p{i}/llm.py": LLM for i in range(4)}
    files.update({f"p{i}/loop.py": loop("llm", "claude-sonnet-4-5" if i % 2 else "x")
                  for i in range(4)})
    write_files(tmp_path, files)

    def findings(workers: int) -> list[tuple[str, str, int]]:
        old = Path.cwd()
        os.chdir(tmp_path)
        try:
            cfg = parse_config({}, source=None, root=tmp_path)
            cfg.respect_gitignore = False
            result = run_check(["."], cfg, {"EL301", "EL302"}, jobs=workers, use_cache=False)
            assert not result.tool_errors
            return sorted((f.code, f.path, f.line) for f in result.findings)
        finally:
            os.chdir(old)

    split: list[tuple[list[int], list[int]]] = []
    original = project._split

    def spy(*args: object) -> tuple[list[int], list[int]]:
        out = original(*args)  # type: ignore[arg-type]
        split.append(out)
        return out

    monkeypatch.setattr(project, "SPLIT_MIN_FUNCTIONS", 1)
    monkeypatch.setattr(project, "_split", spy)
    alone = findings(1)
    assert split == []  # --jobs 1: one process
    together = findings(2)
    assert split and all(split[0])  # both halves had parts
    assert together == alone == [("EL301", "p1/loop.py", 9), ("EL301", "p3/loop.py", 9)]


def test_parts_whose_process_failed_are_solved_here(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from evallint.pyflow import project

    class Failed:
        def __init__(self, fn: object) -> None:
            self.closed = False

        def result(self) -> None:
            return None

        def close(self) -> None:
            self.closed = True

    files = {f"p{i}/llm.py": LLM for i in range(2)}
    files.update({f"p{i}/loop.py": loop("llm", "claude-sonnet-4-5") for i in range(2)})
    write_files(tmp_path, files)
    monkeypatch.setattr(project, "SPLIT_MIN_FUNCTIONS", 1)
    monkeypatch.setattr(project, "Forked", Failed)
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        cfg = parse_config({}, source=None, root=tmp_path)
        cfg.respect_gitignore = False
        result = run_check(["."], cfg, {"EL301"}, jobs=2, use_cache=False)
    finally:
        os.chdir(old)
    assert sorted((f.path, f.line) for f in result.findings) == [("p0/loop.py", 9),
                                                                 ("p1/loop.py", 9)]


def test_a_tree_is_released_once_no_part_left_reads_it_and_decoded_at_most_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Peak memory holds the code trees of the parts in hand: a part's trees are dropped
    once no later part reads them, and a tree several parts read is decoded once."""
    from evallint.pyflow import ir

    files = {f"p{i}/llm.py": LLM for i in range(3)}
    files.update({f"p{i}/loop.py": (
        "from llm import llm_call\nfrom shared.consts import M\n\n\ndef generate(t):\n"
        "    return llm_call(t)\n\n\ndef judge(a):\n    return llm_call(a, model=M)\n")
        for i in range(3)})
    files["shared/consts.py"] = "M = 'claude-sonnet-4-5'\n"  # the generator's model
    write_files(tmp_path, files)
    decoded: list[str] = []
    held: list[set[str]] = []  # when each part starts: the modules whose tree is decoded
    original_getattr = ir.PythonFacts.__getattr__
    original_run = analysis.Analysis.run

    def getattr_(self: PythonFacts, name: str) -> object:
        if name in ("constants", "functions", "owners"):  # not set: decoded now
            decoded.append(self.path)
        return original_getattr(self, name)

    def run(self: analysis.Analysis) -> Result:
        held.append({m.path for m in self.tables.modules if "functions" in m.facts.__dict__})
        return original_run(self)

    monkeypatch.setattr(ir.PythonFacts, "__getattr__", getattr_)
    monkeypatch.setattr(analysis.Analysis, "run", run)

    def findings() -> list[tuple[str, str, int]]:
        old = Path.cwd()
        os.chdir(tmp_path)
        try:
            cfg = parse_config({}, source=None, root=tmp_path)
            cfg.respect_gitignore = False
            result = run_check(["."], cfg, {"EL301", "EL302"}, jobs=1, use_cache=False)
            assert not result.tool_errors
            return sorted((f.code, f.path, f.line) for f in result.findings)
        finally:
            os.chdir(old)

    released = findings()
    assert len(held) == 3
    assert not any(p.startswith(("p0/", "p1/")) for p in held[2])  # the first parts' trees
    assert "shared/consts.py" in held[2]  # read by the last part too: kept, not decoded again
    assert len(decoded) == len(set(decoded)) and "shared/consts.py" in decoded
    monkeypatch.setattr(ir.PythonFacts, "release_tree", lambda self: None)
    assert findings() == released == [("EL301", f"p{i}/loop.py", 10) for i in range(3)]


def _facts_with_tree() -> PythonFacts:
    from evallint.config import parse_config as parse
    from evallint.frontends.python_front import parse_python
    from evallint.source import SourceFile

    text = LLM + "\nPROMPT = 'Score the answer'\n"
    source = SourceFile(path=Path("m.py"), rel="m.py", text=text, data=text.encode())
    facts = parse_python(source, parse({}, source=None, root=Path(".")))
    assert isinstance(facts, PythonFacts) and facts.functions
    return facts


def test_a_released_tree_is_decoded_again_from_what_it_came_from() -> None:
    import pickle

    from evallint import datacodec

    fresh = _facts_with_tree()
    tree = (fresh.constants, fresh.functions, fresh.owners)
    fresh.release_tree()  # built here: nothing to decode it from, so it stays
    assert (fresh.constants, fresh.functions, fresh.owners) == tree
    sent = pickle.loads(pickle.dumps(fresh))  # from a worker process
    stored = datacodec.decode(datacodec.encode(fresh))  # from the result cache
    for facts in (sent, stored):
        assert (facts.constants, facts.functions, facts.owners) == tree
        facts.release_tree()
        assert "functions" not in facts.__dict__
        assert (facts.constants, facts.functions, facts.owners) == tree


def test_the_plan_is_read_from_the_cache_until_what_it_reads_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evallint.pyflow import project

    planned: list[int] = []
    real = project.plan

    def spy(*args: object) -> object:
        planned.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(project, "plan", spy)
    write_files(tmp_path, {"a/llm.py": LLM, "a/loop.py": loop("llm", "claude-sonnet-4-5"),
                           "b/helper.py": LLM, "b/run.py": loop("helper", "claude-haiku-4-5")})
    monkeypatch.chdir(tmp_path)
    findings(tmp_path)
    assert len(planned) == 1
    # an edit inside a function: the same modules, imports and names
    (tmp_path / "b/run.py").write_text(loop("helper", "claude-sonnet-4-5"))
    edited = findings(tmp_path)
    assert len(planned) == 1
    # b/run.py now imports a's helper too: the two parts become one
    (tmp_path / "b/run.py").write_text("from llm import llm_call as other\n"
                                       + loop("helper", "claude-sonnet-4-5"))
    joined = findings(tmp_path)
    assert len(planned) == 2
    planned.clear()
    assert edited == [("EL301", "a/loop.py", 9), ("EL301", "b/run.py", 9)]
    assert joined == findings(tmp_path, cache=False)


def test_a_skipped_file_the_analysis_loads_is_parsed_once_per_content(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evallint.pyflow import project

    loaded: list[str] = []
    real = project._load

    def spy(facts: PythonFacts) -> PythonFacts | None:
        loaded.append(facts.path)
        return real(facts)

    monkeypatch.setattr(project, "_load", spy)
    # nothing to analyse in main.py on its own: the analysis loads it for what it imports
    main = "from helper import llm_call\n\nprint(llm_call(llm_call('x')))\n"
    write_files(tmp_path, {"helper.py": LLM, "main.py": main})
    monkeypatch.chdir(tmp_path)
    first = findings(tmp_path)
    assert loaded == ["main.py"]
    # the helper edited: its part is solved again, main.py read from the cache
    (tmp_path / "helper.py").write_text(LLM + "\n\nRETRIES = 2\n")
    assert findings(tmp_path) == first
    assert loaded == ["main.py"]
    # main.py edited: parsed again
    (tmp_path / "main.py").write_text(main.replace("'x'", "'y'"))
    assert findings(tmp_path) == findings(tmp_path, cache=False)
    assert loaded == ["main.py", "main.py", "main.py"]  # after the edit, and without the cache


def test_the_second_process_takes_half_the_code_not_half_the_functions(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A notebook's body is one function of hundreds of lines: the halves are balanced on
    the size of the modules' stored code trees, known without decoding them."""
    from evallint.pyflow import project

    monkeypatch.setattr(project, "SPLIT_MIN_FUNCTIONS", 1)

    def module(path: str, functions: int, tree: int) -> PythonFacts:
        f = PythonFacts(path=path, kind="python", module=path[:-3], analyzed=True,
                        function_names=frozenset(f"f{i}" for i in range(functions)))
        f.__dict__["_tree"] = b"x" * tree
        return f

    facts = [module("big.py", 1, 9000), module("a.py", 6, 1000), module("b.py", 6, 1000),
             module("c.py", 6, 1000)]
    parts = [Part(paths={f.path}) for f in facts]
    mine, theirs = project._split([0, 1, 2, 3], parts, facts)
    assert {tuple(mine), tuple(theirs)} == {(0,), (1, 2, 3)}  # 9000 against 3000 bytes
    for f in facts:  # a tree already decoded: functions are the measure again
        f.__dict__.pop("_tree")
    mine, theirs = project._split([0, 1, 2, 3], parts, facts)
    assert sorted(mine + theirs) == [0, 1, 2, 3]
    assert {tuple(mine), tuple(theirs)} != {(0,), (1, 2, 3)}  # 2 functions against 21
