"""Jinja front-end: references with exact columns, paths, loop attribution, refs, errors."""

from __future__ import annotations

import pytest

from evallint.facts import TemplateVar
from evallint.frontend import ParseError
from evallint.frontends.jinja_front import parse_jinja


def refs(text: str) -> list[tuple[str, tuple[str, ...], int, int, str, str | None]]:
    return [(v.name, v.path, v.pos.line, v.pos.column, v.kind, v.via)
            for v in parse_jinja(text).variables]


def one(text: str) -> TemplateVar:
    found = parse_jinja(text).variables
    assert len(found) == 1, found
    return found[0]


def test_output_reference_has_exact_column() -> None:
    assert refs("Hello {{ name }}!") == [("name", ("name",), 1, 10, "output", None)]


def test_attribute_and_constant_subscript_paths() -> None:
    v = one("x\n  {{ run.generator['scratch'][0].text }}")
    assert v.path == ("run", "generator", "scratch", "0", "text")
    assert (v.pos.line, v.pos.column) == (2, 6)
    assert v.dotted == "run.generator.scratch.0.text"


def test_dynamic_subscript_stops_the_path_and_reports_the_key() -> None:
    found = refs("{{ steps[i].text }}")
    assert ("steps", ("steps",), 1, 4, "output", None) in found
    assert ("i", ("i",), 1, 10, "arg", None) in found


def test_dict_get_is_part_of_the_path() -> None:
    assert one("{{ run.get('cot') }}").path == ("run", "cot")


def test_loop_variable_is_attributed_to_the_iterated_variable() -> None:
    found = refs("{% for s in intermediate_steps %}\n- {{ s.text }} {{ loop.index }}\n{% endfor %}")
    assert found == [
        ("intermediate_steps", ("intermediate_steps",), 1, 13, "iter", None),
        ("intermediate_steps", ("intermediate_steps", "text"), 2, 6, "output", "s"),
    ]


def test_nested_loops_and_set_alias_keep_the_whole_path() -> None:
    text = ("{% set r = run.generator %}{% for step in r.steps %}"
            "{% for t in step.tool_calls %}{{ t.output }}{% endfor %}{% endfor %}")
    last = parse_jinja(text).variables[-1]
    assert last.path == ("run", "generator", "steps", "tool_calls", "output")
    assert last.via == "t"


def test_tuple_loop_target_over_items() -> None:
    last = parse_jinja("{% for k, v in history.items() %}{{ v }}{% endfor %}").variables[-1]
    assert (last.name, last.via) == ("history", "v")


def test_same_name_twice_on_a_line_gets_two_columns() -> None:
    cols = [c for _, _, _, c, _, _ in refs("{{ x }} and {{ x.x }} and {{ x }}")]
    assert cols == [4, 16, 30]


def test_whitespace_control_does_not_shift_columns() -> None:
    text = "{%- if a -%}\n   {{- b -}}   x {%- endif %}\n{{ b }}"
    assert [(n, ln, c) for n, _, ln, c, _, _ in refs(text)] == [
        ("a", 1, 8), ("b", 2, 8), ("b", 3, 4)
    ]


def test_raw_blocks_and_comments_are_not_references() -> None:
    found = refs("{% raw %}{{ nope }}{% endraw %}{# {{ hidden }} #} {{ seen }}")
    assert [f[0] for f in found] == ["seen"]
    assert found[0][3] == 54


def test_locals_builtins_and_macro_arguments_are_not_context_variables() -> None:
    text = ("{% macro m(a, b=system_prompt) %}{{ a }}{{ b }}{{ caller() }}{{ history }}"
            "{% endmacro %}{{ range(3) }}{{ namespace() }}{% set n = 1 %}{{ n }}")
    names = [(v.name, v.kind) for v in parse_jinja(text).variables]
    assert names == [("system_prompt", "arg"), ("history", "output")]


def test_kinds_filters_and_default() -> None:
    text = "{% if show %}{{ out|trim|default('none') }}{% endif %}{{ f(arg, k=kw) }}"
    found = parse_jinja(text).variables
    # A called global is a context variable too (functions can be passed in).
    assert [(v.name, v.kind) for v in found] == [
        ("show", "test"), ("out", "output"), ("f", "arg"), ("arg", "arg"), ("kw", "arg")
    ]
    out = found[1]
    assert out.filters == ("trim", "default") and out.has_default


def test_conditional_expression_positions_follow_the_source() -> None:
    assert [(n, c, k) for n, _, _, c, k, _ in refs("{{ a if b else c }}")] == [
        ("a", 4, "output"), ("b", 9, "test"), ("c", 16, "output")
    ]


def test_includes_imports_and_extends_are_refs_with_positions() -> None:
    text = ('{% extends "base.j2" %}\n{% include "partials/steps.j2" %}\n'
            "{% from 'm.j2' import f as g %}{% import 'x.j2' as x %}{% include tpl_name %}")
    facts = parse_jinja(text)
    got = [(r.target, r.kind, r.pos.line, r.pos.column, r.dynamic) for r in facts.refs]
    assert got == [
        ("base.j2", "extends", 1, 4, False),
        ("partials/steps.j2", "include", 2, 4, False),
        ("m.j2", "from", 3, 4, False),
        ("x.j2", "import", 3, 35, False),
        ("tpl_name", "include", 3, 59, True),
    ]
    assert {"g", "x"} <= set(facts.locals)


def test_call_block_and_with_bind_locals() -> None:
    text = ("{% call(row) table(rows) %}{{ row.cell }}{% endcall %}"
            "{% with h = chat_history %}{{ h[0] }}{% endwith %}")
    found = parse_jinja(text).variables
    assert [(v.name, v.via) for v in found] == [
        ("table", None), ("rows", None), ("chat_history", None), ("chat_history", "h")
    ]


@pytest.mark.parametrize(("text", "delimited"), [
    ("<output>{{ output }}</output>", True),
    ("<candidate kind='x'>\n\n  {{ output }}\n</candidate>", True),
    ("```\n{{ output }}\n```", True),
    ('"""\n{{ output }}\n"""', True),
    ("Answer: {{ output }}", True),
    ("**Answer:**\n{# the candidate #}\n{{ output }}", True),
    ("The answer {{ output }} is wrong.", False),
    ("Answer: {{ output }} and more", False),
    ("Grade this answer: {{ output }}", False),
    ("## Reply under review:\n{{ output }}", True),
    ("## The assistant's reply\n\n{{ output }}\n", True),
    ("## The assistant's reply\nIt said {{ output }}\n", False),
    # a prompt in an indented Python string keeps the code's indentation before its headings
    ("    ### RESPONSE TO EVALUATE ###\n    {{ output }}\n", True),
    ("    ### RESPONSE TO EVALUATE ###\n    It said {{ output }}\n", False),
    ("- REPLY (what the bot told the user): {{ output }}", True),
    ("REPLY TO BE GRADED: {{ output }}", True),
    ("Below you will find what the assistant wrote: {{ output }}", False),
    ("<output>{{ output }}", False),
    ("<a>x</a> {{ output }} <b>y</b>", False),
])
def test_delimited(text: str, delimited: bool) -> None:
    assert one(text).delimited is delimited


@pytest.mark.parametrize(("text", "line", "column", "words"), [
    ("Score.\n{% if output %}\n<output>{{ output }}</output>\n", 2, 1, "'if' block"),
    ("a\n  {% for x in y %}{% if x %}\n{% endif %}", 2, 3, "'for' block"),
    ("ok\n  so {{ x", 2, 6, "never closed"),
    ("line\n{% frobnicate %}", 2, 1, "unknown tag"),
])
def test_syntax_errors_point_at_the_problem(text: str, line: int, column: int,
                                            words: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_jinja(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert words in info.value.message


def test_crlf_text_has_the_same_positions() -> None:
    assert refs("a\r\n{{ x }}") == [("x", ("x",), 2, 4, "output", None)]
