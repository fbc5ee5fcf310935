"""Configuration loading and validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from evallint.config import ConfigError, load_config, parse_config


def test_pyproject_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.evallint]\nselect = ["EL1"]\nfail-on = "error"\n'
        '[tool.evallint.roles]\n"prompts/critic_*.md" = "evaluator"\n'
        '[[tool.evallint.legitimate]]\npath = "prompts/faithfulness.md"\n'
        'inputs = ["context"]\nreason = "faithfulness needs the passages"\n'
    )
    cfg = load_config(tmp_path)
    assert cfg.select == ["EL1"]
    assert cfg.fail_on == "error"
    assert cfg.roles == {"prompts/critic_*.md": "evaluator"}
    assert cfg.legitimate[0].inputs == ("context",)


def test_evallint_toml_wins_and_is_plain(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.evallint]\nselect = ["EL1"]\n')
    (tmp_path / "evallint.toml").write_text('select = ["EL2"]\n')
    assert load_config(tmp_path).select == ["EL2"]


def test_config_found_from_subfolder(tmp_path: Path) -> None:
    (tmp_path / "evallint.toml").write_text('ignore = ["EL105"]\n')
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    cfg = load_config(sub)
    assert cfg.ignore == ["EL105"] and cfg.root == tmp_path.resolve()


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ({"selct": []}, "unknown key 'selct'"),
        ({"select": 3}, "'select' must be a list of strings"),
        ({"fail-on": "maybe"}, "'fail-on' must be one of"),
        ({"severity": {"EL101": "fatal"}}, "severity of EL101"),
        ({"roles": {"x": "judge-ish"}}, "roles."),
        ({"legitimate": [{"inputs": ["context"]}]}, "needs a 'reason'"),
        ({"legitimate": [{"inputs": ["c"], "reason": "r", "why": 1}]}, "unknown key 'why'"),
        ({"max-file-size": True}, "'max-file-size' must be a int"),
    ],
)
def test_invalid_config_messages(table: dict[str, object], needle: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_config(table, source=Path("pyproject.toml"), root=Path("."))
    assert needle in str(exc.value)
    assert "pyproject.toml" in str(exc.value)


def test_invalid_toml(tmp_path: Path) -> None:
    (tmp_path / "evallint.toml").write_text("select = [\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(tmp_path)


def test_underscore_keys_accepted() -> None:
    cfg = parse_config({"per_file_ignores": {"a.py": ["EL2"]}}, source=None, root=Path("."))
    assert cfg.per_file_ignores == {"a.py": ["EL2"]}
