"""pydantic-evals dataset files loaded by Python (``Dataset.from_file``) and evaluated on a
task: the LLMJudges the file declares are compared with the task's model (EL301/EL302)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evallint.frontends.python_front import build_facts
from evallint.models import normalize, without_provider
from evallint.pyflow.datasets import DatasetRun
from evallint.source import SourceFile
from tests.conftest import lint_tree, write_files

AGENT = '''from pathlib import Path

from pydantic_ai import Agent
from pydantic_evals import Dataset

teller = Agent("{model}", system_prompt="Tell a two-line story about the prompt.")


async def tell(prompt: str) -> str:
    result = await teller.run(prompt)
    return result.output


def main() -> None:
    stories = Dataset.from_file({path})
    stories.evaluate_sync(tell)
'''

CASES = '''cases:
  - name: lighthouse
    inputs: a lighthouse keeper's last night
    evaluators:
      - LLMJudge:
          rubric: The story has exactly two lines.
          model: {case_model}
evaluators:
  - LLMJudge: The story stays on the prompt.
'''


def _project(root: Path, *, model: str = "openai:gpt-4o", case_model: str = "openai:gpt-4o",
             path: str = 'Path(__file__).parent / "stories.yaml"',
             cases: str | None = None) -> None:
    write_files(root, {
        "pyproject.toml": "[project]\nname = 'stories'\n",
        "evals/run_stories.py": AGENT.format(model=model, path=path),
        "evals/stories.yaml": CASES.format(case_model=case_model) if cases is None else cases,
    })


def _found(root: Path) -> list[tuple[str, str, int]]:
    result = lint_tree(root, {"EL301", "EL302"})
    return sorted((f.code, f.path, f.line) for f in result.findings)


def test_a_yaml_judge_on_the_tasks_model_is_reported_on_its_line(tmp_path: Path) -> None:
    _project(tmp_path)
    result = lint_tree(tmp_path, {"EL301", "EL302"})
    by_line = {f.line: f for f in result.findings}
    assert sorted(by_line) == [7, 9]
    assert {f.code for f in result.findings} == {"EL301"}
    assert {f.path for f in result.findings} == {"evals/stories.yaml"}
    explicit, default = by_line[7], by_line[9]
    assert "`openai:gpt-4o`" in explicit.message and "default judge model" in default.message
    for f in (explicit, default):
        places = {(r.path, r.line) for r in f.related}
        # the task's model call, and the Python call that evaluates the dataset on the task
        assert places == {("evals/run_stories.py", 10), ("evals/run_stories.py", 16)}


def test_the_clean_twin_with_judges_of_another_family_is_quiet(tmp_path: Path) -> None:
    cases = CASES.format(case_model="anthropic:claude-haiku-4-5").replace(
        "  - LLMJudge: The story stays on the prompt.",
        "  - LLMJudge:\n      rubric: The story stays on the prompt.\n"
        "      model: anthropic:claude-haiku-4-5")
    _project(tmp_path, cases=cases)
    assert _found(tmp_path) == []


def test_a_judge_of_the_same_family_that_is_not_cheaper_is_el302(tmp_path: Path) -> None:
    cases = "evaluators:\n  - LLMJudge:\n      rubric: Two lines.\n      model: openai:gpt-4o\n"
    _project(tmp_path, model="openai:gpt-4o-mini", cases=cases)
    assert _found(tmp_path) == [("EL302", "evals/stories.yaml", 4)]


def test_the_provider_prefix_is_not_part_of_the_model() -> None:
    assert without_provider("anthropic:claude-sonnet-4-5") == "claude-sonnet-4-5"
    assert without_provider("google-gla:gemini-2.0-flash") == "gemini-2.0-flash"
    assert without_provider("llama3:8b") == "llama3:8b"  # an ollama tag, not a provider
    assert without_provider("gpt-4o") == "gpt-4o"
    assert normalize("openai:gpt-4o-2024-08-06") == normalize("gpt-4o")
    assert normalize("openai:gpt-4o-mini") != normalize("openai:gpt-4o")


def test_a_task_on_the_same_model_through_another_sdk_is_reported(tmp_path: Path) -> None:
    cases = "evaluators:\n  - LLMJudge:\n      rubric: Two lines.\n" \
            "      model: anthropic:claude-sonnet-4-5\n"
    _project(tmp_path, cases=cases)
    (tmp_path / "evals/run_stories.py").write_text('''import anthropic
from pydantic_evals import Dataset

client = anthropic.Anthropic()


def tell(prompt: str) -> str:
    reply = client.messages.create(model="claude-sonnet-4-5", max_tokens=200,
                                   messages=[{"role": "user", "content": prompt}])
    return reply.content[0].text


Dataset.from_file("stories.yaml").evaluate_sync(tell)
''')
    assert _found(tmp_path) == [("EL301", "evals/stories.yaml", 4)]


def test_set_default_judge_model_moves_the_model_less_judges(tmp_path: Path) -> None:
    _project(tmp_path)
    script = tmp_path / "evals/run_stories.py"
    script.write_text(script.read_text().replace(
        "def main()", "set_default_judge_model(JUDGE)\n\n\ndef main()").replace(
        "from pydantic_evals import Dataset",
        "from pydantic_evals import Dataset\nfrom pydantic_evals.evaluators.llm_as_a_judge "
        "import set_default_judge_model\n\nJUDGE = 'anthropic:claude-haiku-4-5'"))
    # the explicit judge on the task's model stays; the default one now runs on haiku
    assert _found(tmp_path) == [("EL301", "evals/stories.yaml", 7)]
    script.write_text(script.read_text().replace("set_default_judge_model(JUDGE)",
                                                 "set_default_judge_model(os.environ['J'])"))
    # an unknown default model: the model-less judge is not compared
    assert _found(tmp_path) == [("EL301", "evals/stories.yaml", 7)]


@pytest.mark.parametrize("path", [
    '"missing.yaml"',
    'Path(__file__).parent / "nowhere" / "stories.yaml"',
])
def test_a_missing_dataset_file_gives_nothing(tmp_path: Path, path: str) -> None:
    _project(tmp_path, path=path)
    assert _found(tmp_path) == []


@pytest.mark.parametrize("text", [
    "evaluators:\n  - LLMJudge: [unclosed\n",
    "- just\n- a list\n",
    "evaluators:\n  - LLMJudge:\n      rubric: 5\n  - LLMJudge:\n      rubric: ok\n"
    "      model: [1, 2]\n",
    "",
])
def test_a_malformed_dataset_file_gives_nothing(tmp_path: Path, text: str) -> None:
    _project(tmp_path, cases=text)
    assert _found(tmp_path) == []


@pytest.mark.parametrize("path", [
    'f"{prompt}.yaml"',
    "sys.argv[1]",
    "Path(load_name())",
    'Path(__file__) / "stories.yaml"',
])
def test_a_path_that_is_not_a_constant_gives_nothing(tmp_path: Path, path: str) -> None:
    _project(tmp_path, path=path)
    assert _found(tmp_path) == []


def test_a_dataset_outside_the_project_is_never_read(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    _project(root, path='Path(__file__).parent / ".." / ".." / "stories.yaml"')
    (tmp_path / "stories.yaml").write_text(CASES.format(case_model="openai:gpt-4o"))
    assert _found(root) == []
    # a symlink inside the project to a file outside it is not followed either
    (root / "evals/stories.yaml").unlink()
    os.symlink(tmp_path / "stories.yaml", root / "evals/stories.yaml")
    (root / "evals/run_stories.py").write_text(
        AGENT.format(model="openai:gpt-4o", path='Path(__file__).parent / "stories.yaml"'))
    assert _found(root) == []


def test_a_changed_dataset_file_is_read_again_with_the_cache_on(tmp_path: Path) -> None:
    from evallint.config import parse_config
    from evallint.engine import run_check

    _project(tmp_path)
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        cfg = parse_config({}, source=None, root=tmp_path)
        cfg.respect_gitignore = False

        def lines() -> list[int]:
            result = run_check(["."], cfg, {"EL301"}, jobs=1, use_cache=True)
            return sorted(f.line for f in result.findings)

        assert lines() == [7, 9]
        assert lines() == [7, 9]
        (tmp_path / "evals/stories.yaml").write_text(
            CASES.format(case_model="anthropic:claude-haiku-4-5"))
        assert lines() == [9]
    finally:
        os.chdir(old)


def _runs(code: str) -> tuple[DatasetRun, ...]:
    source = SourceFile(path=Path("evals/m.py"), rel="evals/m.py", text=code,
                        data=code.encode())
    return build_facts(source, force=True).datasets


HEAD = "import os\nimport pathlib\nfrom pathlib import Path\nfrom pydantic_evals import Dataset\n"


@pytest.mark.parametrize(("expr", "target"), [
    ('"cases.yaml"', "cases.yaml"),
    ('Path("data/cases.yaml")', "data/cases.yaml"),
    ('pathlib.Path("data") / "cases.yaml"', "data/cases.yaml"),
    ('Path(__file__).parent / "cases.yaml"', "cases.yaml"),
    ('Path(__file__).resolve().parent.parent / "data" / "cases.yaml"', "../data/cases.yaml"),
    ('Path(__file__).with_name("cases.yaml")', "cases.yaml"),
    ('os.path.join(os.path.dirname(__file__), "cases.yaml")', "cases.yaml"),
    ("HERE / 'cases.yaml'", "cases.yaml"),
    ('f"{name}.yaml"', ""),
    ("name", ""),
    ('"/etc/cases.yaml"', ""),
])
def test_the_dataset_path_forms(expr: str, target: str) -> None:
    code = (f"{HEAD}HERE = Path(__file__).parent\n\n\ndef run(name, task):\n"
            f"    ds = Dataset[str, str].from_file({expr})\n    ds.evaluate_sync(task)\n")
    (run,) = _runs(code)
    assert (run.target, run.load.line, run.run.line, run.task) == (target, 9, 10, "task")


def test_runs_chained_on_a_module_dataset_and_shadowed() -> None:
    code = (f"{HEAD}SUITE = Dataset.from_file('a.yaml')\n\n\n"
            "async def main(task):\n    await SUITE.evaluate(task=task)\n"
            "    Dataset.from_file('b.yaml').evaluate_sync(task)\n\n\n"
            "def other(task):\n    SUITE = make()\n    SUITE.evaluate_sync(task)\n")
    assert [(r.target, r.run.line) for r in _runs(code)] == [("a.yaml", 9), ("b.yaml", 10)]


def test_a_dataset_class_of_another_library_is_not_read() -> None:
    code = ("from datasets import Dataset\nfrom pydantic_evals import Case\n\n"
            "Case(inputs='x')\nDataset.from_file('a.yaml').evaluate_sync(f)\n")
    assert _runs(code) == ()
