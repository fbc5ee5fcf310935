"""A run imports only the checks for the kinds of file it meets (registry.MODULE_KINDS).

That table is only right while (1) every module is loaded for each kind it registers a
front-end or a file check for, and (2) a module left out for some kinds has nothing to say on
files of those kinds: its project checks and model-pair sources yield nothing there. (1) is
read off the registrations; (2) is tried on every rule example and fixture, one kind at a time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

from evallint.engine import RunResult
from evallint.facts.graderreads import SOURCES as READ_SOURCES
from evallint.facts.modelpairs import SOURCES
from evallint.facts.toolgrants import SOURCES as GRANT_SOURCES
from evallint.frontend import FRONTENDS
from evallint.registry import (
    FILE_CHECK_MODULES,
    FILE_CHECKS,
    MODULE_KINDS,
    PROJECT_CHECKS,
    Context,
    Project,
    load_checks,
    load_rules,
    modules_for,
)
from tests.conftest import lint_tree, write_files

ROOT = Path(__file__).resolve().parent.parent


def _sources() -> list[Callable[[Project, Context], Iterable[object]]]:
    """Every kind's fact sources for the one-per-rule checks (model pairs, tool grants, grader
    reads), as registered so far."""
    return [*SOURCES, *GRANT_SOURCES, *READ_SOURCES]


def _serves(module: str, kind: str) -> bool:
    served = MODULE_KINDS[module]
    return served is None or kind in served


def test_each_module_is_loaded_for_every_kind_it_registers_for() -> None:
    load_checks()
    for kind, parse in FRONTENDS.items():
        assert parse.__module__ in MODULE_KINDS, parse.__module__
        assert _serves(parse.__module__, kind), (parse.__module__, kind)
    for check in FILE_CHECKS:
        module = check.fn.__module__
        assert module in MODULE_KINDS, module
        for kind in check.kinds:
            assert _serves(module, kind), (module, check.codes, kind)
    for fn in [c.fn for c in PROJECT_CHECKS] + _sources():
        assert fn.__module__ in MODULE_KINDS, fn.__module__


def test_the_modules_a_worker_imports_hold_every_file_check_and_only_file_checks() -> None:
    """A small run's one worker imports the front-ends and FILE_CHECK_MODULES alone: a file
    check anywhere else would silently not run there."""
    load_checks()
    with_file_checks = {check.fn.__module__ for check in FILE_CHECKS}
    assert with_file_checks == set(FILE_CHECK_MODULES)


def test_modules_for_a_kind_are_those_serving_it_and_those_every_run_needs() -> None:
    python = modules_for(["python"])
    assert "evallint.frontends.python_front" in python
    assert "evallint.checks.lock" in python and "evallint.checks.models" in python
    assert "evallint.frontends.agents_front" not in python
    assert "evallint.frontends.promptfoo_front" not in python
    assert modules_for(None) == list(MODULE_KINDS)
    assert set(modules_for(["python", "agent"])) == set(python) | set(modules_for(["agent"]))


def test_a_check_module_missing_from_the_table_runs_in_every_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A new check needs its rule file and its module, nothing more: until the module is
    listed with the kinds it reads, every run imports it."""
    from evallint import registry

    assert registry.unlisted_checks() == []  # the table lists every check module today
    table = {k: v for k, v in MODULE_KINDS.items() if k != "evallint.checks.agents"}
    monkeypatch.setattr(registry, "MODULE_KINDS", table)
    monkeypatch.setattr(registry, "_UNLISTED", None)
    assert "evallint.checks.agents" in registry.modules_for(["python"])
    assert "evallint.frontends.agents_front" not in registry.modules_for(["python"])


@dataclass
class _Example:
    invalid: bool
    configured: bool
    root: Path
    result: RunResult


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> list[_Example]:
    """Every rule example (valid and invalid), written out and linted once for this module."""
    out: list[_Example] = []
    base = tmp_path_factory.mktemp("examples")
    for meta in load_rules().values():
        for kind in ("valid", "invalid"):
            for example in meta.tests.get(kind) or []:
                root = base / f"ex{len(out)}"
                write_files(root, example["files"])
                result = lint_tree(root, None, example.get("config"))
                out.append(_Example(kind == "invalid", bool(example.get("config")), root,
                                    result))
    return out


def _corpus(examples: list[_Example]) -> list[Project]:
    """The projects of every rule example and of each fixture tree."""
    projects = [e.result.project for e in examples if e.result.project is not None]
    assert len(projects) == len(examples)
    for tree in sorted((ROOT / "fixtures").iterdir()):
        if tree.is_dir() and tree.name != "expected":
            result = lint_tree(tree)
            assert result.project is not None
            projects.append(result.project)
    return projects


def test_a_module_left_out_for_a_kind_finds_nothing_in_files_of_that_kind(
        examples: list[_Example]) -> None:
    load_checks()
    metas = load_rules()
    tried: set[str] = set()
    for project in _corpus(examples):
        for kind in {f.kind for f in project.files.values()}:
            alone = Project({p: f for p, f in project.files.items() if f.kind == kind},
                            project.config)
            ctx = Context(project.config, metas, set(metas))
            wanted = set(modules_for([kind]))
            for fn in [c.fn for c in PROJECT_CHECKS] + _sources():
                if fn.__module__ in wanted:
                    continue
                tried.add(kind)
                found = list(fn(alone, ctx))
                assert found == [], (fn.__module__, fn.__name__, kind, found[:2])
    # the corpus holds files of every kind, so every left-out module was tried on each
    assert tried >= {"python", "jinja", "prompt", "agent", "promptfoo", "loop-spec",
                     "judge-config", "openai-evals", "prompt-collection"}, tried


# A small run's one worker imports the front-ends it parses with; the parent imports only
# the checks (while the worker parses), so no front-end shows in the parent's modules.
@pytest.mark.parametrize(("files", "absent", "present"), [
    ({"judge.py": "import anthropic\nc = anthropic.Anthropic()\n"},
     ["yaml", "evallint.frontends.agents_front", "evallint.frontends.promptfoo_front",
      "evallint.frontends.config_refs", "evallint.checks.agents",
      "evallint.frontends.python_front"],
     ["evallint.checks.python_flow", "evallint.pyflow.analysis"]),
    ({"prompts/judge.prompt.md": "---\nmodel: x\n---\nScore the {{ answer }}.\n"},
     ["evallint.frontends.agents_front", "evallint.frontends.promptfoo_front",
      "evallint.checks.agents", "evallint.frontends.prompt_files", "evallint.pyflow.analysis"],
     ["evallint.checks.templates"]),
])
def test_a_run_imports_only_what_its_kinds_need(tmp_path: Path, files: dict[str, str],
                                               absent: list[str], present: list[str]) -> None:
    write_files(tmp_path, files)
    probe = ("import sys\nfrom evallint.cli import main\n"
             "sys.argv = ['evallint', 'check', '--no-cache', '.']\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(' '.join(sorted(sys.modules)))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    loaded = set(out.stdout.split())
    assert "evallint.cli" in loaded, out.stderr
    assert not loaded & set(absent), loaded & set(absent)
    assert set(present) <= loaded, set(present) - loaded


def _single_kind_examples(examples: list[_Example]) -> dict[str, Path]:
    """For each kind, the first invalid rule example whose files are all of that kind."""
    out: dict[str, Path] = {}
    for e in examples:
        kinds = {t.kind for t in e.result.files}
        if e.invalid and not e.configured and len(kinds) == 1 and e.result.findings:
            out.setdefault(kinds.pop(), e.root)
    return out


def _check_json(root: Path, load_all: bool) -> str:
    probe = ("import sys\nfrom evallint.cli import main\n"
             + ("from evallint.registry import load_checks\nload_checks()\n" if load_all else "")
             + "sys.argv = ['evallint', 'check', '--no-cache', '--output-format', 'json', '.']\n"
             "main()\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    out = subprocess.run([sys.executable, "-c", probe], cwd=root, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode in (0, 1), out.stderr
    return out.stdout


def test_a_run_of_one_kind_finds_what_a_run_with_every_check_loaded_finds(
        examples: list[_Example]) -> None:
    """Checks of one kind may run another kind's checks (a judge config runs the template
    checks on its templates): a fresh process loading only what the kind needs must report
    exactly what one with every check loaded reports."""
    one_kind = _single_kind_examples(examples)
    assert {"python", "prompt", "agent", "promptfoo", "judge-config", "loop-spec",
            "prompt-collection"} <= set(one_kind), sorted(one_kind)
    for kind, root in sorted(one_kind.items()):
        lazy, full = _check_json(root, False), _check_json(root, True)
        assert lazy == full, kind
        assert '"code"' in lazy, kind
