"""Warm runs: the file index, results that read other files, and the cached whole run.

A warm run trusts what it remembers only while the files it rests on are unchanged; these tests
change those files in the ways a user (or a tool) does and expect the findings of a cold run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from evallint import fileindex, reads
from evallint.cli import main
from evallint.fileindex import UNKNOWN, FileIndex
from tests.conftest import write_files

LATER = 10**12  # a run start far enough after the files were written to trust them


def check(root: Path, *args: str) -> tuple[int, str, str]:
    old = Path.cwd()
    os.chdir(root)
    try:
        res = CliRunner().invoke(main, ["check", *args])
    finally:
        os.chdir(old)
    assert "Traceback" not in res.output
    return res.exit_code, res.stdout, res.stderr


# ---------------------------------------------------------------------------- the file index


def _trusted(path: Path, limit: int = 100) -> dict[str, list[object]]:
    """The index entries a run that started well after ``path`` was written leaves."""
    index = FileIndex(started_ns=time.time_ns() + LATER)
    digest, data = index.digest(str(path), limit)
    assert digest is not None and data is not None  # read the first time
    return index.entries()


def test_an_unchanged_file_is_not_read_again(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    entries = _trusted(f)

    def no_reads(*_a: object, **_k: object) -> bytes:
        raise AssertionError("an unchanged file was read")

    monkeypatch.setattr(fileindex, "read_bounded", no_reads)
    digest, data = FileIndex(entries).digest(str(f), 100)
    assert digest == fileindex.content_digest(b"x = 1\n") and data is None


def test_new_content_under_the_old_modification_time_is_read(tmp_path: Path) -> None:
    """``touch -d`` / ``rsync -t`` put the old time back on new content of the same size: the
    change time, which no tool sets, still shows it."""
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    entries = _trusted(f)
    before = os.stat(f)
    time.sleep(0.01)
    f.write_text("x = 2\n")
    os.utime(f, ns=(before.st_atime_ns, before.st_mtime_ns))
    digest, data = FileIndex(entries).digest(str(f), 100)
    assert data == b"x = 2\n" and digest == fileindex.content_digest(b"x = 2\n")


def test_a_file_changed_just_before_the_run_is_not_remembered(tmp_path: Path) -> None:
    """Racily clean: a file whose change time is within MARGIN_NS of the run's start could
    change again in the same clock tick without its status moving."""
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    index = FileIndex(started_ns=time.time_ns())
    index.digest(str(f), 100)
    assert index.entries() == {}
    assert _trusted(f)  # the same file, recorded by a run that started later, is kept


def test_a_digest_is_only_reused_for_the_same_read_limit(tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("0123456789\n")
    entries = _trusted(f, limit=100)
    digest, data = FileIndex(entries).digest(str(f), 3)
    assert data == b"0123" and digest == fileindex.content_digest(b"0123")


def test_a_kind_is_only_reused_in_the_same_context(tmp_path: Path) -> None:
    f = tmp_path / "agent.md"
    f.write_text("---\nname: x\n---\n")
    st = os.stat(f)
    index = FileIndex(started_ns=time.time_ns() + LATER)
    assert index.kind(str(f), st, "agents/agent.md") == UNKNOWN
    index.note_kind(str(f), st, "agent", "agents/agent.md")
    later = FileIndex(index.entries())
    assert later.kind(str(f), st, "agents/agent.md") == "agent"
    assert later.kind(str(f), st, "other/agents/agent.md") == UNKNOWN


@pytest.mark.parametrize("entries", [
    None, [], {"/a": "x"}, {"/a": [1, 2, 3]}, {"/a": [1, 2, 3, 4, "5", "", "?"]},
    {"/a": [1, 2, 3, 4, 5, None, "?"]}, {3: [1, 2, 3, 4, 5, "", "?"]},
])
def test_a_malformed_index_is_empty(entries: object) -> None:
    assert FileIndex(entries).entries() == {}


def test_a_dependency_that_changed_or_appeared_is_not_valid(tmp_path: Path) -> None:
    f = tmp_path / "t.txt"
    f.write_text("one\n")
    with reads.recording() as deps:
        reads.read_file(f, 100, (str(tmp_path.resolve()),))
        assert not reads.exists(tmp_path / "later.txt")
    assert reads.still_valid(deps, FileIndex())
    (tmp_path / "later.txt").write_text("")
    assert not reads.still_valid(deps, FileIndex())
    (tmp_path / "later.txt").unlink()
    f.write_text("two\n")
    assert not reads.still_valid(deps, FileIndex())


# ---------------------------------------------------------------------------- through `check`

ANNOTATOR = """\
a:
  prompt_template: "shared/p.txt"
  fn_completions: "openai_completions"
  completions_kwargs:
    model_name: "gpt-4o-mini"
"""
LEAKY = ("You are a judge. Pick the better answer to {instruction}.\n"
         "How model_1 reasoned: {chain_of_thought}\n"
         'Answer 1: """{output_1}"""\nAnswer 2: """{output_2}"""\n')
CLEAN = ("You are a judge. Pick the better answer to {instruction}.\n"
         'Answer 1: """{output_1}"""\nAnswer 2: """{output_2}"""\n')


def test_a_config_that_reads_a_template_is_cached_until_the_template_changes(
        tmp_path: Path) -> None:
    write_files(tmp_path, {
        "judges_configs/a/configs.yaml": ANNOTATOR,
        "judges_configs/shared/p.txt": LEAKY,
        "prompts/other.j2": "Hello {{ name }}\n",
    })
    code, out, err = check(tmp_path, "--select", "EL102")
    assert code == 1 and "judges_configs/shared/p.txt:2" in out and "from cache" not in err
    code, out, err = check(tmp_path, "--select", "EL102")
    assert code == 1 and "judges_configs/shared/p.txt:2" in out and "(2 from cache)" in err
    (tmp_path / "judges_configs/shared/p.txt").write_text(CLEAN)
    code, out, err = check(tmp_path, "--select", "EL102")
    # the config is read again (its template changed), the other file still comes from cache
    assert code == 0 and "EL102" not in out and "(1 from cache)" in err
    (tmp_path / "judges_configs/shared/p.txt").unlink()
    code, out, err = check(tmp_path, "--select", "EL102,EL611")
    assert "EL611" in out and "shared/p.txt" in out


LOCKED = {
    "pyproject.toml": "[tool.evallint]\nselect = ['EL610']\n",
    "prompts/evaluator.prompt.md": (
        "---\nstep: evaluator\nmodel: claude-haiku-4-5\n---\n## System\nScore "
        "<output>{{ output }}</output> for <input>{{ input }}</input>.\n"),
    "opt/spec.yaml": "model: claude-sonnet-4-5\nmetric:\n  judge:\n    model: claude-haiku-4-5\n"
                     "    rubric: rubric.md\n    max_cost_usd: 1\n",
    "opt/rubric.md": "Score accuracy 0-1.\n",
}


def test_a_whole_run_is_not_reused_when_a_file_a_check_read_changed(tmp_path: Path) -> None:
    """The rubric is not a checked file, but the lock check reads it: the cached whole run
    rests on its digest too."""
    write_files(tmp_path, LOCKED)
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        assert CliRunner().invoke(main, ["lock"]).exit_code == 0
    finally:
        os.chdir(old)
    assert check(tmp_path)[0] == 0
    code, _, err = check(tmp_path)
    assert code == 0 and "from cache" in err
    (tmp_path / "opt/rubric.md").write_text("Score accuracy 0-1, be lenient.\n")
    code, out, _ = check(tmp_path)
    assert code == 1 and "opt/rubric.md:1:1: EL610" in out
    (tmp_path / "evallint.lock").unlink()
    assert check(tmp_path)[0] == 0  # no lock file: nothing pinned


def test_a_warm_run_with_nothing_changed_imports_no_check(tmp_path: Path) -> None:
    write_files(tmp_path, {"prompts/judge.j2": "You are a judge.\n{{ system_prompt }}\n"})
    probe = ("import sys\nfrom evallint.cli import main\n"
             "try:\n    main(['check', '.'])\nexcept SystemExit as e:\n    code = e.code\n"
             "print(code, 'evallint.checks.templates' in sys.modules)\n")
    env = dict(os.environ, EVALLINT_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120) for _ in range(2)]
    assert [r.stdout.split()[-2:] for r in runs] == [["1", "True"], ["1", "False"]]
    assert [r.stdout.count("EL102") for r in runs] == [1, 1]


JUDGE_AGENT = ("---\nname: judge\ndescription: Scores the draft against the rubric.\n---\n"
               "Score it.\n")
SAME_MODEL = {
    "prompts/evaluator.prompt.md": ("---\nstep: evaluator\nmodel: claude-haiku-4-5\n---\n"
                                    "Score <output>{{ output }}</output>.\n"),
    "prompts/generator.prompt.md": ("---\nstep: generator\nmodel: claude-haiku-4-5\n---\n"
                                    "Answer {{ input }}\n"),
}


def test_fix_after_a_run_the_cache_answered_checks_the_fixed_files_again(tmp_path: Path) -> None:
    """--fix re-checks the project after each pass; in a process whose first check the cached
    whole run answered (no check imported yet), that re-check still runs every check, the
    cross-file ones (EL301) included."""
    write_files(tmp_path, {".claude/agents/judge.md": JUDGE_AGENT, **SAME_MODEL})
    env = dict(os.environ, EVALLINT_CACHE_DIR=str(tmp_path / "cache"))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "evallint", "check", "--select",
                               "EL301,EL402", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)

    assert cli().returncode == 1
    assert "(3 from cache)" in cli().stderr
    fixed = cli("--fix")
    assert fixed.returncode == 1, fixed.stderr
    assert "Fixed 1 finding (1 remaining); 3 files checked." in fixed.stderr
    assert "prompts/evaluator.prompt.md:3:1: EL301" in fixed.stdout


def test_a_project_root_looked_up_in_a_recorded_analysis_rests_on_its_markers(
        tmp_path: Path) -> None:
    """Where a front-end or check may read depends on the nearest project marker: a marker
    that appears in between makes the recorded result stale."""
    from evallint.classify import project_root_of

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "sub").mkdir()
    with reads.recording() as deps:
        assert project_root_of(str(tmp_path / "sub" / "c.yaml")) == str(tmp_path)
    assert reads.still_valid(deps, FileIndex())
    (tmp_path / "sub" / "pyproject.toml").write_text("")
    assert not reads.still_valid(deps, FileIndex())


GRAPH_LOOP = Path(__file__).resolve().parent.parent / "fixtures/broken/python/graph_loop.py"


def graph_computations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time the run computes EL501's graph cycles (rather
    than reading them from the cache)."""
    from evallint.pyflow import graphs, project

    computed: list[int] = []
    original = graphs.graph_loops

    def counted(*args: object, **kwargs: object) -> object:
        computed.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(project, "graph_loops", counted)
    return computed


def test_graph_cycles_come_from_the_cache_while_no_python_file_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """EL501's LangGraph cycles are read off the graph modules' code trees; a run that edits
    only a prompt reads them from the cache instead of decoding those trees."""
    graph = GRAPH_LOOP.read_text(encoding="utf-8")
    closing = next(n for n, line in enumerate(graph.splitlines(), 1)
                   if "add_conditional_edges" in line)
    write_files(tmp_path, {"graph.py": graph,
                           "prompts/judge.prompt.md": "Score the {{ answer }}.\n"})
    computed = graph_computations(monkeypatch)
    code, cold, _ = check(tmp_path, "--select", "EL501")
    assert code == 1 and f"graph.py:{closing}" in cold and computed == [1]
    (tmp_path / "prompts/judge.prompt.md").write_text("Score the {{ answer }} from 1 to 5.\n")
    code, out, err = check(tmp_path, "--select", "EL501")
    assert (code, out) == (1, cold) and "(1 from cache)" in err
    assert computed == [1]  # read from the cache
    (tmp_path / "graph.py").write_text(graph + "\nprint(app)\n")
    code, out, _ = check(tmp_path, "--select", "EL501")
    assert (code, out) == (1, cold) and computed == [1, 1]  # a graph module changed


MENU_NODES = """\
from langchain_openai import ChatOpenAI

planner = ChatOpenAI(model="gpt-4o", temperature=0.7)
critic = ChatOpenAI(model="gpt-4o-mini", temperature=0)


def draft_menu(state):
    return {"menu": planner.invoke(f"Plan a dinner menu for {state['guests']}.").content}


def critique_menu(state):
    verdict = critic.invoke(
        "You are a strict judge of menus. Grade the menu below; answer PASS, or FAIL with "
        "the reasons.\\n\\n<menu>\\n" + state["menu"] + "\\n</menu>").content
    return {"verdict": verdict}
"""

MENU_GRAPH = """\
from langgraph.graph import END, StateGraph

from kitchen.nodes import critique_menu, draft_menu


def route(state):
    return "serve" if state["verdict"].startswith("PASS") else "redo"


kitchen = StateGraph(dict)
kitchen.set_entry_point("chef")
kitchen.add_node("critic", critique_menu)
kitchen.add_conditional_edges("critic", route, {"redo": "chef", "serve": END})
kitchen.add_node("chef", draft_menu)
kitchen.add_edge("chef", "critic")
app = kitchen.compile()
"""

WEATHER = """\
import anthropic

client = anthropic.Anthropic()


def forecast(city):
    return client.messages.create(model="claude-haiku-4-5", max_tokens=200,
                                  messages=[{"role": "user", "content": city}])
"""


def test_graph_cycles_are_read_again_only_when_what_they_read_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A graph whose nodes are imported from another module: an edit to a third module
    reads the cycles from the cache; a recorded lookup that answers otherwise, or a node
    whose LLM call goes away, makes them computed again."""
    from evallint.pyflow import summaries

    write_files(tmp_path, {"kitchen/__init__.py": "", "kitchen/nodes.py": MENU_NODES,
                           "kitchen/graph.py": MENU_GRAPH, "weather.py": WEATHER})
    computed = graph_computations(monkeypatch)
    code, cold, _ = check(tmp_path, "--select", "EL501")
    assert code == 1 and "kitchen/graph.py:13:1: EL501" in cold and computed == [1]

    (tmp_path / "weather.py").write_text(WEATHER + "\nDEFAULT_CITY = 'Lyon'\n")
    code, out, _ = check(tmp_path, "--select", "EL501")
    assert (code, out) == (1, cold) and computed == [1]  # another module: from the cache

    answer = summaries.Tables.answer

    def moved(self: summaries.Tables, method: str, name: str, near: str
              ) -> tuple[str | None, str]:
        found = answer(self, method, name, near)
        return (None, "") if name == "kitchen.nodes.critique_menu" else found

    monkeypatch.setattr(summaries.Tables, "answer", moved)
    (tmp_path / "weather.py").write_text(WEATHER + "\nDEFAULT_CITY = 'Oslo'\n")
    code, out, _ = check(tmp_path, "--select", "EL501")
    assert (code, out) == (1, cold) and computed == [1, 1]  # a lookup answers otherwise
    monkeypatch.setattr(summaries.Tables, "answer", answer)

    (tmp_path / "kitchen/nodes.py").write_text(
        MENU_NODES.replace("verdict = critic.invoke(", "verdict = str(").replace(
            ").content\n    return {\"verdict\"", ")\n    return {\"verdict\""))
    code, out, _ = check(tmp_path, "--select", "EL501")
    assert code == 0 and "kitchen/graph.py" not in out and computed == [1, 1, 1]


@pytest.mark.parametrize("entry", [
    None,
    [],
    ([], ),
    ("loops", []),
    ([object()], []),
    ([], "lookups"),
    ([], [("function_name", "kitchen.nodes.critique_menu", "")]),
    ([], [("eval", "kitchen.nodes.critique_menu", "", None, "")]),
    ([], [(1, 2, 3, None, "")]),
])
def test_a_stored_graph_result_of_another_shape_is_a_miss(entry: object) -> None:
    """What the graph cache holds is checked before it is used: any other shape, or a lookup
    of a kind the tables do not answer, is recomputed rather than trusted."""
    from evallint.pyflow.project import _cached_graphs

    assert _cached_graphs(entry, []) is None
    assert _cached_graphs(([], [("module", "kitchen", "", None, "")]), []) == []


STORY_HELPERS = """\
import anthropic

client = anthropic.Anthropic()
MODEL = "claude-sonnet-4-5"


def ask(prompt):
    reply = client.messages.create(model=MODEL, max_tokens=500,
                                   messages=[{"role": "user", "content": prompt}])
    return reply.content[0].text
"""

STORY_MODULES = {
    "writer.py": ("from helpers import ask\n\n\ndef write_story(topic):\n"
                  "    return ask(f\"Write a short story about {topic}.\")\n"),
    "grader.py": ("from helpers import ask\n\n\ndef grade_story(story):\n"
                  "    verdict = ask(\"You are a strict judge. Grade the story below from 1 to 10 "
                  "and answer with the number only.\\n\\n<story>\\n\" + story + "
                  "\"\\n</story>\")\n    return int(verdict)\n"),
}


@pytest.fixture
def trees_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files whose code tree, stored apart from their entry, a run reads (every analysed
    module's tree is stored apart here, however small)."""
    from evallint import datacodec

    monkeypatch.setattr(datacodec, "DETACH_MIN", 0)
    read: list[str] = []
    real = datacodec.attach

    def attach(obj: Any, load: Any) -> None:
        def counted() -> object:
            read.append(obj.path)
            return load()
        real(obj, counted)

    monkeypatch.setattr(datacodec, "attach", attach)
    return read


def test_a_code_tree_stored_apart_is_read_when_its_functions_run_again(
        tmp_path: Path, trees_read: list[str]) -> None:
    """A run after an edit reads the entries of the other files without their code trees;
    a module whose functions must run again (the helper they call now uses another model)
    reads its tree then, and the findings are those of a run without the cache."""
    write_files(tmp_path, {"helpers.py": STORY_HELPERS, **STORY_MODULES})
    check(tmp_path)
    (tmp_path / "writer.py").write_text(STORY_MODULES["writer.py"] + "\nGENRE = 'fable'\n")
    code, out, err = check(tmp_path)
    # writer runs again and reads the helper it calls; nothing reads the grader
    assert "(2 from cache)" in err and trees_read == ["helpers.py"]
    (tmp_path / "helpers.py").write_text(STORY_HELPERS.replace("sonnet", "haiku"))
    code, out, err = check(tmp_path)
    assert "(2 from cache)" in err and "grader.py" in trees_read
    assert (code, out) == check(tmp_path, "--no-cache")[:2]


def test_a_code_tree_stored_apart_that_cannot_be_read_is_made_again_from_the_file(
        tmp_path: Path, trees_read: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree entry that is missing makes its file's entry no use (the file is parsed
    again); one that no longer authenticates when it is needed is made again from the file,
    which still holds the same text."""
    from evallint import cache

    write_files(tmp_path, {"helpers.py": STORY_HELPERS, **STORY_MODULES})
    check(tmp_path)
    real_has, real_get = cache.Store.has, cache.Store.get
    apart: set[str] = set()  # the keys of the trees stored apart, as the run computes them

    def has(self: cache.Store, namespace: str, key: str) -> bool:
        return real_has(self, namespace, key) and key not in apart

    def get(self: cache.Store, namespace: str, key: str) -> Any:
        return None if key in apart else real_get(self, namespace, key)

    from evallint import engine

    real_part_key = engine._part_key

    def part_key(store: cache.Store, key: str) -> str:
        found = real_part_key(store, key)
        apart.add(found)
        return found

    monkeypatch.setattr(engine, "_part_key", part_key)
    monkeypatch.setattr(cache.Store, "get", get)
    again: list[str] = []
    real_again = engine._part_again

    def made_again(task: Any, *args: Any) -> object:
        again.append(task.path)
        return real_again(task, *args)

    monkeypatch.setattr(engine, "_part_again", made_again)
    (tmp_path / "helpers.py").write_text(STORY_HELPERS.replace("sonnet", "haiku"))
    code, out, err = check(tmp_path)
    assert "(2 from cache)" in err and "grader.py" in trees_read and "grader.py" in again
    assert (code, out) == check(tmp_path, "--no-cache")[:2]

    monkeypatch.setattr(cache.Store, "has", has)
    (tmp_path / "helpers.py").write_text(STORY_HELPERS.replace("sonnet", "opus"))
    code, out, err = check(tmp_path)
    assert "(0 from cache)" in err or "from cache" not in err
    assert (code, out) == check(tmp_path, "--no-cache")[:2]


def test_the_inspect_checks_read_no_file_again(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python front-end finds the grader calls; the project checks only read its facts."""
    from evallint import reads

    write_files(tmp_path, {
        "evals/task.py": ("from inspect_ai import Task, task\n"
                          "from inspect_ai.scorer import model_graded_qa\n\n\n@task\n"
                          "def quiz():\n    return Task(dataset=[], scorer=model_graded_qa())\n"),
        **{f"lib/m{i}.py": f"import anthropic\nX{i} = anthropic.Anthropic()\n" for i in range(5)},
    })
    read: list[str] = []
    original = reads.read_file

    def spy(path: str, limit: int) -> bytes:
        read.append(path)
        return original(path, limit)

    monkeypatch.setattr(reads, "read_file", spy)
    code, out, _ = check(tmp_path, "--select", "EL303", "--no-cache")
    assert code == 1 and "evals/task.py:7" in out
    assert read == []


def test_the_inspect_scan_walks_the_tree_the_front_end_parsed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import ast

    from evallint.frontends.python_front import build_facts
    from evallint.source import SourceFile

    text = ("import anthropic\nfrom inspect_ai.scorer import model_graded_qa\n\n"
            "JUDGE = model_graded_qa(include_history=True)\n")
    parsed: list[int] = []
    original = ast.parse

    def spy(*args: Any, **kwargs: Any) -> ast.Module:
        parsed.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", spy)
    facts = build_facts(SourceFile(Path("judge.py"), "judge.py", text, text.encode()), False)
    assert [(g.func, g.pos.line, g.include_history) for g in facts.inspect_graders] == [
        ("model_graded_qa", 4, True)]
    assert len(parsed) == 1
