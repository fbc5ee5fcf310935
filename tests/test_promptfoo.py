"""promptfoo: provider ids, grader precedence, defaults, includes, thinking, rubric variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from evallint.frontends.promptfoo_front import provider_model
from tests.conftest import lint_tree, write_files


@pytest.mark.parametrize(("pid", "model"), [
    ("openai:gpt-4o", "gpt-4o"),
    ("openai:chat:gpt-4o-mini", "gpt-4o-mini"),
    ("anthropic:messages:claude-sonnet-4-5", "claude-sonnet-4-5"),
    ("bedrock:us.anthropic.claude-3-5-sonnet-20241022-v2:0",
     "us.anthropic.claude-3-5-sonnet-20241022-v2:0"),
    ("file://provider.py", None),
    ("python:my_provider.py", None),
    ("https://example.test/api", None),
])
def test_provider_model(pid: str, model: str | None) -> None:
    assert provider_model(pid) == model


CONFIG = """providers: [openai:gpt-4o]
defaultTest:
  options:
    provider: openai:gpt-4o
tests:
  - options:
      provider: {GRADER_T}
    assert:
      - type: llm-rubric
        value: ok
        provider: {GRADER_A}
"""


def _run(tmp_path: Path, files: dict[str, str], codes: set[str]) -> list[tuple[str, int, str]]:
    write_files(tmp_path, files)
    return [(f.path, f.line, f.severity.value) for f in lint_tree(tmp_path, codes).findings]


def test_assertion_grader_beats_test_and_default(tmp_path: Path) -> None:
    text = CONFIG.replace("{GRADER_T}", "openai:gpt-4o").replace("{GRADER_A}",
                                                                  "openai:gpt-4o-mini")
    assert _run(tmp_path, {"promptfooconfig.yaml": text}, {"EL303"}) == []


def test_test_grader_beats_default(tmp_path: Path) -> None:
    text = CONFIG.replace("{GRADER_T}", "openai:gpt-4o-mini").replace(
        "        provider: {GRADER_A}\n", "")
    assert _run(tmp_path, {"promptfooconfig.yaml": text}, {"EL303"}) == []


def test_default_grader_same_as_provider_is_reported_once(tmp_path: Path) -> None:
    text = CONFIG.replace("  - options:\n      provider: {GRADER_T}\n", "  - ").replace(
        "        provider: {GRADER_A}\n", "").replace("  -     assert:", "  - assert:")
    text += "  - assert:\n      - type: factuality\n        value: x\n"
    assert _run(tmp_path, {"promptfooconfig.yaml": text}, {"EL303"}) == [
        ("promptfooconfig.yaml", 4, "error")]


def test_no_grader_and_custom_provider_only_is_clean(tmp_path: Path) -> None:
    text = "providers: [file://my_agent.py]\ntests:\n  - assert:\n" \
           "      - type: llm-rubric\n        value: ok\n"
    assert _run(tmp_path, {"promptfooconfig.yaml": text}, {"EL303"}) == []


def test_negated_and_assert_set_assertions_count(tmp_path: Path) -> None:
    text = ("providers: [openai:gpt-4.1]\ntests:\n  - assert:\n      - type: assert-set\n"
            "        assert:\n          - type: not-llm-rubric\n            value: rude\n")
    assert _run(tmp_path, {"promptfooconfig.yaml": text}, {"EL303"}) == [
        ("promptfooconfig.yaml", 6, "error")]


def test_included_default_test_file_sets_the_grader(tmp_path: Path) -> None:
    files = {
        "promptfooconfig.yaml": "providers: [openai:gpt-4.1]\ndefaultTest: file://default.yaml\n"
                                "tests:\n  - assert:\n      - type: llm-rubric\n"
                                "        value: ok\n",
        "default.yaml": "options:\n  provider: openai:gpt-4.1\nassert:\n"
                        "  - type: llm-rubric\n    value: polite\n",
    }
    assert _run(tmp_path, files, {"EL303"}) == [("default.yaml", 2, "error")]


def test_fragment_without_a_config_is_not_resolved(tmp_path: Path) -> None:
    files = {"tests/cases.yaml": "- assert:\n    - type: llm-rubric\n      value: ok\n"}
    assert _run(tmp_path, files, {"EL303", "EL204"}) == []


def test_rubric_variable_line_in_block_scalar(tmp_path: Path) -> None:
    text = ("providers: [openai:gpt-4.1]\ntests:\n  - assert:\n      - type: llm-rubric\n"
            "        value: |\n          Line one.\n          {% for s in intermediate_steps %}"
            "{{ s }}{% endfor %}\n")
    assert _run(tmp_path, {"promptfooconfig.yaml": text}, {"EL205"}) == [
        ("promptfooconfig.yaml", 7, "error")]


def test_legitimate_declaration_makes_a_note(tmp_path: Path) -> None:
    write_files(tmp_path, {"promptfooconfig.yaml": (
        "providers: [openai:gpt-4.1]\ntests:\n  - assert:\n      - type: llm-rubric\n"
        "        value: 'Consistent with {{ chat_history }}'\n")})
    config = {"legitimate": [{"paths": ["promptfooconfig.yaml"], "inputs": ["chat_history"],
                              "reason": "dialogue-level task"}]}
    result = lint_tree(tmp_path, {"EL205"}, config)
    assert [(f.line, f.severity.value) for f in result.findings] == [(5, "note")]


def test_invalid_yaml_is_el901(tmp_path: Path) -> None:
    write_files(tmp_path, {"promptfooconfig.yaml": "providers: [openai:gpt-4.1\ntests: []\n"})
    result = lint_tree(tmp_path, {"EL901"})
    assert [(f.code, f.line) for f in result.findings] == [("EL901", 2)]
