"""Deterministic checks run on an answer before the LLM judge (the hybrid evaluator).

A failed check costs no judge call: the attempt scores 0 and the failures become the feedback.
The JSON schema support is a deliberate subset (type, properties, required, items, enum,
additionalProperties, min/max length and value) that covers output contracts without a
dependency.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_KINDS = {"length", "regex", "json_schema"}
_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}
_SCHEMA_KEYS = {
    "type", "properties", "required", "items", "enum", "additionalProperties", "minLength",
    "maxLength", "minimum", "maximum", "minItems", "maxItems", "description", "title",
}


@dataclass(frozen=True)
class Check:
    """A deterministic check run on the answer before the LLM judge (hybrid evaluator)."""

    kind: str  # length | regex | json_schema
    params: dict[str, Any]
    line: int | None = None


def validate_check(check: Check) -> str | None:
    """Why a check from the spec is unusable, or None when it is fine."""
    p = check.params
    if check.kind not in _KINDS:
        return f"unknown check type '{check.kind}' (known: {', '.join(sorted(_KINDS))})"
    if check.kind == "length":
        extra = set(p) - {"min_chars", "max_chars", "message"}
        if extra:
            return f"unknown key '{sorted(extra)[0]}' in length check"
        bounds = [p.get("min_chars"), p.get("max_chars")]
        if all(b is None for b in bounds):
            return "a length check needs min_chars or max_chars"
        if any(b is not None and (isinstance(b, bool) or not isinstance(b, int) or b < 0)
               for b in bounds):
            return "min_chars and max_chars must be whole numbers ≥ 0"
    elif check.kind == "regex":
        extra = set(p) - {"pattern", "must_match", "message"}
        if extra:
            return f"unknown key '{sorted(extra)[0]}' in regex check"
        if not isinstance(p.get("pattern"), str):
            return "a regex check needs a 'pattern'"
        try:
            re.compile(p["pattern"])
        except re.error as exc:
            return f"invalid regular expression: {exc}"
        if not isinstance(p.get("must_match", True), bool):
            return "must_match must be true or false"
    else:
        extra = set(p) - {"schema", "message"}
        if extra:
            return f"unknown key '{sorted(extra)[0]}' in json_schema check"
        problem = _schema_problem(p.get("schema"), "schema")
        if problem:
            return problem
    return None


def _schema_problem(schema: Any, where: str) -> str | None:
    if not isinstance(schema, dict):
        return f"{where} must be a mapping"
    extra = set(schema) - _SCHEMA_KEYS
    if extra:
        return f"{where}: unsupported JSON schema keyword '{sorted(extra)[0]}'"
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    if any(k not in _TYPES for k in kinds):
        return f"{where}: unknown type {kind!r}"
    for name, sub in (schema.get("properties") or {}).items():
        problem = _schema_problem(sub, f"{where}.properties.{name}")
        if problem:
            return problem
    if "items" in schema:
        return _schema_problem(schema["items"], f"{where}.items")
    return None


def run_checks(answer: str, checks: tuple[Check, ...]) -> list[str]:
    """Every failed check's message, in spec order."""
    failures = []
    for check in checks:
        problem = _run_one(answer, check)
        if problem:
            failures.append(str(check.params.get("message") or problem))
    return failures


def _run_one(answer: str, check: Check) -> str | None:
    p = check.params
    if check.kind == "length":
        n = len(answer)
        if p.get("min_chars") is not None and n < p["min_chars"]:
            return f"answer is {n} characters, shorter than {p['min_chars']}"
        if p.get("max_chars") is not None and n > p["max_chars"]:
            return f"answer is {n} characters, longer than {p['max_chars']}"
        return None
    if check.kind == "regex":
        found = re.search(p["pattern"], answer) is not None
        if found != p.get("must_match", True):
            verb = "does not match" if not found else "matches forbidden"
            return f"answer {verb} pattern {p['pattern']!r}"
        return None
    try:
        value = json.loads(strip_fence(answer))
    except ValueError as exc:
        return f"answer is not valid JSON: {exc}"
    errors = schema_errors(value, p["schema"], "$")
    return "; ".join(errors[:3]) if errors else None


_FENCE_INFO = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"


def strip_fence(text: str) -> str:
    """The body of a single fenced code block, or the text unchanged.

    What ``re.fullmatch(r"\\s*```[A-Za-z0-9_-]*\\s*\\n(.*?)\\n\\s*```\\s*", text, re.S)`` finds,
    read with ``str.find``: the pattern tried each newline of a run of blank lines as the
    closing one and read the rest of the run from each (quadratic in the run)."""
    start = len(text) - len(text.lstrip())
    close = len(text.rstrip()) - 3  # where the closing fence starts
    if not text.startswith("```", start) or close < 0 or not text.startswith("```", close):
        return text.strip()
    info = len(text) - len(text[start + 3:].lstrip(_FENCE_INFO))  # the end of the info string
    if close <= info:  # one fence, or two with no newline between
        return text.strip()
    # the blanks after the info string hold the opening line's newline, the blanks before the
    # closing fence the body's last one
    blanks = len(text) - len(text[info:].lstrip())
    tail = len(text[:close].rstrip())
    opener = text.rfind("\n", info, blanks)  # the last one first, as \s* is greedy
    while opener != -1:
        end = text.find("\n", max(opener + 1, tail), close)  # the first one, as .*? is lazy
        if end != -1:
            return text[opener + 1:end]
        if opener + 1 <= tail:
            break  # an earlier opening newline searches the same blanks
        opener = text.rfind("\n", info, opener)
    return text.strip()


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, int | float)


def schema_errors(value: Any, schema: dict[str, Any], at: str) -> list[str]:
    """Where ``value`` breaks ``schema`` (the supported subset), as JSON-path-like messages."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    if kinds and not any(_type_ok(value, k) for k in kinds):
        return [f"{at} should be {' or '.join(kinds)}"]
    errors: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{at} should be one of {schema['enum']!r}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{at} is shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{at} is longer than {schema['maxLength']}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{at} is below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{at} is above {schema['maximum']}")
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for name in schema.get("required", []):
            if name not in value:
                errors.append(f"{at}.{name} is required")
        for name, sub in props.items():
            if name in value:
                errors.extend(schema_errors(value[name], sub, f"{at}.{name}"))
        if schema.get("additionalProperties") is False:
            errors.extend(f"{at}.{k} is not allowed" for k in value if k not in props)
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{at} has fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{at} has more than {schema['maxItems']} items")
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                errors.extend(schema_errors(item, schema["items"], f"{at}[{i}]"))
    return errors
