"""The catalogue of LLM APIs (rules/models/*.yaml): every file follows the schema, every
file's examples run, and a malformed file is refused with its name and key.

The examples are the catalogue's contract, as a rule's examples are the rule's: a flagged
example must report each expected finding at its line, a clean one none of the codes it
lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evallint import catalogue
from evallint.catalogue import CatalogueError, parse_framework
from tests.conftest import lint_tree, write_files

CAT = catalogue.load()


def _examples(flagged: bool) -> list[Any]:
    out = []
    for fid, fw in sorted(CAT.frameworks.items()):
        for i, ex in enumerate(fw.examples):
            if bool(ex.get("expect")) == flagged:
                out.append(pytest.param(fid, ex, id=f"{fid}-{i}-{ex['name'][:40]}"))
    return out


def test_the_catalogue_covers_the_sdks_and_frameworks_it_promises() -> None:
    assert len(CAT.frameworks) >= 20
    for fw in CAT.frameworks.values():
        assert fw.written_against and fw.docs.startswith("https://"), fw.source
        # every file is a contract the suite runs: something it must find, something it must not
        assert any(e.get("expect") for e in fw.examples), f"{fw.source}: no flagged example"
        assert any(e.get("clean") for e in fw.examples), f"{fw.source}: no clean example"


@pytest.mark.parametrize(("fid", "example"), _examples(True))
def test_a_flagged_example_reports_what_it_expects(fid: str, example: dict[str, Any],
                                                   tmp_path: Path) -> None:
    write_files(tmp_path, example["files"])
    codes = {e["code"] for e in example["expect"]}
    result = lint_tree(tmp_path, codes)
    assert not result.tool_errors
    for exp in example["expect"]:
        hits = [(f.code, f.path, f.line) for f in result.findings if f.code == exp["code"]]
        assert (exp["code"], exp["path"], exp["line"]) in hits, f"{fid}: {hits}"


@pytest.mark.parametrize(("fid", "example"), _examples(False))
def test_a_clean_example_reports_none_of_its_codes(fid: str, example: dict[str, Any],
                                                   tmp_path: Path) -> None:
    write_files(tmp_path, example["files"])
    codes = set(example["clean"])
    result = lint_tree(tmp_path, codes)
    assert not result.tool_errors
    assert [f for f in result.findings if f.code in codes] == []


@pytest.mark.parametrize(("doc", "message"), [
    ({"id": "x", "label": "X", "written_against": "x 1", "docs": "https://x"},
     "missing required key 'packages'"),
    ({"id": "x", "label": "X", "written_against": "x 1", "docs": "https://x",
      "packages": ["x"], "objects": [{"classes": ["A"], "kind": "robot"}]},
     "objects[0].kind: 'robot' is not one of"),
    ({"id": "x", "label": "X", "written_against": "x 1", "docs": "https://x",
      "packages": ["x"], "calls": [{"methods": ["run"], "requires": "sometimes"}]},
     "calls[0].requires"),
    ({"id": "x", "label": "X", "written_against": "x 1", "docs": "https://x",
      "packages": ["x"], "runz": {}}, "unknown key 'runz'"),
    ({"id": "x", "label": "X", "written_against": "x 1", "docs": "https://x",
      "packages": ["x"], "objects": [{"classes": "Agent", "kind": "agent"}]},
     "objects[0].classes: expected list"),
    ({"id": "x", "label": "X", "written_against": "x 1", "docs": "https://x",
      "packages": ["x"], "objects": [{"classes": ["Agent"], "kind": "agent", "since": "v2"}]},
     "objects[0].since: a release number"),
    # an old and a current shape of one class must be told apart
    ({"id": "x", "label": "X", "written_against": "x 1", "docs": "https://x",
      "packages": ["x"], "objects": [
          {"classes": ["Grader"], "kind": "evaluator", "in": ["x.old"], "until": "2.0"},
          {"classes": ["Grader"], "kind": "evaluator", "in": ["x.old"], "since": "1.5"}]},
     "objects[0] and objects[1] both describe Grader"),
    ({"id": "x", "label": "X", "written_against": "x 1", "docs": "https://x",
      "packages": ["x"], "objects": [
          {"classes": ["Grader"], "kind": "evaluator", "since": "2.0", "until": "1.0"}]},
     "since 2.0 is not before until 1.0"),
    ({"id": "x", "label": "X", "written_against": "x 1", "docs": "https://x",
      "packages": ["x"], "objects": [
          {"classes": ["Opts"], "kind": "agent", "permissions": {"keyword": "mode"}}]},
     "objects[0].permissions: needs a keyword and grants"),
    ({"id": "x", "label": "X", "written_against": "x 1", "docs": "https://x",
      "packages": ["x"], "objects": [
          {"classes": ["Opts"], "kind": "agent",
           "permissions": {"keyword": "mode", "grants": {"all": "Bash"}}}]},
     "objects[0].permissions.grants.all: expected a list"),
])
def test_a_malformed_catalogue_file_is_refused_with_its_name_and_key(doc: dict[str, Any],
                                                                    message: str) -> None:
    with pytest.raises(CatalogueError) as err:
        parse_framework(doc, "rules/models/x.yaml")
    assert "rules/models/x.yaml" in str(err.value) and message in str(err.value)


def test_two_shapes_of_one_class_live_side_by_side_when_told_apart() -> None:
    """Release ranges that do not overlap, or different modules, keep an old and a current
    API of one class in one file (TruLens's provider before and after 1.0)."""
    base = {"id": "x", "label": "X", "written_against": "x 2", "docs": "https://x",
            "packages": ["x"]}
    by_release = parse_framework({**base, "objects": [
        {"classes": ["Grader"], "kind": "evaluator", "until": "2.0"},
        {"classes": ["Grader"], "kind": "evaluator", "since": "2.0"}]}, "x.yaml")
    assert [(r.since, r.until) for r in by_release.objects] == [("", "2.0"), ("2.0", "")]
    by_module = parse_framework({**base, "objects": [
        {"classes": ["Grader"], "kind": "evaluator", "in": ["x_legacy"]},
        {"classes": ["Grader"], "kind": "evaluator", "in": ["x.providers"]}]}, "x.yaml")
    assert len(by_module.objects) == 2
    trulens = CAT.frameworks["trulens"]
    defaults = {(r.since, r.until): r.model.default for r in trulens.objects
                if "OpenAI" in r.classes and r.model is not None}
    assert defaults == {("1.0", ""): "gpt-4o-mini", ("", "1.0"): "gpt-3.5-turbo"}


def test_the_keyword_vocabularies_are_the_union_of_the_rows() -> None:
    """One copy of each vocabulary: what the rules treat as an option, a prompt or a model
    keyword is what the catalogue's files say, nothing kept beside them."""
    options = {k for fw in CAT.frameworks.values() for k in fw.keywords.get("options", ())}
    assert options <= CAT.non_content
    assert "messages" in CAT.prompt_keywords and "messages" not in CAT.non_content
    assert {"model", "modelId"} <= set(CAT.model_keywords)


def test_the_precompiled_catalogue_matches_its_files() -> None:
    from evallint.rulemeta import compile_rules, rules_dir

    folder = rules_dir() / "models"
    assert (folder / catalogue.COMPILED).read_text(encoding="utf-8") == compile_rules(folder), \
        "run `python -m evallint.rulemeta` after editing rules/models/*.yaml"


def test_object_rows_resolve_by_package_and_class() -> None:
    assert CAT.object_row("agents.Agent") is not None
    assert CAT.object_row("pydantic_ai.agent.Agent").framework == "pydantic_ai"
    assert CAT.object_row("mylib.Agent") is None
    assert CAT.object_row("langchain_anthropic.ChatAnthropic").kind == "chat"
    assert CAT.object_row("google.generativeai.GenerativeModel") is not None
    assert CAT.object_row("google.genai.GenerativeModel") is None  # only the old SDK's


HOUSE_MODEL = """\
id: house
label: house LLM client
written_against: house-llm 2.3
docs: https://wiki.example.com/house-llm
packages: [house.llm]
objects:
  - classes: [HouseLLM]
    kind: chat
    model: {keywords: [model], position: 0}
runs:
  methods: [ask]
"""

HOUSE_PROJECT = {
    "house/__init__.py": "",
    "house/llm.py": (
        "import json\nimport urllib.request\n\n\nclass HouseLLM:\n"
        "    def __init__(self, model: str) -> None:\n        self.model = model\n\n"
        "    def ask(self, prompt: str) -> str:\n"
        "        body = json.dumps({'model': self.model, 'prompt': prompt}).encode()\n"
        "        with urllib.request.urlopen('http://llm.internal/v1', body) as r:\n"
        "            return r.read().decode()\n"),
    "app/loop.py": (
        "from house.llm import HouseLLM\n\nwriter = HouseLLM(model='house-large-v2')\n\n\n"
        "def compose(topic: str) -> str:\n"
        "    return writer.ask(f'Write a short essay about {topic}.')\n\n\n"
        "def mark(essay: str) -> str:\n"
        "    return writer.ask('You are a strict grader. Score the essay from 1 to 10.\\n'"
        " + essay)\n\n\n"
        "def main() -> str:\n    return mark(compose('tides'))\n"),
}


def test_a_project_describes_its_own_client_wrapper_in_a_catalogue_file(
        tmp_path: Path) -> None:
    """An in-house client class is invisible to the shipped catalogue; the project's own
    catalogue file (``models = [...]``) makes its calls LLM calls with their model."""
    write_files(tmp_path, HOUSE_PROJECT)
    assert [f for f in lint_tree(tmp_path, {"EL301"}).findings] == []
    write_files(tmp_path, {"evallint/models/house.yaml": HOUSE_MODEL})
    result = lint_tree(tmp_path, {"EL301"}, {"models": ["evallint/models/*.yaml"]})
    assert not result.tool_errors
    found = [(f.code, f.path, f.line) for f in result.findings]
    assert ("EL301", "app/loop.py", 11) in found, found  # the grading call, on the writer's model


def test_a_bad_project_catalogue_file_is_a_config_error_naming_it(tmp_path: Path) -> None:
    from evallint.config import ConfigError, parse_config

    write_files(tmp_path, {"models/house.yaml": HOUSE_MODEL.replace("kind: chat", "kind: bot")})
    with pytest.raises(ConfigError) as err:
        parse_config({"models": ["models/*.yaml"]}, source=tmp_path / "pyproject.toml",
                     root=tmp_path)
    assert "models/house.yaml" in str(err.value) and "kind" in str(err.value)
    with pytest.raises(ConfigError, match="matches no file"):
        parse_config({"models": ["nowhere/*.yaml"]}, source=None, root=tmp_path)
    with pytest.raises(ConfigError, match="inside the project"):
        parse_config({"models": ["../elsewhere.yaml"]}, source=None, root=tmp_path)
