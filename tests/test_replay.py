"""Quiet function runs replayed from the last solve: an edit interprets only what changed, and
a record is used only while everything its run read is as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evallint import datacodec
from evallint.config import parse_config
from evallint.pyflow import analysis, interp
from evallint.pyflow.replay import Replay, RunMemo, RunRecord
from evallint.pyflow.summaries import Summary, Tables
from tests.conftest import write_files
from tests.test_parts import LLM, findings

# relevant (it imports the LLM module), and every function of it quiet
TEXT = """\
import llm
from deep import tidy


def clean(text):
    return tidy(text)


def join_lines(lines):
    out = ""
    for line in lines:
        out = out + clean(line)
    return out


def shout(text):
    return join_lines([text]).upper()
"""

LOOP = """\
from llm import llm_call
from prompts import INSTRUCTIONS
from text import clean


def make_prompt(answer):
    return INSTRUCTIONS + clean(answer)


def generate(task):
    return llm_call(task)


def second(answer):
    return llm_call(make_prompt(answer))


print(second(generate("task")))
"""

DEEP = "import llm\n\n\ndef tidy(text):\n    return text.strip()\n"
NEUTRAL = 'import llm\n\nINSTRUCTIONS = "Translate this into French: "\n'
JUDGE = ('import llm\n\nINSTRUCTIONS = "You are a strict grader. Score the answer from 1 to '
         '10 and reply with the score only: "\n')


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_files(tmp_path, {"llm.py": LLM, "text.py": TEXT, "deep.py": DEEP, "loop.py": LOOP,
                           "prompts.py": NEUTRAL})
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def interpreted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The functions the fixpoint interprets (not those it replays)."""
    seen: list[tuple[str, str]] = []
    real = analysis.Analysis._interpret

    def spy(self: analysis.Analysis, key: tuple[str, str], *args: object,
            **kwargs: object) -> object:
        seen.append(key)
        return real(self, key, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(analysis.Analysis, "_interpret", spy)
    return seen


def test_an_edit_interprets_only_the_edited_module_and_what_reads_it(
        project: Path, interpreted: list[tuple[str, str]]) -> None:
    first = findings(project)
    assert ("text.py", "clean") in interpreted  # cold: everything
    interpreted.clear()
    with (project / "loop.py").open("a") as fh:
        fh.write("\nDONE = True\n")
    edited = findings(project)
    ran = set(interpreted)
    assert {k for k in ran if k[0] == "text.py"} == set()  # quiet, and nothing they read changed
    assert ("loop.py", "make_prompt") in ran  # its module changed
    assert edited == findings(project, cache=False) == first


def test_a_replayed_module_is_not_decoded(project: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    findings(project)
    decoded: list[str] = []
    real = datacodec.load_lazy

    def spy(obj: object, keep: bool = False) -> bool:
        decoded.append(getattr(obj, "path", ""))
        return real(obj, keep)

    monkeypatch.setattr(datacodec, "load_lazy", spy)
    with (project / "loop.py").open("a") as fh:
        fh.write("\nDONE = True\n")
    findings(project)
    # deep.py's tidy() is called only by a replayed function: its tree stays encoded (text.py
    # is read for clean(), which the edited module's make_prompt() calls)
    assert "deep.py" not in decoded
    assert "llm.py" in decoded  # its function calls the LLM: interpreted again


def test_a_record_is_not_used_when_a_module_its_run_read_changed(
        project: Path, interpreted: list[tuple[str, str]]) -> None:
    # make_prompt reads INSTRUCTIONS from prompts.py: neutral text, then a judge's prompt.
    # A stale replay would keep the second call a plain LLM call (no EL301).
    assert findings(project) == []
    interpreted.clear()
    (project / "prompts.py").write_text(JUDGE)
    edited = findings(project)
    assert ("loop.py", "make_prompt") in interpreted
    assert ("text.py", "clean") not in interpreted
    assert edited == findings(project, cache=False)
    assert ("EL301", "loop.py", 15) in edited


def test_a_record_is_not_used_when_a_callee_summary_changed(
        project: Path, interpreted: list[tuple[str, str]]) -> None:
    findings(project)
    interpreted.clear()
    # tidy() now calls the LLM, which changes the summary of clean() (in a module left as it
    # was) and so what make_prompt() (in another) reads: both run again
    (project / "deep.py").write_text(
        "from llm import llm_call\n\n\ndef tidy(text):\n    return llm_call(text)\n")
    edited = findings(project)
    assert ("text.py", "clean") in interpreted
    assert ("text.py", "<module>") not in interpreted  # reads nothing that changed
    assert ("loop.py", "make_prompt") in interpreted
    assert edited == findings(project, cache=False)


def _tables(tmp_path: Path) -> Tables:
    from evallint.frontends.python_front import build_facts
    from evallint.source import read_source

    write_files(tmp_path, {"a.py": "from b import VALUE\n\n\ndef f(x):\n    return x\n",
                           "b.py": "VALUE = 1\n"})
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        facts = [build_facts(read_source(Path(p), p), force=True) for p in ("a.py", "b.py")]
    finally:
        os.chdir(old)
    return Tables(facts)


def _memo(tables: Tables, **changes: object) -> RunMemo:
    digest = {m.path: m.facts.digest for m in tables.modules}
    memo = RunMemo("names", digest["a.py"], {"b.py": digest["b.py"]},
                     [("constant", "b.VALUE", "a.py", "b.py", "VALUE")],
                     {"f": RunRecord(((), False, False, False), 0, (0,), (), (),
                                    Summary(), ())})
    for name, value in changes.items():
        setattr(memo, name, value)
    return memo


class _Stub:
    """The little of an Analysis that checking a record reads."""

    def __init__(self) -> None:
        self.summaries: dict[tuple[str, str], Summary] = {}

    def quiet_epoch(self, path: str) -> tuple[tuple[str, ...], bool, bool, bool]:
        return (), False, False, False


@pytest.mark.parametrize(("change", "used"), [
    ({}, True),
    ({"names": "other module names"}, False),  # imports may resolve elsewhere
    ({"digest": "0" * 32}, False),  # the module itself changed
    ({"digests": {"b.py": "0" * 32}}, False),  # a module a lookup found changed
    ({"lookups": [("constant", "b.VALUE", "a.py", None, "")]}, False),  # answered otherwise
])
def test_a_record_holds_only_while_what_it_read_is_unchanged(
        tmp_path: Path, change: dict[str, object], used: bool) -> None:
    tables = _tables(tmp_path)
    memo = _memo(tables, **change)
    replay = Replay("names", lambda path, digest: memo if path == "a.py" else None)
    replay.use(tables)
    mod = next(m for m in tables.modules if m.path == "a.py")
    found = replay.replay(_Stub(), ("a.py", "f"), mod)  # type: ignore[arg-type]
    assert (found is not None) is used
    if used:  # nothing changed: nothing to write for the next solve
        assert replay.memos([("a.py", "f")]) == {}


def test_a_record_does_not_hold_when_a_callee_summary_differs(tmp_path: Path) -> None:
    tables = _tables(tmp_path)
    memo = _memo(tables)
    memo.runs["f"].deps = (("b.py", "g"),)
    memo.runs["f"].dep_sigs = (Summary().signature(),)
    replay = Replay("names", lambda path, digest: memo)
    replay.use(tables)
    mod = next(m for m in tables.modules if m.path == "a.py")
    stub = _Stub()
    assert replay.replay(stub, ("a.py", "f"), mod) is not None  # type: ignore[arg-type]
    stub.summaries[("b.py", "g")] = Summary(llm=True, n_llm=1)
    assert replay.replay(stub, ("a.py", "f"), mod) is None  # type: ignore[arg-type]


# A dspy program whose modules run on the model ``dspy.configure`` sets in another file, which
# the program never imports: the model reaches it through the project-wide state only.
SETUP_LM = 'import dspy\n\ndspy.configure(lm=dspy.LM("openai/gpt-4o-mini"))\n'
PROGRAM = """\
import dspy

solve = dspy.Predict("problem -> solution")
grade = dspy.Predict("problem, solution -> correct: bool")


def pipeline(problem):
    attempt = solve(problem=problem)
    return grade(problem=problem, solution=attempt.solution).correct
"""


@pytest.fixture
def reported(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The functions whose reporting runs are interpreted (not replayed)."""
    seen: list[tuple[str, str]] = []
    real = interp.Interp.run

    def spy(self: interp.Interp) -> Summary:
        if self.report:
            seen.append((self.path, self.fn.name))
        return real(self)

    monkeypatch.setattr(interp.Interp, "run", spy)
    return seen


@pytest.fixture
def dspy_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_files(tmp_path, {"setup_lm.py": SETUP_LM, "program.py": PROGRAM})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_run_that_met_llm_values_is_replayed_in_the_state_it_began_in(
        dspy_project: Path, interpreted: list[tuple[str, str]]) -> None:
    first = findings(dspy_project)
    assert first == [("EL301", "program.py", 9)]  # both on the configured model
    assert ("program.py", "pipeline") in interpreted
    interpreted.clear()
    # the configuring module changes, the model it sets does not: same state, same changes
    with (dspy_project / "setup_lm.py").open("a") as fh:
        fh.write("\nDONE = True\n")
    assert findings(dspy_project) == first
    assert ("setup_lm.py", "<module>") in interpreted
    assert not [k for k in interpreted if k[0] == "program.py"]


def test_a_reporting_run_is_replayed_with_the_events_it_reported(
        dspy_project: Path, reported: list[tuple[str, str]]) -> None:
    first = findings(dspy_project)
    assert ("program.py", "pipeline") in reported
    reported.clear()
    with (dspy_project / "setup_lm.py").open("a") as fh:
        fh.write("\nDONE = True\n")
    assert findings(dspy_project) == first == [("EL301", "program.py", 9)]  # its calls, again
    assert not [k for k in reported if k[0] == "program.py"]
    (dspy_project / "setup_lm.py").write_text('import dspy\n\nprint("no model")\n')
    assert findings(dspy_project) == []
    assert ("program.py", "pipeline") in reported  # another state: reported again


def test_a_run_that_met_llm_values_runs_again_when_the_state_it_began_in_differs(
        dspy_project: Path, interpreted: list[tuple[str, str]]) -> None:
    assert findings(dspy_project) == [("EL301", "program.py", 9)]
    interpreted.clear()
    # no model configured any more: program.py is unchanged and reads nothing that changed
    # but the project-wide state (a replay from there would keep the finding)
    (dspy_project / "setup_lm.py").write_text('import dspy\n\nprint("no model")\n')
    edited = findings(dspy_project)
    assert ("program.py", "pipeline") in interpreted
    assert edited == findings(dspy_project, cache=False) == []


def test_a_function_run_quiet_then_with_llm_values_is_replayed_both_times(
        project: Path, interpreted: list[tuple[str, str]]) -> None:
    # loop.py's module body runs first quiet (what it calls is not summarised yet), then
    # again on the chat object llm_call() makes: a record of each run is kept
    (project / "llm.py").write_text(
        "from langchain_openai import ChatOpenAI\n\n\ndef llm_call(prompt):\n"
        "    return ChatOpenAI(model='gpt-4o').invoke(prompt).content\n")
    first = findings(project)
    assert interpreted.count(("loop.py", "<module>")) > 1
    interpreted.clear()
    with (project / "deep.py").open("a") as fh:
        fh.write("\nDONE = True\n")
    edited = findings(project)
    assert ("deep.py", "tidy") in interpreted
    assert ("loop.py", "<module>") not in interpreted
    assert edited == findings(project, cache=False) == first


def test_a_trace_holding_one_lookup_answered_two_ways_is_recorded(tmp_path: Path) -> None:
    """A run may read a lookup from before a skipped module was loaded (a cached static
    answer) and again after: the record is kept, never a crash of the whole analysis."""
    tables = _tables(tmp_path)
    replay = Replay("names", lambda path, digest: None)
    replay.use(tables)
    run = RunRecord(((), False, False, False), 0, (0,), (), (), Summary(), ())
    trace = {("constant", "b.VALUE", "a.py", None, ""),
             ("constant", "b.VALUE", "a.py", "b.py", "VALUE")}
    replay.record(("a.py", "f"), run, trace)
    assert replay.memos([("a.py", "f")])  # recorded, to be checked lookup by lookup


def test_a_state_change_holding_a_set_is_journaled_the_same_whatever_its_order(
        tmp_path: Path) -> None:
    """A recorded run's changes are made again from the cache, where a set of labels comes
    back decoded in another order: the chain must not tell the two apart, or a replay after
    it never matches (a hash-seed lottery in CI)."""
    ints, back = frozenset([0, 8]), frozenset([8, 0])
    assert list(ints) != list(back)  # equal sets, iterated in two orders
    assert datacodec.encode(ints) != datacodec.encode(back)
    assert datacodec.canonical(ints) == datacodec.canonical(back)
    chains = []
    for value in (ints, back):
        an = analysis.Analysis([m.facts for m in _tables(tmp_path / str(len(chains))).modules],
                               parse_config({}, source=None, root=tmp_path),
                               replay=Replay("names", lambda path, digest: None))
        an.set_state("state_outputs", "*", value)
        chains.append(an.chain)
    assert chains[0] and chains[0] == chains[1]
