"""EL905: unknown keys in a prompt file's `evallint:` block are reported by name, with the
known key they resemble."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import lint_tree, write_files

JUDGE = """---
evallint:
  legitmate:
    context: it compares the answer with the retrieved passages
  rol: evaluator
  owner: search-team
---
Passages: <context>{{ context }}</context>
Answer: <output>{{ output }}</output>
"""


def test_unknown_keys_named_with_a_suggestion(tmp_path: Path) -> None:
    write_files(tmp_path, {"prompts/faithfulness_judge.prompt.md": JUDGE})
    result = lint_tree(tmp_path, codes={"EL905"})
    got = [(f.line, f.column, f.message) for f in result.findings]
    assert got == [
        (3, 3, "unknown key 'legitmate' in the front matter's 'evallint:' block, so it is "
               "ignored (did you mean 'legitimate'?)"),
        (5, 3, "unknown key 'rol' in the front matter's 'evallint:' block, so it is ignored "
               "(did you mean 'role'?)"),
        (6, 3, "unknown key 'owner' in the front matter's 'evallint:' block, so it is ignored "
               "(known keys: role, legitimate)"),
    ]


def test_a_mistyped_declaration_still_leaves_the_finding_it_meant_to_allow(
        tmp_path: Path) -> None:
    """What the rule is for: the typo silently kept EL102; now the cause is reported too."""
    write_files(tmp_path, {"prompts/faithfulness_judge.prompt.md": JUDGE})
    codes = {f.code for f in lint_tree(tmp_path, codes={"EL102", "EL905"}).findings}
    assert codes == {"EL102", "EL905"}
    fixed = JUDGE.replace("legitmate", "legitimate").replace("rol:", "role:").replace(
        "  owner: search-team\n", "")
    write_files(tmp_path, {"prompts/faithfulness_judge.prompt.md": fixed})
    result = lint_tree(tmp_path, codes={"EL102", "EL905"})
    assert [(f.code, f.severity.value) for f in result.findings] == [("EL102", "note")]
