"""`evallint check DIR` gives the same findings from any working directory: kinds and roles
are decided relative to the project root, never relative to the path argument (issue 10)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from tests.test_cli import run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "broken"


def _findings(out: str, prefix: str) -> list[tuple[str, int, int, str, str]]:
    data = json.loads(out)
    items = data if isinstance(data, list) else data["findings"]
    rows = []
    for f in items:
        path = f["path"]
        assert path.startswith(prefix), (path, prefix)
        # a message names other files as the finding's path does: relative to the cwd
        message = f["message"]
        if prefix:  # the root itself shows as "project/" from outside, "./" from inside
            message = re.sub(rf"(?<![\w/.]){re.escape(prefix)}(?=[,)\s]|$)", "./", message)
            message = message.replace(prefix, "")
        rows.append((path[len(prefix):], f["line"], f["column"], f["code"], message))
    return sorted(rows)


def test_same_findings_from_the_root_its_parent_and_further_up(tmp_path: Path) -> None:
    project = tmp_path / "outer" / "project"
    shutil.copytree(FIXTURES, project)
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    args = ["check", "--no-cache", "--output-format", "json"]
    code_a, out_a, _ = run([*args, "."], project)
    code_b, out_b, _ = run([*args, "project"], project.parent)
    code_c, out_c, _ = run([*args, "outer/project"], tmp_path)
    assert code_a == code_b == code_c == 1
    here = _findings(out_a, "")
    assert len(here) > 30  # every kind of the broken fixtures is read
    assert _findings(out_b, "project/") == here
    assert _findings(out_c, "outer/project/") == here


def test_same_findings_for_a_project_named_by_its_absolute_path_from_elsewhere(
        tmp_path: Path) -> None:
    """From a folder beside the project, its files show by absolute path; resolving a
    template's include climbs their folders up to ``/`` and stops there (it once climbed
    forever and the run ended on the project time budget, cross-file findings lost)."""
    project = tmp_path / "project"
    shutil.copytree(FIXTURES, project)
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    args = ["check", "--no-cache", "--output-format", "json"]
    code_a, out_a, _ = run([*args, "."], project)
    code_b, out_b, err_b = run([*args, str(project)], elsewhere)
    assert (code_a, code_b) == (1, 1), err_b
    here = _findings(out_a, "")
    assert {row[3] for row in here} >= {"EL104", "EL106"}  # the include checks ran
    assert _findings(out_b, f"{project}/") == here
