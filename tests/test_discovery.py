"""Discovery respects .gitignore and config excludes; classification picks the right kinds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from evallint.classify import classify
from evallint.config import parse_config
from evallint.discovery import discover
from evallint.kinds import FileKind
from tests.conftest import write_files


@pytest.mark.parametrize(
    ("rel", "head", "kind"),
    [
        ("loop.py", None, FileKind.PYTHON),
        ("nb/eval.ipynb", None, FileKind.NOTEBOOK),
        ("t/judge.j2", None, FileKind.JINJA),
        ("t/judge.hbs", None, FileKind.MUSTACHE),
        ("t/judge.md.hbs", None, FileKind.MUSTACHE),
        ("cli/templates/tools/judge.tool.ts.hbs", None, None),  # a scaffold's code template
        ("gen/{{name}}.agent.py.hbs", None, None),
        ("x/judge.prompt.md", None, FileKind.PROMPT),
        ("prompts/judge.md", None, FileKind.PROMPT),
        ("prompts/generator.txt", None, FileKind.PROMPT),
        ("prompts/README.md", None, None),
        ("docs/judge.md", None, None),
        ("pkg/templates/judge.txt", None, FileKind.PROMPT),
        (".github/ISSUE_TEMPLATE/bug.md", None, None),
        ("README.md", None, None),
        ("a.prompty", None, FileKind.PROMPTY),
        ("a.prompt", None, FileKind.DOTPROMPT),
        (".claude/agents/evaluator.md", "---\nname: evaluator\n---\n", FileKind.AGENT),
        (".claude/agents/notes.md", "# notes\n", None),
        (".claude/settings.json", None, FileKind.CLAUDE_SETTINGS),
        ("evals/promptfooconfig.yaml", None, FileKind.PROMPTFOO),
        ("registry/modelgraded/fact.yaml", None, FileKind.OPENAI_EVALS),
        ("loop.yaml", None, FileKind.LOOP_SPEC),
        ("specs/x.yaml", "generator:\n  model: a\nevaluator:\n  model: b\n", FileKind.LOOP_SPEC),
        ("ci.yaml", "jobs:\n  build: {}\n", None),
        ("data.json", None, None),
    ],
)
def test_classify(rel: str, head: str | None, kind: FileKind | None) -> None:
    assert classify(rel, head) == kind


def test_configured_templates_are_prompts() -> None:
    assert classify("docs/judge.md", None, templates=("docs/judge.md",)) == FileKind.PROMPT


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_gitignore_respected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {
        "prompts/judge.j2": "{{ output }}",
        "build_out/prompts/judge.j2": "{{ output }}",
        "ignored/prompts/x.j2": "{{ output }}",
        ".gitignore": "ignored/\n",
    })
    _git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    cfg = parse_config({"extend-exclude": ["build_out"]}, source=None, root=tmp_path)
    paths = [t.path for t in discover(["."], cfg)]
    assert paths == ["prompts/judge.j2"]


def test_explicit_file_is_checked_even_if_excluded_dir(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {"build/prompts/judge.j2": "{{ output }}"})
    monkeypatch.chdir(tmp_path)
    cfg = parse_config({}, source=None, root=tmp_path)
    assert [t.path for t in discover(["."], cfg)] == []
    assert [t.path for t in discover(["build/prompts/judge.j2"], cfg)] == ["build/prompts/judge.j2"]


def test_walk_without_git_skips_venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {".venv/lib/x.py": "x = 1\n", "loop.py": "x = 1\n"})
    monkeypatch.chdir(tmp_path)
    cfg = parse_config({"respect-gitignore": False}, source=None, root=tmp_path)
    assert [t.path for t in discover(["."], cfg)] == ["loop.py"]


def test_include_restricts_discovery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {"prompts/judge.j2": "x", "other/prompts/gen.j2": "x", "loop.py": ""})
    monkeypatch.chdir(tmp_path)
    cfg = parse_config({"include": ["prompts/**"], "respect-gitignore": False}, source=None,
                       root=tmp_path)
    assert [t.path for t in discover(["."], cfg)] == ["prompts/judge.j2"]


def test_editor_shadow_copies_of_notebooks_are_not_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """JupyterLab keeps plain-Python shadows of notebooks in ``.virtual_documents`` under the
    notebook's name; when a repository commits them they are not notebooks to check."""
    write_files(tmp_path, {".virtual_documents/loop.ipynb": "import anthropic\n",
                           "loop.ipynb": '{"cells": []}'})
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    monkeypatch.chdir(tmp_path)
    cfg = parse_config({}, source=None, root=tmp_path)
    assert [t.path for t in discover(["."], cfg)] == ["loop.ipynb"]
