"""Random and mutated YAML, JSON and markdown never crash the config front-ends: they either
return facts or raise ParseError (reported as EL901)."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evallint.config import Config
from evallint.facts import FileFacts
from evallint.frontend import ParseError
from evallint.frontends.agents_front import parse_agent, parse_settings
from evallint.frontends.loopspec_front import parse_loop_spec
from evallint.frontends.openai_evals_front import parse_openai_evals
from evallint.frontends.promptfoo_front import parse_promptfoo
from evallint.source import SourceFile

PARSERS = {
    ".claude/agents/judge.md": parse_agent,
    ".claude/settings.json": parse_settings,
    "promptfooconfig.yaml": parse_promptfoo,
    "registry/modelgraded/spec.yaml": parse_openai_evals,
    "evallint.loop.yaml": parse_loop_spec,
}
SEEDS = [
    "---\nname: judge\ntools: Read, Bash(git diff:*)\nmodel: inherit\n---\nYou are the judge.\n",
    '{"permissions": {"allow": ["Bash(git commit:*)", "Write"], "defaultMode": "acceptEdits"}}',
    "providers:\n  - id: openai:o4-mini\n    config: {reasoning_effort: high}\ndefaultTest:\n"
    "  options: {provider: {text: {id: openai:gpt-4o}}}\ntests:\n  - file://t/*.yaml\n"
    "  - assert:\n      - type: llm-rubric\n        value: '{{ history }}'\n",
    "spec:\n  prompt:\n    - role: user\n      content: '{input} {completion} {x'\n"
    "  input_outputs: {input: completion}\n",
    "generator: {prompt: a.md, model: gpt-4o}\nevaluator: {prompt: a.md}\npass_threshold: 9\n"
    "metric:\n  judge: {sample_size: 3, stratification: [{n: 1}], singleton_sample: 1}\n",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["providers", "tests", "assert", "type", "value", "provider",
                         "options", "defaultTest", "id", "config", "prompt", "model",
                         "generator", "evaluator", "judge", "metric", "permissions", "allow",
                         "tools", "name", "stratification", "sample_size", "immutable",
                         "scope", "mutable", "input_outputs", "content", "role"]),
        inner, max_size=5),
    max_leaves=20,
)


def _parse(rel: str, text: str) -> None:
    src = SourceFile(Path(rel), rel, text, text.encode("utf-8", "surrogatepass"))
    try:
        facts = PARSERS[rel](src, Config())
    except ParseError as exc:
        assert exc.line >= 1 and exc.column >= 1
        return
    assert isinstance(facts, FileFacts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(PARSERS)), json_values)
def test_structured_documents(rel: str, value: object) -> None:
    if rel.endswith(".json"):
        import json

        text = json.dumps(value)
    else:
        text = yaml.safe_dump(value)
        if rel.endswith(".md"):
            text = f"---\n{text}---\nbody\n"
    _parse(rel, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(SEEDS))), st.data())
def test_mutated_seeds(seed: int, data: st.DataObject) -> None:
    text = SEEDS[seed]
    for _ in range(data.draw(st.integers(0, 4))):
        i = data.draw(st.integers(0, len(text)))
        op = data.draw(st.sampled_from(["del", "ins", "dup"]))
        if op == "del":
            text = text[:i] + text[i + data.draw(st.integers(1, 5)):]
        elif op == "ins":
            text = text[:i] + data.draw(st.sampled_from(
                ["{", "}", "[", "]", ":", "- ", "\n", "  ", "'", '"', "&a ", "*a", "!!", "---\n",
                 "{{", "%", "\t", "|\n", "\x00"])) + text[i:]
        else:
            text = text[:i] + text[i:i + 20] + text[i:]
    rel = list(PARSERS)[seed]
    _parse(rel, text)


@given(st.text(max_size=200))
@settings(max_examples=200, deadline=None)
def test_random_text(text: str) -> None:
    for rel in PARSERS:
        _parse(rel, text)
