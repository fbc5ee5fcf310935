"""Policy packs: a team's own declarative rules in YAML, no Python needed.

A pack is listed in config (``policy = ["policy/acme.yaml"]``) and holds rules of a few kinds
that read the same facts as the built-in rules:

- ``denied-variable``: a template of the given roles (default: evaluator) must not reference
  variables matching these globs (``customer_*``, ``run.trace.*``);
- ``allowed-models``: a file of the given roles that names a model must name one of these;
- ``required-contract-keys``: an evaluator prompt's output contract must mention these keys.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evallint.config import Config, ConfigError, load_config
from evallint.confine import inside_any
from evallint.facts import FileFacts, Pos
from evallint.findings import Finding, Severity
from evallint.frontend import ParseError
from evallint.models import normalize
from evallint.rulemeta import RuleMeta, load_rules
from evallint.source import DEFAULT_MAX_BYTES, read_bounded

if TYPE_CHECKING:
    from evallint.registry import Context

KINDS = ("denied-variable", "allowed-models", "required-contract-keys")
_CODE = re.compile(r"^[A-Z][A-Z0-9]{1,9}\d{2,4}$")


@dataclass(frozen=True)
class PolicyRule:
    """One declarative rule from a pack."""

    code: str
    name: str
    kind: str
    severity: Severity
    message: str
    roles: tuple[str, ...] = ("evaluator",)
    values: tuple[str, ...] = ()
    source: str = ""
    description: str = field(default="", compare=False)


def load_policy_file(path: Path, where: str) -> list[PolicyRule]:
    """Read and validate one pack; errors name the file and, where known, the line."""
    try:
        from evallint.marks import load_yaml  # yaml only when a pack is named

        data = load_yaml(read_bounded(path, DEFAULT_MAX_BYTES).decode("utf-8")).data
    except OSError as exc:
        raise ConfigError(f"{where}: policy pack {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: policy pack is not UTF-8 text") from None
    except ParseError as exc:
        raise ConfigError(f"{path}:{exc.line}: invalid YAML in policy pack: {exc.message}") \
            from None
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        raise ConfigError(f"{path}: a policy pack is a mapping with a 'rules' list")
    out = []
    for i, item in enumerate(data["rules"]):
        here = f"{path}: rules[{i}]"
        if not isinstance(item, dict):
            raise ConfigError(f"{here} must be a mapping")
        unknown = set(item) - {"id", "name", "kind", "severity", "message", "roles", "variables",
                               "models", "keys", "description"}
        if unknown:
            raise ConfigError(f"{here}: unknown key '{sorted(unknown)[0]}'")
        code = str(item.get("id", ""))
        if not _CODE.match(code) or code.startswith("EL"):
            raise ConfigError(f"{here}: 'id' must look like ACME001 (letters then digits, "
                              "not EL, which is evallint's own)")
        kind = item.get("kind")
        if kind not in KINDS:
            raise ConfigError(f"{here}: 'kind' must be one of {', '.join(KINDS)}")
        values_key = {"denied-variable": "variables", "allowed-models": "models",
                      "required-contract-keys": "keys"}[kind]
        values = item.get(values_key)
        if isinstance(values, str):
            values = [values]
        if (not isinstance(values, list) or not values
                or not all(isinstance(v, str) for v in values)):
            raise ConfigError(f"{here}: '{values_key}' must be a non-empty list of strings")
        roles = item.get("roles", ["evaluator"])
        roles = [roles] if isinstance(roles, str) else roles
        if not isinstance(roles, list) or not set(roles) <= {"evaluator", "generator", "unknown"}:
            raise ConfigError(f"{here}: 'roles' must list evaluator, generator or unknown")
        try:
            severity = Severity(item.get("severity", "error"))
        except ValueError:
            raise ConfigError(f"{here}: 'severity' must be error, warning or note") from None
        out.append(PolicyRule(
            code=code, name=str(item.get("name") or code.lower()), kind=kind, severity=severity,
            message=str(item.get("message") or ""), roles=tuple(roles), values=tuple(values),
            source=str(path), description=str(item.get("description") or ""),
        ))
    return out


def load_policies(config: Config) -> list[PolicyRule]:
    rules: list[PolicyRule] = []
    seen: set[str] = set()
    where = str(config.source or "configuration")
    base = config.source.parent if config.explicit and config.source else config.root
    for entry in config.policy:
        path = (base / entry) if not Path(entry).is_absolute() else Path(entry)
        if not config.explicit and not inside_any(path, (os.path.realpath(config.root),)):
            raise ConfigError(f"{where}: policy pack {entry} lies outside the project; a "
                              "project's own configuration names packs inside it (a pack "
                              "elsewhere comes from a --config file)")
        for rule in load_policy_file(path, where):
            if rule.code in seen:
                raise ConfigError(f"{path}: duplicate policy rule id {rule.code}")
            seen.add(rule.code)
            rules.append(rule)
    return rules


def policy_metas(rules: list[PolicyRule]) -> dict[str, RuleMeta]:
    """Rule metadata for policy rules, so selection, SARIF and `evallint rule` know them."""
    out = {}
    for r in rules:
        what = r.description or f"Policy rule of kind {r.kind}: {', '.join(r.values)}."
        out[r.code] = RuleMeta(
            code=r.code, name=r.name, severity=r.severity,
            summary=r.message or what, what=what,
            why=f"Declared by the team's policy pack {r.source}.",
            example=f"(kind {r.kind})", fix="Follow the team policy, or change the pack.",
            source=r.source,
        )
    return out


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def check(facts: FileFacts, ctx: Context, rules: list[PolicyRule]) -> Iterator[Finding]:
    """Run every enabled policy rule on one file's facts."""
    role = facts.role.role.value
    for r in rules:
        if not ctx.is_enabled(r.code) or role not in r.roles:
            continue
        if r.kind == "denied-variable":
            template = getattr(facts, "template", None)
            for var in getattr(template, "variables", []):
                dotted = var.dotted
                if _matches(var.name, r.values) or _matches(dotted, r.values):
                    msg = r.message or f"{role} template uses denied variable '{dotted}'"
                    yield ctx.finding(r.code, facts.path, var.pos, f"{msg} (policy)")
        elif r.kind == "allowed-models":
            model = getattr(facts, "model", None)
            if isinstance(model, str) and model:
                allowed = tuple(normalize(m) for m in r.values)
                if not _matches(normalize(model), allowed):
                    pos = getattr(facts, "model_pos", None) or Pos(1, 1)
                    msg = r.message or f"model '{model}' is not an allowed {role} model"
                    yield ctx.finding(r.code, facts.path, pos,
                                      f"{msg} (allowed: {', '.join(r.values)}) (policy)")
        elif r.kind == "required-contract-keys":
            keys = getattr(facts, "contract_keys", None)
            if keys is None:
                continue
            missing = [k for k in r.values if k not in keys]
            if missing:
                msg = r.message or "output contract lacks required keys"
                yield ctx.finding(r.code, facts.path, Pos(1, 1),
                                  f"{msg}: {', '.join(missing)} (policy)")


def with_policies(cfg: Config) -> Config:
    """``cfg`` with its policy packs read (a ConfigError names the pack and the line). The
    config layer only validates the list: packs hold rule metadata, which config must not
    depend on."""
    if cfg.policy and not cfg.policy_rules:
        cfg.policy_rules = load_policies(cfg)
    return cfg


def load_config_with_policies(start: Path, explicit: Path | None = None, *,
                              isolated: bool = False) -> Config:
    """:func:`evallint.config.load_config`, then the policy packs it lists."""
    return with_policies(load_config(start, explicit, isolated=isolated))


def all_metas(config: Config) -> dict[str, Any]:
    """Shipped rules plus the policy rules this configuration loads."""
    metas: dict[str, Any] = dict(load_rules())
    metas.update(policy_metas(config.policy_rules))
    return metas
