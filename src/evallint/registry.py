"""Rules are data plus code: metadata and examples live in ``rules/*.yaml``; checks bind to ids.

A check is a function registered with :func:`file_check` (one file's facts at a time, run in
worker processes) or :func:`project_check` (all facts at once, for cross-file rules). Both
yield findings made through :class:`Context`, which fills in severity and name from the rule's
metadata and the user's configuration.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from evallint.config import Config, Legitimate
from evallint.facts import FileFacts, Pos
from evallint.findings import Finding, Related, Severity
from evallint.kinds import FileKind
from evallint.rulemeta import RuleDataError as RuleDataError  # re-exported for callers
from evallint.rulemeta import RuleMeta as RuleMeta
from evallint.rulemeta import load_rules as load_rules
from evallint.rulemeta import parse_rule as parse_rule
from evallint.rulemeta import rules_dir as rules_dir

if TYPE_CHECKING:
    from evallint.cache import Store


# --------------------------------------------------------------------------- checks

FileCheckFn = Callable[[Any, "Context"], Iterable[Finding]]
ProjectCheckFn = Callable[["Project", "Context"], Iterable[Finding]]


@dataclass(frozen=True)
class FileCheck:
    codes: tuple[str, ...]
    kinds: frozenset[str]
    fn: FileCheckFn


@dataclass(frozen=True)
class ProjectCheck:
    codes: tuple[str, ...]
    fn: ProjectCheckFn


FILE_CHECKS: list[FileCheck] = []
PROJECT_CHECKS: list[ProjectCheck] = []


def file_check(
    *codes: str, kinds: Iterable[FileKind | str]
) -> Callable[[FileCheckFn], FileCheckFn]:
    """Register a per-file check for the given rule codes and file kinds."""

    def deco(fn: FileCheckFn) -> FileCheckFn:
        FILE_CHECKS.append(
            FileCheck(codes=codes, kinds=frozenset(str(getattr(k, "value", k)) for k in kinds),
                      fn=fn)
        )
        return fn

    return deco


def project_check(*codes: str) -> Callable[[ProjectCheckFn], ProjectCheckFn]:
    """Register a cross-file check for the given rule codes."""

    def deco(fn: ProjectCheckFn) -> ProjectCheckFn:
        PROJECT_CHECKS.append(ProjectCheck(codes=codes, fn=fn))
        return fn

    return deco


_TEMPLATES = ("jinja", "mustache", "prompt", "prompty", "dotprompt")
_PY = ("python", "notebook", "typescript", "javascript")

# The modules that register a front-end, a check or a model-pair source, and the kinds of file
# whose facts they parse or read (``None``: every run, whatever it checks). A run imports only
# those for the kinds it meets: checking one Python file imports neither YAML nor the agent
# and promptfoo front-ends. A module of ``checks`` missing here is imported by every run; the
# other modules of ``frontends`` are helpers that register nothing (Jinja's is imported by the
# first template that needs it).
# tests/test_registry_kinds.py derives the file kinds from what each module registers, and
# holds each project check and pair source to yielding nothing on files of the kinds its
# module is not loaded for.
MODULE_KINDS: dict[str, tuple[str, ...] | None] = {
    "evallint.frontends.python_front": ("python", "notebook"),
    "evallint.frontends.script_front": ("typescript", "javascript"),
    "evallint.frontends.prompt_files": _TEMPLATES,
    "evallint.frontends.agents_front": ("agent", "claude-settings"),
    "evallint.frontends.instructions_front": ("instructions",),
    "evallint.frontends.config_refs": ("judge-config",),
    "evallint.frontends.jsonl_front": ("prompt-collection",),
    "evallint.frontends.loopspec_front": ("loop-spec",),
    "evallint.frontends.openai_evals_front": ("openai-evals",),
    "evallint.frontends.promptfoo_front": ("promptfoo",),
    "evallint.checks.agents": ("agent", "claude-settings"),
    "evallint.checks.instructions": ("instructions", "agent"),
    # judge configs, collections and promptfoo configs: the template checks on the
    # templates they hold
    "evallint.checks.embedded_templates": ("judge-config", "prompt-collection", "promptfoo"),
    "evallint.checks.evallint_keys": _TEMPLATES,
    "evallint.checks.graders": None,  # grader reads from every framework's source
    "evallint.checks.graph_loops": _PY,
    "evallint.checks.inspect_scorers": _PY,
    "evallint.checks.lock": None,  # the lock file pins files of any kind
    "evallint.checks.loopspec": ("loop-spec",),
    "evallint.checks.models": None,  # pairs from every kind's source
    "evallint.checks.tools": None,  # tool grants from every kind's source
    "evallint.checks.openai_evals": ("openai-evals",),
    "evallint.checks.promptfoo": ("promptfoo",),
    "evallint.checks.pydantic_datasets": _PY,
    "evallint.checks.python_cells": _PY,
    "evallint.checks.python_flow": _PY,
    "evallint.checks.python_loop": _PY,
    "evallint.checks.python_models": _PY,
    "evallint.checks.templates": (*_TEMPLATES, *_PY, "judge-config", "prompt-collection",
                                  "promptfoo"),
}

_LOADED: set[str] = set()  # modules of MODULE_KINDS imported so far
_ALL_LOADED = False


def modules_for(kinds: Iterable[str] | None) -> list[str]:
    """The modules a run over files of ``kinds`` needs (``None``: every module), in a fixed
    order: those of :data:`MODULE_KINDS` that serve one of the kinds, and every module of
    ``evallint.checks`` the table does not list (a new check runs in every run until its
    module is listed with the kinds it reads)."""
    wanted = None if kinds is None else set(kinds)
    listed = [name for name, served in MODULE_KINDS.items()
              if wanted is None or served is None or not wanted.isdisjoint(served)]
    return listed + unlisted_checks()


_UNLISTED: list[str] | None = None


def unlisted_checks() -> list[str]:
    """The modules of ``evallint.checks`` missing from :data:`MODULE_KINDS` (a listing of
    the package's folder, once per process)."""
    global _UNLISTED
    if _UNLISTED is None:
        folder = os.path.join(os.path.dirname(__file__), "checks")
        try:
            found = os.listdir(folder)
        except OSError:  # not a folder (a zipped install): the table is all there is
            found = []
        names = sorted(n[:-3] for n in found if n.endswith(".py") and not n.startswith("_"))
        _UNLISTED = [m for m in (f"evallint.checks.{n}" for n in names) if m not in MODULE_KINDS]
    return _UNLISTED


def load_checks(kinds: Iterable[str] | None = None, *,
                part: Literal["all", "parent", "worker"] = "all") -> None:
    """Import the modules that register front-ends, checks and pair sources for files of
    ``kinds`` (all of them when ``None``). Importing more later only adds: a run's checks are
    loaded before its workers fork, which inherit them. A small run's one worker imports
    what it parses and checks files with (``part="worker"``: the front-ends and
    :data:`FILE_CHECK_MODULES`) while the parent imports the rest (``part="parent"``: every
    module but the front-ends)."""
    global _ALL_LOADED
    if _ALL_LOADED:
        return
    for name in modules_for(kinds):
        if name in _LOADED:
            continue
        frontend = name.startswith(_FRONTENDS)
        if part == "parent" and frontend:
            continue
        if part == "worker" and not (frontend or name in FILE_CHECK_MODULES
                                     or name not in MODULE_KINDS):
            continue
        importlib.import_module(name)
        _LOADED.add(name)
    if kinds is None and part == "all":
        _ALL_LOADED = True


_FRONTENDS = "evallint.frontends."

# The check modules that register file checks (a worker runs those on each file it parses);
# the others hold only project checks and fact sources, which run in the parent.
# tests/test_registry_kinds.py keeps this right.
FILE_CHECK_MODULES = frozenset({
    "evallint.checks.agents", "evallint.checks.embedded_templates",
    "evallint.checks.evallint_keys", "evallint.checks.instructions", "evallint.checks.loopspec",
    "evallint.checks.promptfoo",
    "evallint.checks.python_cells", "evallint.checks.templates",
})

# Modules the project checks import only when they must solve something again, by the kinds
# of file whose change makes them: imported while the workers parse such a file, not after.
SOLVER_MODULES: dict[str, tuple[str, ...]] = {"evallint.pyflow.analysis": _PY}


def preload_solver(changed: Iterable[str]) -> None:
    """Import the solver modules that files of the ``changed`` kinds will need."""
    kinds = set(changed)
    for name, served in SOLVER_MODULES.items():
        if not kinds.isdisjoint(served):
            importlib.import_module(name)


def registering_modules() -> list[str]:
    """Every module of ``evallint.frontends`` and ``evallint.checks`` (for the tests that
    keep :data:`MODULE_KINDS` complete)."""
    import pkgutil

    out: list[str] = []
    for pkg_name in ("evallint.frontends", "evallint.checks"):
        pkg = importlib.import_module(pkg_name)
        out += [info.name for info in pkgutil.walk_packages(pkg.__path__, prefix=pkg_name + ".")]
    return out


# --------------------------------------------------------------------------- selection


class SelectionError(Exception):
    """A selector that names no rule (a typo in --select or config)."""


def resolve_selector(selector: str, metas: dict[str, RuleMeta]) -> set[str]:
    """Codes a selector names: ``ALL``, a code, a code prefix (``EL1``) or a rule name."""
    sel = selector.strip()
    if sel.upper() == "ALL":
        return set(metas)
    up = sel.upper()
    codes = {c for c in metas if c.startswith(up)}
    if not codes:
        codes = {c for c, m in metas.items() if m.name == sel.lower()}
    if not codes:
        raise SelectionError(f"unknown rule selector '{selector}'")
    return codes


def selected_codes(
    metas: dict[str, RuleMeta], select: list[str], extend: list[str], ignore: list[str]
) -> set[str]:
    """ruff's precedence: select, then extend-select, then ignore. Off-by-default rules need
    naming by code or prefix (``ALL`` alone does not switch them on)."""
    chosen: set[str] = set()
    for sel in select:
        codes = resolve_selector(sel, metas)
        if sel.strip().upper() == "ALL":
            codes = {c for c in codes if metas[c].default}
        chosen |= codes
    for sel in extend:
        chosen |= resolve_selector(sel, metas)
    for sel in ignore:
        chosen -= resolve_selector(sel, metas)
    return chosen


# --------------------------------------------------------------------------- context


class Context:
    """What a check may consult besides facts: config, rule metadata and parameters."""

    def __init__(self, config: Config, metas: dict[str, RuleMeta], enabled: set[str]) -> None:
        self.config = config
        self.metas = metas
        self.enabled = enabled
        # Set by the engine when results are cached: project checks may cache there too.
        self.cache: Store | None = None
        # Processes the project checks may use (the run's ``--jobs``; 1: stay in this one).
        self.workers = 1

    def is_enabled(self, code: str) -> bool:
        return code in self.enabled

    def params(self, code: str) -> dict[str, Any]:
        """Rule parameters from ``rules/CODE.yaml``, overridden by config ``rules.CODE``."""
        merged = dict(self.metas[code].params) if code in self.metas else {}
        merged.update(self.config.rules.get(code, {}))
        return merged

    def severity(self, code: str) -> Severity:
        override = self.config.severity.get(code)
        if override:
            return Severity(override)
        return self.metas[code].severity if code in self.metas else Severity.ERROR

    def legitimate(self, facts: FileFacts, name: str) -> str | None:
        """The reason an evaluator may see ``name``, if the file or the config declares one."""
        for key, reason in facts.declarations.items():
            if key == name or (key.endswith("*") and name.startswith(key[:-1])):
                return reason
        from evallint import globs

        for leg in self.config.legitimate:
            rel = self.config.root_relative(facts.path)
            if globs.match_any(rel, leg.paths) and _names(leg, name):
                return leg.reason
        return None

    def finding(
        self,
        code: str,
        path: str,
        pos: Pos | None,
        message: str,
        *,
        severity: Severity | None = None,
        default: Severity | None = None,
        related: Iterable[Related] = (),
        evidence: Iterable[str] = (),
        end: Pos | None = None,
        fix: str | None = None,
    ) -> Finding:
        """Build a finding with the configured severity and the rule's name.

        ``severity`` is this finding's, whatever the config says (a "legitimate by design"
        note); ``default`` replaces the rule's default severity for this finding only, so a
        severity the user configured for the code still wins (weaker evidence: a warning)."""
        pos = pos or Pos(1, 1)
        if severity is None and default is not None and code not in self.config.severity:
            severity = default
        meta = self.metas.get(code)
        return Finding(
            code=code,
            message=message,
            path=path,
            line=pos.line,
            column=pos.column,
            cell=pos.cell,
            severity=severity or self.severity(code),
            name=meta.name if meta else "",
            end_line=end.line if end else None,
            end_column=end.column if end else None,
            related=list(related),
            evidence=list(evidence),
            fix=fix,
        )


def _names(leg: Legitimate, name: str) -> bool:
    return any(i == name or (i.endswith("*") and name.startswith(i[:-1])) for i in leg.inputs)


@dataclass
class Project:
    """Every file's facts, for rules that need more than one file (I4 across prompts, includes)."""

    files: dict[str, FileFacts]
    config: Config

    def of_kind(self, *kinds: FileKind | str) -> Iterator[FileFacts]:
        wanted = {str(getattr(k, "value", k)) for k in kinds}
        for facts in self.files.values():
            if facts.kind in wanted:
                yield facts
