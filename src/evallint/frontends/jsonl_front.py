"""JSONL / JSON prompt collections: records whose fields hold prompt templates.

A record is a prompt when a template field (``prompt_template``, ``system_prompt``,
``judge_prompt``, ...) holds a string with placeholders (``{var}``, ``{{ var }}``, ``{$var}``),
or when a ``model`` sits next to a ``prompt``/``system``/``messages`` template. Each template
string becomes :class:`PromptFacts` whose positions are lines and columns in the JSON file
(escapes decoded, so a placeholder after ``\\n`` escapes is found at its real column).

A data file is not a prompt collection: the first records decide, reading stops there when
they hold no template, and at most ``MAX_RECORDS`` records are read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import Any

from evallint.classify import (
    FORMAT_FIELDS,
    MODEL_FIELDS,
    PLAIN_FIELDS,
    TEMPLATE_FIELDS,
)
from evallint.config import Config
from evallint.facts import Pos
from evallint.facts.prompt_collections import (
    CollectionFacts,
    CollectionRecord,
)
from evallint.frontend import ParseError, frontend
from evallint.frontends import prompt_files as pf
from evallint.frontends.dollar_front import has_dollar_fields
from evallint.frontends.embedded import prompt_from_text, string_locator
from evallint.kinds import FileKind
from evallint.marks import Doc, PathT, load_json
from evallint.roles import Role, RoleInfo, prompt_name_role, role_from_value
from evallint.source import LineIndex, SourceFile

_NAME_FIELDS = ("name", "id", "key", "title", "prompt_name", "task")
_ROLE_FIELDS = ("role", "type", "kind", "step", "agent", "purpose", "stage")
MAX_RECORDS = 2000
_PROBE = 5  # records that must show a template before the rest of a JSONL file is read


def has_placeholders(text: str) -> bool:
    return pf.dialect_for("", text, {}) != "none" or has_dollar_fields(text)


@frontend(FileKind.PROMPT_COLLECTION)
def parse_collection(source: SourceFile, config: Config) -> CollectionFacts:
    """Every prompt record of a JSONL or JSON file; a data file yields no records."""
    facts = CollectionFacts(path=source.rel, kind=FileKind.PROMPT_COLLECTION.value)
    text = source.text
    index = LineIndex(text)
    if source.rel.lower().endswith(".jsonl"):
        items = _jsonl_records(text, index)
    else:
        try:
            doc = load_json(text)
        except ParseError:
            return facts  # not ours to report: a JSON file is data before it is a prompt
        items = _json_records(doc, index)
    probed = 0
    for n, (name, record, doc, base) in enumerate(items):
        if n >= MAX_RECORDS:
            break
        rec = _record(source.rel, text, index, name, record, doc, base, config)
        if rec is None:
            probed += 1
            if probed >= _PROBE and not facts.records:
                break
            continue
        facts.records.append(rec)
    return facts


Item = tuple[str, dict[str, Any], Doc, PathT]


def _jsonl_records(text: str, index: LineIndex) -> Iterator[Item]:
    """One record a line; the doc's positions are shifted to the file's lines."""
    start = 0
    line_no = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        line_no += 1
        line = text[start:end]
        start = end + 1
        if not line.strip():
            continue
        try:
            doc = load_json(line)
        except ParseError:
            continue
        if not isinstance(doc.data, dict):
            continue
        shifted = Doc(doc.data)
        shifted.values = {k: Pos(v.line + line_no - 1, v.column) for k, v in doc.values.items()}
        shifted.keys = {k: Pos(v.line + line_no - 1, v.column) for k, v in doc.keys.items()}
        yield _name_of(doc.data, f"line {line_no}"), doc.data, shifted, ()


def _json_records(doc: Doc, index: LineIndex) -> Iterator[Item]:
    """A list of records, a dict holding such a list, a dict of named records, or one record."""
    data = doc.data
    if isinstance(data, list):
        for i, item in enumerate(data):
            if isinstance(item, dict):
                yield _name_of(item, f"record {i + 1}"), item, doc, (i,)
        return
    if not isinstance(data, dict):
        return
    if any(k in data for k in TEMPLATE_FIELDS):
        yield _name_of(data, "record"), data, doc, ()
        return
    for key, value in data.items():
        if isinstance(value, dict):
            yield _name_of(value, str(key)), value, doc, (str(key),)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    yield _name_of(item, f"{key} {i + 1}"), item, doc, (str(key), i)


def _name_of(record: dict[str, Any], default: str) -> str:
    for key in _NAME_FIELDS:
        value = record.get(key)
        if isinstance(value, str) and value.strip() and len(value) < 120:
            return value.strip()
    return default


def _template_fields(record: dict[str, Any]) -> list[tuple[str, PathT, str]]:
    """(field name, path inside the record, text) of every template string of a record."""
    out: list[tuple[str, PathT, str]] = []
    lowered = {str(k).lower(): k for k in record}
    specific = [lowered[k] for k in TEMPLATE_FIELDS if k in lowered]
    named_model = any(k in lowered for k in MODEL_FIELDS)
    for key in specific:
        value = record[key]
        if isinstance(value, str):
            out.append((str(key), (key,), value))
        elif isinstance(value, list):
            out += [(str(key), (key, i), v) for i, v in enumerate(value) if isinstance(v, str)]
    plain = [lowered[k] for k in PLAIN_FIELDS if k in lowered]
    if specific or named_model:
        for key in plain:
            if isinstance(record[key], str):
                out.append((str(key), (key,), record[key]))
        msgs = record.get("messages")
        if isinstance(msgs, list):
            for i, msg in enumerate(msgs):
                if isinstance(msg, dict) and isinstance(msg.get("content"), str):
                    role = str(msg.get("role", "message"))
                    out.append((f"{role}_message", ("messages", i, "content"), msg["content"]))
    return out


def _record(path: str, text: str, index: LineIndex, name: str, record: dict[str, Any],
            doc: Doc, base: PathT, config: Config) -> CollectionRecord | None:
    fields = _template_fields(record)
    if not any(has_placeholders(t) for _k, _p, t in fields):
        return None
    rec = CollectionRecord(name, doc.values.get(base) or Pos(1, 1))
    for key in MODEL_FIELDS:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            rec.model = value.strip()
            rec.model_pos = doc.values.get((*base, key))
            break
    formats = [record[k] for k in FORMAT_FIELDS if isinstance(record.get(k), str)]
    combined = "\n\n".join([t for _k, _p, t in fields] + formats)
    contract = pf._contract_keys(combined, record)
    if formats and any(f.strip() for f in formats):
        contract.append(pf.FORMAT_KEY)  # the record states its output format
    role = _stated_role(record, [k for k, _p, _t in fields])
    located: list[tuple[str, str, Callable[[Pos], Pos]]] = []
    for key, sub, raw in fields:
        vpos = doc.values.get((*base, *sub))
        start = index.offset(vpos.line, vpos.column) if vpos else 0
        decoded, locate = string_locator(text, index, start, raw)
        located.append((key, decoded, locate))
    if role is None:
        whole = prompt_from_text(path, "\n\n".join(d for _k, d, _l in located),
                                 lambda p: p, config, name=_pseudo(name, fields),
                                 name_is="record name")
        role = whole.role
        if role.role is Role.UNKNOWN:
            role = _collection_role(path) or role
    for key, decoded, locate in located:
        facts = prompt_from_text(path, decoded, locate, config, name=f"{name}_{key}",
                                 role=RoleInfo(role.role, list(role.evidence), role.explicit),
                                 extra_contract=contract)
        facts.model, facts.model_pos = rec.model, rec.model_pos
        rec.prompts.append(facts)
    return rec


def _pseudo(name: str, fields: list[tuple[str, PathT, str]]) -> str:
    """The record's name standing in for a file name: its name and its fields' names."""
    return "_".join([name, *dict.fromkeys(k for k, _p, _t in fields)])


def _stated_role(record: dict[str, Any], keys: list[str]) -> RoleInfo | None:
    """A role the record states: a role-like field, or a field named for one side."""
    for key in _ROLE_FIELDS:
        value = record.get(key)
        role = role_from_value(value) if isinstance(value, str) and len(value) < 40 else \
            Role.UNKNOWN
        if role is not Role.UNKNOWN:
            return RoleInfo(role, [f"record field {key}: {value}"], explicit=True)
    sides = {prompt_name_role(k)[0] for k in keys} - {Role.UNKNOWN}
    if len(sides) == 1:
        side = sides.pop()
        named = next(k for k in keys if prompt_name_role(k)[0] is side)
        return RoleInfo(side, [f"record field '{named}'"])
    return None


def _collection_role(path: str) -> RoleInfo | None:
    """A collection named for the judge (``judge_prompts.jsonl``) holds judge prompts: the
    role of a record that states none itself."""
    name = PurePosixPath(path).name
    role, token = prompt_name_role(name.split(".")[0])
    if role is Role.EVALUATOR and pf._names_the_judge(name, token):
        return RoleInfo(role, [f"collection file name token '{token}' ({name})"])
    return None
