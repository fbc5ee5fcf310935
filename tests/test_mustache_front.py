"""Mustache/handlebars tokenizer: tags, sections, context attribution, positions, errors."""

from __future__ import annotations

import pytest

from evallint.frontend import ParseError
from evallint.frontends.mustache_front import parse_mustache


def refs(text: str) -> list[tuple[str, tuple[str, ...], int, int, str, str | None]]:
    return [(v.name, v.path, v.pos.line, v.pos.column, v.kind, v.via)
            for v in parse_mustache(text).variables]


def test_variables_triple_and_ampersand() -> None:
    assert refs("a {{x}} {{{ y }}} {{& z.w}}") == [
        ("x", ("x",), 1, 5, "output", None),
        ("y", ("y",), 1, 13, "triple", None),
        ("z", ("z", "w"), 1, 23, "triple", None),
    ]


def test_comments_and_long_comments_hide_tags() -> None:
    assert refs("{{! {{a}} }}{{!-- {{b}} }} --}}{{c}}") == [("c", ("c",), 1, 34, "output", None)]


def test_set_delimiter_changes_tags_and_back() -> None:
    text = "{{=<% %>=}}<% a %> {{literal}}\n<%={{ }}=%>{{ b }}"
    assert [(n, ln, c) for n, _, ln, c, _, _ in refs(text)] == [("a", 1, 15), ("b", 2, 15)]


def test_bad_set_delimiter_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        parse_mustache("{{=<%=}}")


def test_section_over_a_list_attributes_inner_names() -> None:
    text = "{{#intermediate_steps}}\n  {{text}} {{.}}\n{{/intermediate_steps}}"
    assert refs(text) == [
        ("intermediate_steps", ("intermediate_steps",), 1, 4, "section", None),
        ("intermediate_steps", ("intermediate_steps", "text"), 2, 5, "output",
         "intermediate_steps"),
        ("intermediate_steps", ("intermediate_steps",), 2, 14, "output", "intermediate_steps"),
    ]


def test_conditional_section_on_its_own_name_is_the_outer_variable() -> None:
    found = refs("{{#output}}<o>{{output}}</o>{{/output}}{{^output}}none{{/output}}")
    assert [(n, p, k) for n, p, _, _, k, _ in found] == [
        ("output", ("output",), "section"), ("output", ("output",), "output"),
        ("output", ("output",), "inverted"),
    ]


def test_handlebars_each_with_this_block_params_and_parent() -> None:
    text = ("{{#each run.steps as |s i|}}{{s.tool}} {{@index}} {{../history}}{{/each}}\n"
            "{{#each items}}{{this.output}}{{else}}{{none}}{{/each}}\n"
            "{{#with generator}}{{scratchpad}}{{/with}}{{@root.task}}")
    assert refs(text) == [
        ("run", ("run", "steps"), 1, 9, "iter", None),
        ("run", ("run", "steps", "tool"), 1, 31, "output", "s"),
        ("history", ("history",), 1, 53, "output", None),
        ("items", ("items",), 2, 9, "iter", None),
        ("items", ("items", "output"), 2, 18, "output", "this"),
        ("none", ("none",), 2, 41, "output", None),
        ("generator", ("generator",), 3, 9, "section", None),
        ("generator", ("generator", "scratchpad"), 3, 22, "output", "this"),
        ("task", ("task",), 3, 45, "output", None),
    ]


def test_if_does_not_change_the_context_and_helpers_are_not_variables() -> None:
    text = '{{#if reasoning}}{{answer}}{{/if}}{{format date "iso" tz=zone (upper name)}}'
    assert [(n, k) for n, _, _, _, k, _ in refs(text)] == [
        ("reasoning", "test"), ("answer", "output"), ("date", "arg"), ("zone", "arg"),
        ("name", "arg"),
    ]


def test_partials_are_refs_with_positions() -> None:
    facts = parse_mustache("x\n{{> partials/cot }}{{#> layout}}y{{/layout}}{{> (whichPartial) }}")
    got = [(r.target, r.kind, r.pos.line, r.pos.column, r.dynamic) for r in facts.refs]
    assert got == [("partials/cot", "partial", 2, 5, False), ("layout", "partial", 2, 25, False),
                   ("(whichPartial)", "partial", 2, 49, True)]


def test_whitespace_control_tildes() -> None:
    assert refs("{{~#if a~}} {{~b~}} {{~/if~}}") == [
        ("a", ("a",), 1, 8, "test", None), ("b", ("b",), 1, 16, "output", None)
    ]


def test_raw_block_content_is_not_parsed() -> None:
    found = refs("{{{{raw}}}}{{#not}}{{x}}{{{{/raw}}}}{{y}}")
    assert found == [("y", ("y",), 1, 39, "output", None)]


def test_delimited_inside_tags_and_fences() -> None:
    found = parse_mustache("<output>\n{{output}}\n</output>\n```\n{{a}}\n```\n{{b}}").variables
    assert [v.delimited for v in found] == [True, True, False]


@pytest.mark.parametrize(("text", "line", "column", "words"), [
    ("{{#a}}\n{{#b}}\n{{/a}}", 3, 1, "does not match 'b'"),
    ("x\n  {{#items}}\n", 2, 3, "never closed"),
    ("ok\n{{/x}}", 2, 1, "no open section"),
    ("a {{ x", 1, 3, "unclosed tag"),
    ("{{{x}}", 1, 1, "triple"),
    ("{{!-- never ends", 1, 1, "comment"),
])
def test_errors_have_positions(text: str, line: int, column: int, words: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_mustache(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert words in info.value.message
