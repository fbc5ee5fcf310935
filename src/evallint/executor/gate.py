"""The lint gate: lint the spec and every prompt it names before a single request is sent.

The spec knows which prompt is the generator and which the evaluator, so it says so to the
linter (config roles) instead of leaving the linter to infer it, and makes sure every prompt
file is read as a template whatever its name.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from evallint.executor.errors import RunError
from evallint.executor.spec import LoopSpec
from evallint.findings import Finding, Severity


@dataclass
class GateResult:
    blocking: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    tool_errors: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.blocking and not self.tool_errors


def format_finding(f: Finding) -> str:
    return f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}"


def lint_gate(spec: LoopSpec) -> GateResult:
    from evallint.api import lint
    from evallint.config import ConfigError
    from evallint.discovery import DiscoveryError
    from evallint.policy import load_config_with_policies
    from evallint.registry import RuleDataError, SelectionError

    paths = [spec.path, *spec.prompt_files()]
    for p in paths:
        if not p.is_file():
            raise RunError(f"{p}: file not found")
    try:
        config = load_config_with_policies(spec.path.parent.resolve())
        roles = dict(config.roles)
        templates = list(config.templates)
        stated = [(spec.generator, "generator"), (spec.evaluator, "evaluator")]
        if spec.judge is not None:
            stated.append((spec.judge.role, "evaluator"))
        for role_spec, role in stated:
            if role_spec is None:
                continue
            rel = config.root_relative(str(role_spec.prompt))
            roles[rel] = role
            if rel not in templates:
                templates.append(rel)
        config = dataclasses.replace(config, roles=roles, templates=templates)
        result = lint([str(p) for p in paths], config=config, use_cache=False, jobs=1)
    except (ConfigError, DiscoveryError, SelectionError, RuleDataError) as exc:
        raise RunError(f"lint could not run: {exc}") from None
    gate = GateResult(tool_errors=list(result.tool_errors))
    for f in result.findings:
        if f.severity is Severity.ERROR:
            gate.blocking.append(f)
        elif f.severity is Severity.WARNING:
            gate.warnings.append(f)
    return gate
