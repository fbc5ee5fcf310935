"""Policy packs: loading, validation messages, and the three declarative rule kinds."""

from __future__ import annotations

from pathlib import Path

import pytest

from evallint.config import Config, ConfigError, parse_config
from evallint.facts import Pos, PromptFacts, TemplateFacts, TemplateVar
from evallint.policy import all_metas, check, with_policies
from evallint.registry import Context
from evallint.roles import Role, RoleInfo

PACK = """\
rules:
  - id: ACME001
    name: no-customer-data-in-judge
    kind: denied-variable
    variables: [customer_*, "run.trace.*"]
    message: judges never see customer data
  - id: ACME002
    kind: allowed-models
    models: [claude-haiku-4-5]
    severity: warning
  - id: ACME003
    kind: required-contract-keys
    keys: [score, feedback, confidence]
"""


def _cfg(tmp_path: Path, pack: str = PACK) -> Config:
    (tmp_path / "acme.yaml").write_text(pack)
    return with_policies(parse_config({"policy": ["acme.yaml"]},
                                      source=tmp_path / "evallint.toml", root=tmp_path))


def _judge(role: Role = Role.EVALUATOR) -> PromptFacts:
    tpl = TemplateFacts(dialect="jinja", variables=[
        TemplateVar("output", ("output",), Pos(3, 10)),
        TemplateVar("customer_email", ("customer_email",), Pos(4, 3)),
        TemplateVar("run", ("run", "trace", "steps"), Pos(5, 3)),
    ])
    return PromptFacts(path="prompts/judge.j2", kind="jinja", role=RoleInfo(role),
                       template=tpl, model="claude-sonnet-4-5", model_pos=Pos(2, 8),
                       contract_keys=["score", "feedback"])


def test_pack_rules_fire_with_positions(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    metas = all_metas(cfg)
    assert metas["ACME001"].name == "no-customer-data-in-judge"
    ctx = Context(cfg, metas, set(metas))
    found = {(f.code, f.line, f.column) for f in check(_judge(), ctx, cfg.policy_rules)}
    assert found == {("ACME001", 4, 3), ("ACME001", 5, 3), ("ACME002", 2, 8), ("ACME003", 1, 1)}


def test_generator_templates_untouched_by_default(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    metas = all_metas(cfg)
    ctx = Context(cfg, metas, set(metas))
    assert list(check(_judge(Role.GENERATOR), ctx, cfg.policy_rules)) == []


def test_disabled_policy_rule_is_silent(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    metas = all_metas(cfg)
    ctx = Context(cfg, metas, {"ACME002"})
    assert {f.code for f in check(_judge(), ctx, cfg.policy_rules)} == {"ACME002"}


@pytest.mark.parametrize(
    ("pack", "needle"),
    [
        ("rules: [{id: EL999, kind: denied-variable, variables: [x]}]", "'id' must look like"),
        ("rules: [{id: ACME010, kind: nope}]", "'kind' must be one of"),
        ("rules: [{id: ACME001, kind: allowed-models}]", "'models' must be a non-empty list"),
        ("rules: [{id: ACME001, kind: allowed-models, models: [a], colour: red}]",
         "unknown key 'colour'"),
        ("rules:\n  - id: [unclosed\n", "acme.yaml:"),
        ("just a string", "a policy pack is a mapping"),
    ],
)
def test_bad_pack_messages(tmp_path: Path, pack: str, needle: str) -> None:
    with pytest.raises(ConfigError) as exc:
        _cfg(tmp_path, pack)
    assert needle in str(exc.value)
    assert "acme.yaml" in str(exc.value)


def test_missing_pack_is_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="policy pack"):
        with_policies(parse_config({"policy": ["missing.yaml"]}, source=None, root=tmp_path))
