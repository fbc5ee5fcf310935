"""The documented setup: models named in a project's example env file (frontends/envfiles)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evallint.frontends.envfiles import parse_env
from tests.conftest import lint_tree

WRITER = '''import os

from pydantic_ai import Agent

writer = Agent(os.getenv("WRITER_MODEL"), system_prompt="Draft a release note.")
grader = Agent("anthropic:claude-haiku-4-5", system_prompt="You are a judge. Score the note 1-10.")


def run(change: str) -> str:
    note = writer.run_sync(change).output
    return grader.run_sync(f"<note>{note}</note>").output
'''


def test_parse_env_reads_values_and_leaves_out_placeholders_and_comments() -> None:
    text = ('# comment\nexport A_MODEL="gpt-4o"  # quoted\nB = claude-haiku-4-5 # trailing\n'
            "C=<your key>\nD=\nnot a line\n1X=bad\nE='single quoted'\n")
    assert parse_env(text) == [("A_MODEL", "gpt-4o"), ("B", "claude-haiku-4-5"),
                               ("E", "single quoted")]


def _project(tmp_path: Path, env: str | None, folder: str = "app") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / folder / "flow.py").write_text(WRITER)
    if env is not None:
        (tmp_path / ".env.example").write_text(env)
    return tmp_path


def _el301(root: Path) -> list[str]:
    return [f.message for f in lint_tree(root, {"EL301"}).findings if f.code == "EL301"]


def test_the_example_env_file_of_the_project_root_names_the_writer_model(tmp_path: Path
                                                                          ) -> None:
    found = _el301(_project(tmp_path, "WRITER_MODEL=anthropic:claude-haiku-4-5\n"))
    assert len(found) == 1 and "$WRITER_MODEL in .env.example" in found[0], found


def test_another_model_in_the_example_env_file_is_no_finding(tmp_path: Path) -> None:
    assert _el301(_project(tmp_path, "WRITER_MODEL=anthropic:claude-sonnet-4-5\n")) == []


def test_no_example_env_file_leaves_the_variable_unresolved(tmp_path: Path) -> None:
    assert _el301(_project(tmp_path, None)) == []


def test_the_nearest_example_env_file_wins(tmp_path: Path) -> None:
    root = _project(tmp_path, "WRITER_MODEL=anthropic:claude-haiku-4-5\n")
    (root / "app" / ".env.sample").write_text("WRITER_MODEL=anthropic:claude-opus-4-1\n")
    assert _el301(root) == []


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks here")
def test_an_example_env_file_linked_from_outside_the_project_is_never_read(
        tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secrets.env").write_text("WRITER_MODEL=anthropic:claude-haiku-4-5\n")
    root = _project(tmp_path / "proj", None)
    (root / ".env.example").symlink_to(outside / "secrets.env")
    assert _el301(root) == []
