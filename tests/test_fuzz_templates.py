"""Property tests: random and mutated text never crashes a template front-end.

Each front-end may only raise ParseError, and every position it reports (variables, refs,
sections, errors) must lie inside the text.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evallint.config import Config
from evallint.facts import Pos, TemplateFacts
from evallint.frontend import ParseError
from evallint.frontends.format_front import parse_format
from evallint.frontends.jinja_front import parse_jinja
from evallint.frontends.mustache_front import parse_mustache
from evallint.frontends.prompt_files import parse_prompt_file
from evallint.source import SourceFile

ROOT = Path(__file__).resolve().parents[1]
SEEDS = [p.read_text(encoding="utf-8") for p in sorted(
    (ROOT / "fixtures").glob("*/templates/**/*")) if p.is_file()] or ["{{ x }}"]
PIECES = ["{{", "}}", "{%", "%}", "{#", "#}", "{{{", "}}}", "{%-", "-%}", "{{#", "{{/", "{{^",
          "{{>", "{{!", "{{=<% %>=}}", "<%", "%>", "{{~", "~}}", "---\n", "```", '"""', "<o>",
          "</o>", "\n", " ", "x", "a.b", "'", '"', "(", ")", "[", "]", "|", "for", "if", "endif",
          "endfor", "in", "raw", "endraw", "{{{{raw}}}}", "else", "each", "#", "## H\n", "é", "\r"]
SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

texts = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(PIECES), max_size=60).map("".join),
    st.builds(lambda seed, i, junk: seed[:i] + junk + seed[i:],
              st.sampled_from(SEEDS), st.integers(0, 2000),
              st.lists(st.sampled_from(PIECES), max_size=6).map("".join)),
    st.builds(lambda seed, i, j: seed[:i] + seed[j:], st.sampled_from(SEEDS),
              st.integers(0, 2000), st.integers(0, 2000)),
)


def inside(text: str, pos: Pos) -> bool:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return 1 <= pos.line <= len(lines) and 1 <= pos.column <= len(lines[pos.line - 1]) + 1


def check(parse: Callable[[str], TemplateFacts], text: str) -> None:
    try:
        facts = parse(text)
    except ParseError as exc:
        assert inside(text, Pos(exc.line, exc.column)), (exc.line, exc.column)
        return
    for var in facts.variables:
        assert inside(text, var.pos), var
        assert var.name and var.path and var.path[0] == var.name
    for ref in facts.refs:
        assert inside(text, ref.pos), ref


@SETTINGS
@given(texts)
def test_jinja_never_crashes(text: str) -> None:
    check(parse_jinja, text)


@SETTINGS
@given(texts)
def test_mustache_never_crashes(text: str) -> None:
    check(parse_mustache, text)


@SETTINGS
@given(texts)
def test_format_never_raises(text: str) -> None:
    check(parse_format, text)


@SETTINGS
@given(texts, st.sampled_from(["p/a.prompt.md", "p/a.j2", "p/a.hbs", "p/a.prompty",
                               "p/a.prompt", "prompts/a.txt"]))
def test_prompt_files_never_crash(text: str, rel: str) -> None:
    src = SourceFile(path=Path(rel), rel=rel, text=text, data=text.encode("utf-8", "replace"))
    try:
        facts = parse_prompt_file(src, Config())
    except ParseError as exc:
        assert inside(text, Pos(exc.line, exc.column)), (exc.line, exc.column)
        return
    for sec in facts.sections:
        assert inside(text, sec.pos)
    for var in facts.template.variables:
        assert inside(text, var.pos)


def test_deep_nesting_and_huge_lines() -> None:
    deep_jinja = "{% if a %}" * 3000 + "{{ x }}" + "{% endif %}" * 3000
    deep_expr = "{{ " + "(" * 5000 + "x" + ")" * 5000 + " }}"
    deep_mustache = "{{#a}}" * 3000 + "{{x}}" + "{{/a}}" * 3000
    huge = "word " * 200_000 + "{{ output }}"
    for text in (deep_jinja, deep_expr, huge):
        check(parse_jinja, text)
    for text in (deep_mustache, huge):
        check(parse_mustache, text)
    facts = parse_jinja(huge)
    assert facts.variables[0].pos == Pos(1, 1_000_004)
