"""Prompt files → :class:`PromptFacts`: templates, markdown prompts with front matter, .prompty,
dotprompt.

One front-end for every template kind because they share everything but the body dialect:
YAML front matter (with key positions), markdown headings, role evidence, legitimate-by-design
declarations and output-contract evidence. The body is parsed by the dialect's own front-end
with the front matter blanked out, so every position is a position in the real file.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from evallint import globs
from evallint.config import Config
from evallint.facts import Pos, PromptFacts, Section, TemplateFacts, TemplateVar
from evallint.facts.prompt_files import (
    EVALLINT_KEYS,
    FORMAT_KEY,
    JSON_KEY,
    LEGITIMATE_ITEM_KEYS,
    PromptFileFacts,
    UnknownKey,
)
from evallint.frontend import ParseError, frontend
from evallint.frontends.dollar_front import has_dollar_fields, parse_dollar
from evallint.frontends.format_front import has_format_fields, parse_format
from evallint.frontends.mustache_front import parse_mustache
from evallint.frontends.template_text import TextMap, fenced_spans, normalize_newlines
from evallint.kinds import FileKind
from evallint.marks import Doc, lenient_front_matter, load_yaml, split_front_matter
from evallint.roles import (
    JUDGE_IDENTITY,
    JUDGE_TASK,
    Cue,
    Role,
    RoleInfo,
    content_role,
    first_direct,
    heading_role,
    name_tokens,
    prompt_name_role,
    reported_speech,
    role_from_value,
    scale_cues,
    singular,
    snippet,
)
from evallint.source import SourceFile

_JINJA_EXTS = (".j2", ".jinja", ".jinja2", ".prompty")
_MUSTACHE_EXTS = (".mustache", ".hbs", ".handlebars", ".prompt")
_FORMAT_NAMES = {
    "jinja": "jinja", "jinja2": "jinja", "j2": "jinja",
    "mustache": "mustache", "handlebars": "mustache", "hbs": "mustache",
    "f-string": "format", "fstring": "format", "format": "format", "python": "format",
    "str": "format", "str.format": "format",
}
_MUSTACHE_SIGNS = re.compile(r"\{\{~?\s*[#/^>!]|\{\{\{")
_JINJA_SIGNS = re.compile(r"\{%|\{#")

_EXAMPLE_WORDS = frozenset({"example", "examples", "sample", "samples", "demonstration",
                            "demonstrations"})

_BATCH_TEXT = re.compile(
    r"\bfor each (?:item|response|sample|case|submission|candidate|answer|output)\b"
    r"|\beach item\b|\bbatch of (?:items|responses|samples|outputs)\b", re.I,
)
BATCH_WORDS = frozenset(
    {"items", "batch", "cases", "samples", "candidates", "responses", "outputs", "completions",
     "submissions", "answers"}
)
_JSON_KEY = re.compile(r"\"([A-Za-z_][\w-]*)\"\s*:")
_XML_OPEN = re.compile(r"<([A-Za-z_][\w-]*)>")
# The title is a first character and then up to the last one that is not a blank or a '#' (what
# the lazy (.+?)[ \t#]*$ kept, without trying the rest of the line after each character).
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.(?:[^\n]*[^ \t#\n])?)[ \t#]*$", re.M)
# An explicit output-format instruction followed (within a few lines) by a fenced structure,
# XML tags or a [[rating]] marker: a contract even when it is not JSON.
_FORMAT_CUE = re.compile(
    r"(?im)^.*\b(?:(?:output|response|answer|reply|critique|report|review|verdict)\s+"
    r"(?:format|template|structure)|format\s+your\s+"
    r"(?:response|answer|reply|output)|respond\s+(?:in|with|using)\s+the\s+following|"
    r"use\s+the\s+following\s+(?:format|structure))\b.*$"
)
# A "[[x]]" marker is found from its last "[[" (a "[" inside is not followed by another, bar a
# final "[["): the same texts have one as with [^\]\n]+, but a line of "[[[[" is not read to its end
# from each of its brackets.
_STRUCTURE = re.compile(r"```|<[A-Za-z_][\w-]*>|\[\[(?:[^\[\]\n]|\[(?!\[))+(?:\[\[)?\]\]")
_JSON_WITH_KEYS = re.compile(
    r"(?i)\bjson\b[^.\n]{0,80}?\b(?:keys?|fields?|properties|attributes|schema)\b"
    r"|\b(?:keys?|fields?|properties|attributes|schema)\b[^.\n]{0,80}?\bjson\b"
    # a JSON key the template fills in ("{{ key }}": ...), from a schema passed in at render
    r"|\"\{\{[^{}\n]+\}\}\"\s*:"
)
_SCHEMA_WORDS = frozenset(
    {"type", "properties", "required", "items", "description", "format", "schema", "enum",
     "minimum", "maximum", "additionalProperties", "title", "default", "json_schema", "name",
     "strict", "anyOf", "oneOf", "allOf", "$schema", "minItems", "maxItems", "const"}
)
_ROLE_KEYS = ("step", "role", "type", "kind", "agent")
_CONTRACT_KEYS = ("output", "outputs", "output_schema", "outputSchema", "response_format",
                  "json_schema", "schema")


@frontend(FileKind.JINJA, FileKind.MUSTACHE, FileKind.PROMPT, FileKind.PROMPTY,
          FileKind.DOTPROMPT)
def parse_prompt_file(source: SourceFile, config: Config) -> PromptFileFacts:
    """Parse any template-bearing prompt file into :class:`PromptFileFacts`."""
    text = normalize_newlines(source.text)
    kind = _kind_of(source.rel, config)
    facts = PromptFileFacts(path=source.rel, kind=kind)
    body = text
    doc: Doc | None = None
    split = split_front_matter(text)
    if split is not None:
        yaml_text, first_line, body_start = split
        try:
            doc = load_yaml(yaml_text, line_offset=first_line - 1)
        except ParseError:
            if kind == FileKind.PROMPT.value:
                # VS Code and Claude Code read a prompt file's header as ``key: value`` lines
                # (``name: OpenSpec: Apply``); Prompty and Dotprompt load strict YAML
                doc = lenient_front_matter(yaml_text, first_line, None, need_name=False)
                if doc is None:
                    raise
            elif kind in (FileKind.PROMPTY.value, FileKind.DOTPROMPT.value):
                raise
            else:
                doc = None  # a template that merely starts with '---' text
        if doc is not None:
            facts.front_matter_pos = Pos(1, 1)
            facts.body_start_line = body_start
            # Blank the front matter so body positions are file positions.
            lines = text.split("\n")
            body = "\n" * (body_start - 1) + "\n".join(lines[body_start - 1:])
            if isinstance(doc.data, dict):
                facts.front_matter = doc.data
                facts.front_matter_lines = {
                    str(k[0]): p.line for k, p in doc.keys.items() if len(k) == 1
                }
    elif kind in (FileKind.PROMPTY.value, FileKind.DOTPROMPT.value) and text.startswith("---"):
        raise ParseError("front matter opened on line 1 is never closed (no closing '---')", 1, 1)

    facts.template = _parse_body(source.rel, body, facts.front_matter)
    tmap = TextMap.of(body)
    fences = fenced_spans(body)
    facts.sections = _sections(body, tmap, fences)
    _read_model(facts, doc)
    facts.declarations = _declarations(facts.front_matter)
    facts.unknown_keys = unknown_evallint_keys(facts.front_matter, doc)
    facts.contract_keys = _contract_keys(body, facts.front_matter)
    facts.role = infer_role(facts, body, tmap, config)
    if facts.role.is_evaluator:
        facts.subjects = list(dict.fromkeys(
            evaluated_subjects(body) + labelled_subjects(facts, body)
            + process_subjects(facts, body)))
        facts.conversation = conversation_inputs(facts, body)
        facts.references = reference_names(body, facts.template)
    _find_batch(facts, body, tmap)
    return facts


def _kind_of(rel: str, config: Config) -> str:
    from evallint.classify import classify

    found = classify(rel, templates=tuple(config.templates))
    return found.value if found is not None else FileKind.PROMPT.value


# ---------------------------------------------------------------------------- body


def dialect_for(rel: str, body: str, front_matter: dict[str, Any]) -> str:
    """jinja | mustache | format | none, from the extension, front matter, then the text."""
    name = rel.lower()
    if name.endswith(".prompty"):
        return _prompty_dialect(body, front_matter)
    if name.endswith(_JINJA_EXTS):
        return "jinja"
    if name.endswith(_MUSTACHE_EXTS):
        return "mustache"
    for key in ("template_format", "templateFormat", "format"):
        value = front_matter.get(key)
        if isinstance(value, str) and value.strip().lower() in _FORMAT_NAMES:
            return _FORMAT_NAMES[value.strip().lower()]
    if _MUSTACHE_SIGNS.search(body):
        return "mustache"
    if _JINJA_SIGNS.search(body) or "{{" in body:
        return "jinja"
    if has_format_fields(body, shell=True):
        return "format"
    return "none"


# A mustache section or inverted section opened in the text (``{{#documents}}``).
_MUSTACHE_SECTION = re.compile(r"\{\{~?\s*[#^]\s*[\w.]")


def _prompty_dialect(body: str, front_matter: dict[str, Any]) -> str:
    """A Prompty file renders Jinja unless its ``template`` says otherwise (``template:
    mustache`` or ``template: {type: mustache}``). Without that, a body that opens mustache
    sections (which Jinja cannot parse) and holds no Jinja statement is mustache: the loaders
    that render Prompty with mustache (Azure AI Inference's ``PromptTemplate``) read it so."""
    declared = front_matter.get("template")
    if isinstance(declared, dict):
        declared = declared.get("type", declared.get("format"))
    if isinstance(declared, str) and declared.strip().lower() in _FORMAT_NAMES:
        return _FORMAT_NAMES[declared.strip().lower()]
    if _MUSTACHE_SECTION.search(body) and "{%" not in body:
        return "mustache"
    return "jinja"


def parse_jinja(text: str) -> Any:
    """Jinja's parser, imported with Jinja at the first template (a run over Python alone
    never pays for it)."""
    from evallint.frontends.jinja_front import parse_jinja as parse

    return parse(text)


def _parse_file_format(body: str) -> TemplateFacts:
    """A prompt file read as ``str.format`` text: ``${NAME}`` there is a shell expansion."""
    return parse_format(body, shell=True)


_PARSERS = {"jinja": parse_jinja, "mustache": parse_mustache, "format": _parse_file_format}


def _parse_body(rel: str, body: str, front_matter: dict[str, Any]) -> TemplateFacts:
    dialect = dialect_for(rel, body, front_matter)
    if dialect == "none":
        # WildBench-style "{$name}" placeholders: plain replacement, no other syntax.
        return parse_dollar(body) if has_dollar_fields(body) else TemplateFacts(dialect="none")
    fixed = rel.lower().endswith(_JINJA_EXTS + _MUSTACHE_EXTS)
    try:
        facts = _PARSERS[dialect](body)
    except ParseError as first:
        if dialect == "format" or fixed:
            raise
        facts = _fallback(body, dialect, first)
    if not facts.variables and facts.dialect != "format" and not fixed and has_format_fields(
        body, shell=True
    ):
        # '{{"score": 1}}' escapes and '{question}' fields: a str.format prompt after all.
        return _parse_file_format(body)
    return facts


def _fallback(body: str, dialect: str, first: ParseError) -> TemplateFacts:
    """A markdown/text prompt whose guessed dialect failed: try the others before EL901."""
    for other in ("mustache", "jinja") if dialect == "jinja" else ("jinja",):
        try:
            return _PARSERS[other](body)
        except ParseError:
            continue
    if has_format_fields(body, shell=True) or "{{" not in body:
        return _parse_file_format(body)
    raise first


def _sections(body: str, tmap: TextMap, fences: list[tuple[int, int]]) -> list[Section]:
    """Markdown headings outside fences; headings inside an "Example" section name no role."""
    out: list[Section] = []
    if "#" not in body:
        return out
    example_level = 0  # the level of the open "Example…" heading, 0 when none is open
    fence_starts = [s for s, _ in fences]  # (fences are in order and never overlap)
    for m in _HEADING.finditer(body):
        start = m.start()
        i = bisect.bisect_right(fence_starts, start) - 1
        if i >= 0 and start < fences[i][1]:  # inside a fence (found without trying each)
            continue
        title = m.group(2).strip()
        level = len(m.group(1))
        if example_level and level <= example_level:
            example_level = 0
        words = name_tokens(title)
        if not example_level and words and words[0] in _EXAMPLE_WORDS:
            example_level = level
        role = Role.UNKNOWN.value if example_level else heading_role(title)
        out.append(Section(title=title, level=level, pos=tmap.pos(start), role=role))
    return out


# ---------------------------------------------------------------------------- front matter


def _read_model(facts: PromptFacts, doc: Doc | None) -> None:
    fm = facts.front_matter
    model = fm.get("model")
    if isinstance(model, str) and ("{{" in model or "{%" in model):
        return  # a template of prompt files: the model is chosen when it is rendered
    if isinstance(model, str) and model.strip():
        facts.model = model.strip()
        facts.model_pos = doc.pos("model") if doc else None
        return
    if isinstance(model, dict):  # prompty
        for path in (("configuration", "model"), ("configuration", "azure_deployment"),
                     ("configuration", "deployment"), ("configuration", "name"),
                     ("parameters", "model"), ("id",), ("name",)):
            value: Any = model
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, str) and value.strip():
                facts.model = value.strip()
                facts.model_pos = doc.pos("model", *path) if doc else None
                return


def _evallint_table(fm: dict[str, Any]) -> dict[str, Any]:
    table = fm.get("evallint")
    return table if isinstance(table, dict) else {}


def unknown_evallint_keys(fm: dict[str, Any], doc: Doc | None) -> list[UnknownKey]:
    """Keys of ``evallint:`` (and of its ``legitimate`` list items) that evallint ignores."""
    table = _evallint_table(fm)
    out: list[UnknownKey] = []

    def report(key: Any, path: tuple[str | int, ...], known: tuple[str, ...],
               shown: str) -> None:
        pos = (doc.keys.get(path) if doc else None) or (doc.pos(*path) if doc else None)
        close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
        out.append(UnknownKey(shown, pos or Pos(1, 1), close[0] if close else ""))

    for key in table:
        if key not in EVALLINT_KEYS:
            report(key, ("evallint", key), EVALLINT_KEYS, str(key))
    leg = table.get("legitimate")
    if isinstance(leg, list):
        for i, item in enumerate(leg):
            if not isinstance(item, dict):
                continue
            for key in item:
                if key not in LEGITIMATE_ITEM_KEYS:
                    report(key, ("evallint", "legitimate", i, key), LEGITIMATE_ITEM_KEYS,
                           f"legitimate[{i}].{key}")
    return out


def _declarations(fm: dict[str, Any]) -> dict[str, str]:
    """``evallint: {legitimate: {context: "why"}}`` or a list of ``{inputs, reason}``."""
    out: dict[str, str] = {}
    leg = _evallint_table(fm).get("legitimate")
    if isinstance(leg, dict):
        for key, reason in leg.items():
            if isinstance(reason, str) and reason.strip():
                out[str(key)] = reason.strip()
    elif isinstance(leg, list):
        for item in leg:
            if not isinstance(item, dict):
                continue
            reason = item.get("reason")
            inputs = item.get("inputs", item.get("input", []))
            inputs = [inputs] if isinstance(inputs, str) else inputs
            if isinstance(reason, str) and reason.strip() and isinstance(inputs, list):
                for name in inputs:
                    out[str(name)] = reason.strip()
    return out


# A verdict written in double brackets, as pairwise and rating judges are told to end
# ("[[A>>B]]", "[[A=B]]", "[[B]]", "Rating: [[5]]"): a fixed format a parser reads.
_BRACKET_VERDICT = re.compile(
    r"\[\[(?:[A-D](?:\s*(?:>>|>|=|<<|<)\s*[A-D])?|\d{1,2}(?:\.\d)?|rating|score|tie)\]\]",
    re.I)


def _contract_keys(body: str, fm: dict[str, Any]) -> list[str]:
    """Keys the prompt shows for its answer, with markers for a JSON or spelled-out format."""
    keys: list[str] = []
    for m in _JSON_KEY.finditer(body):
        keys.append(m.group(1))
    json_shown = bool(keys) or bool(_JSON_WITH_KEYS.search(body))
    for m in _XML_OPEN.finditer(body):
        keys.append(m.group(1))
    for name in _CONTRACT_KEYS:
        if name in fm:
            before = len(keys)
            _schema_keys(fm[name], keys, 0)
            json_shown = json_shown or len(keys) > before or _names_a_schema(fm[name])
    if json_shown:
        keys.append(JSON_KEY)
    for m in _FORMAT_CUE.finditer(body):
        end = m.end() - 1
        for _ in range(8):  # the rest of the line and the 7 below it (not a copy of the rest)
            end = body.find("\n", end + 1)
            if end == -1:
                end = len(body)
                break
        window = body[m.end():end]
        if _STRUCTURE.search(window):
            keys.append(FORMAT_KEY)
            break
    if FORMAT_KEY not in keys and (_only_a_number(body) or _completes_a_shown_label(body)
                                   or _markdown_report(body) or _ends_on_a_scored_field(body)
                                   or _BRACKET_VERDICT.search(body)
                                   or _FIXED_CHOICE.search(body) or _FIXED_OPENING.search(body)):
        keys.append(FORMAT_KEY)
    return list(dict.fromkeys(keys))


# An answer that is one of quoted choices ('answer using ONLY "Output (a)" or "Output (b)"'),
# or that opens with a fixed phrase ('Begin your decision with "So, the final decision is"'):
# the verdict is found by exact text, as parseable as a JSON key.
_QUOTE = "[\"'\u201c\u2018]"
_UNQUOTE = "[\"'\u201d\u2019]"
_FIXED_CHOICE = re.compile(
    r"\b(?:answer|respond|reply|output|say|choose|select|return)\b[^.\n]{0,80}?"
    + _QUOTE + r"[^\"'\u201d\u2019\n]{1,40}" + _UNQUOTE + r"[^.\n]{0,12}?(?:\bor\b|/)[^.\n]{0,8}?"
    + _QUOTE + r"[^\"'\u201d\u2019\n]{1,40}" + _UNQUOTE, re.I)
_FIXED_OPENING = re.compile(
    r"\b(?:begin|start)\b[^.\n]{0,60}?\bwith\s+" + _QUOTE + r"[^\"'\u201d\u2019\n]{3,100}"
    + _UNQUOTE, re.I)


# A labelled field of a markdown report the judge fills in: "**Score**: X/5", "- **Verdict**:".
_MD_FIELD = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?\*\*([A-Za-z][\w /-]{0,30})\*\*[ \t]*:", re.M)
_VERDICT_WORDS = frozenset({"score", "scores", "rating", "verdict", "grade", "pass", "passed",
                            "decision", "result", "outcome", "judgement", "judgment"})


# The last line of a form the judge completes with a number: "- Fluency (1-3):" (G-Eval).
_SCORED_FIELD = re.compile(r"^[ \t]*(?:[-*][ \t]+)?[A-Za-z][\w /-]{0,30}?[ \t]*\([ \t]*\d+[ \t]*"
                           r"(?:-|\u2013|to)[ \t]*\d+[ \t]*\)[ \t]*:[ \t]*$")


_EMPTY_FIELD = re.compile(r"^[ \t]*(?:[-*][ \t]+)?[A-Za-z][\w /-]{0,30}?[ \t]*:[ \t]*$")
_SCALE_SET = re.compile(r"\(\s*\d+\s*(?:-|\u2013|to)\s*\d+\s*\)|\bscale\s+(?:of|from)\s+\d+"
                        r"|\bfrom\s+\d+\s+to\s+\d+|\bscores?\s+only\b", re.I)


def _ends_on_a_scored_field(body: str) -> bool:
    """The prompt ends on an empty scored field (``- Coherence (1-5):``, or ``- Consistency:``
    under "Evaluation Form (scores ONLY)" after a scale): the answer is the number."""
    lines = [ln for ln in body.split("\n") if ln.strip()]
    if not lines:
        return False
    if _SCORED_FIELD.match(lines[-1]):
        return True
    return _EMPTY_FIELD.match(lines[-1]) is not None and _SCALE_SET.search(body) is not None


def _markdown_report(body: str) -> bool:
    """A report template with labelled fields (``**Score**: X/5``, ``**Verdict**: ...``): two
    fields or more, one of them a score or a verdict, is a format the answer can be parsed by."""
    labels = [m.group(1) for m in _MD_FIELD.finditer(body)]
    return len(labels) >= 2 and any(set(name_tokens(label)) & _VERDICT_WORDS
                                    for label in labels)


_SENTENCES = re.compile(r"[^.!?\n]+")
_NUMBER_WORDS = frozenset({"integer", "number", "digit", "float", "numeral"})
_ONLY_WORDS = frozenset({"only", "single", "just", "solely", "nothing"})
_ANSWER_VERBS = frozenset({"return", "respond", "reply", "output", "answer", "give", "provide",
                           "produce", "write", "print"})


def _only_a_number(body: str) -> bool:
    """"Return a single integer between 1 and 5", "Output only the number": a bare-number
    contract, as parseable as JSON. Only a sentence whose letters spell a number word is
    split into words (the others cannot hold the token)."""
    for m in _SENTENCES.finditer(body):
        sentence = m.group()
        low = sentence.lower()
        if not any(w in low for w in _NUMBER_WORDS):
            continue
        words = set(name_tokens(sentence))
        if words & _NUMBER_WORDS and words & _ONLY_WORDS and words & _ANSWER_VERBS:
            return True
    return False


_LABEL_LINE = re.compile(r"^[ \t]*([A-Za-z][\w ]{0,30}?)[ \t]*:[ \t]*(\S.*)?$")


def _completes_a_shown_label(body: str) -> bool:
    """A few-shot completion prompt: it ends on ``stars:`` after examples that show
    ``stars: 3`` at least twice, so the answer's shape is the examples'."""
    lines = [ln for ln in body.split("\n") if ln.strip()]
    if not lines:
        return False
    last = _LABEL_LINE.match(lines[-1])
    if last is None or last.group(2):
        return False
    label = last.group(1).strip().lower()
    shown = 0
    for i, line in enumerate(lines[:-1]):
        m = _LABEL_LINE.match(line)
        if m is None or m.group(1).strip().lower() != label:
            continue
        # The value on the label's line, or alone on the next line ("output:" / "4").
        value = m.group(2) or (lines[i + 1] if not _LABEL_LINE.match(lines[i + 1]) else "")
        if value and "{" not in value:
            shown += 1
    return shown >= 2


def _names_a_schema(value: Any) -> bool:
    """``output: {schema: Analysis}`` or ``output_schema: Verdict``: a schema registered in
    code by name is as explicit a contract as one spelled out."""
    if isinstance(value, dict):
        value = value.get("schema")
    return isinstance(value, str) and bool(re.fullmatch(r"[A-Za-z_][\w.]*", value.strip()))


def _schema_keys(value: Any, into: list[str], depth: int) -> None:
    if depth > 20:
        return
    if isinstance(value, dict):
        props = value.get("properties")
        if isinstance(props, dict):
            into.extend(str(k) for k in props)
            for v in props.values():
                _schema_keys(v, into, depth + 1)
        for key, v in value.items():
            k = re.sub(r"[?(].*$", "", str(key)).strip()
            if k and k not in _SCHEMA_WORDS:
                into.append(k)
            if key != "properties":
                _schema_keys(v, into, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _schema_keys(item, into, depth + 1)


# ---------------------------------------------------------------------------- roles


def infer_role(facts: PromptFacts, body: str, tmap: TextMap, config: Config) -> RoleInfo:
    """Config > front matter > names > direct instructions > folder; headings only support.

    A heading is weak evidence: "## Evaluation" over ``{evaluation}`` is as often the material
    a refiner or reflector receives as the judge's own section. It decides a role only together
    with a supporting content cue of the same side (a scale, the word "rubric").
    """
    rel = config.root_relative(facts.path)
    for pattern, role in config.roles.items():
        if globs.match(rel, pattern):
            return RoleInfo(Role(role), [f"config roles: '{pattern}' = {role}"], explicit=True)

    fm = facts.front_matter
    candidates: list[tuple[str, Any]] = []
    table = _evallint_table(fm)
    if "role" in table:
        candidates.append(("evallint.role", table["role"]))
    candidates += [(k, fm[k]) for k in _ROLE_KEYS if k in fm]
    for key, value in candidates:
        role = role_from_value(value)
        if role is not Role.UNKNOWN:
            line = facts.front_matter_lines.get(key.split(".")[0])
            where = f" (line {line})" if line else ""
            return RoleInfo(role, [f"front matter {key}: {value}{where}"], explicit=True)

    path = PurePosixPath(facts.path)
    unsupported: list[str] = []
    named: list[tuple[str, str]] = [(path.name, "file name")]
    title = fm.get("name") or fm.get("title")
    if isinstance(title, str):
        named.append((title, "front matter name"))
    for name, where in named:
        role, token = prompt_name_role(name)
        if role is Role.UNKNOWN:
            continue
        note = f"{where} token '{token}'"
        if role is Role.GENERATOR or _names_the_judge(name, token, path.parent.name):
            return RoleInfo(role, [note])
        support = _evaluates(facts, body, tmap)
        if support is not None:
            return RoleInfo(role, [note, support])
        unsupported.append(note)

    found = _content_role(body, tmap)
    if found is not None:
        return found

    role, token = _folder_role(path.parent.name)
    if role is Role.GENERATOR or _names_the_judge(path.parent.name, token):
        return RoleInfo(role, [f"folder name token '{token}' ('{path.parent.name}/')"])
    if role is Role.EVALUATOR:
        support = _evaluates(facts, body, tmap)
        note = f"folder name token '{token}' ('{path.parent.name}/')"
        if support is not None:
            return RoleInfo(role, [note, support])
        unsupported.append(note)
    found = _heading_role(facts, body, tmap)
    if found.role is Role.UNKNOWN and unsupported:
        return RoleInfo(Role.UNKNOWN, [f"{n} alone: the text never evaluates anything"
                                       for n in unsupported])
    return found


# A name states the judge when it names the agent or its rubric ("judge.j2", "grader_prompt",
# "rubric_checker"), unless the agent only qualifies what the file is about ("EVALUATOR_CONTEXT
# _INSTRUCTIONS" is context about an evaluator). An activity ("verify_if_stopped",
# "score_chunk", "eval.prompty") must be borne out by the text.
_JUDGE_NOUNS = frozenset(
    {"evaluator", "judge", "grader", "critic", "scorer", "rater", "verifier", "reviewer",
     "assessor", "rubric"}
)
_ABOUT = frozenset(
    {"context", "contexts", "output", "outputs", "result", "results", "feedback", "history",
     "data", "config", "configs", "settings", "form", "forms", "draft", "drafts", "docs",
     "metadata", "schema", "state", "list", "page", "view", "response", "responses", "info",
     "details", "summary", "selection", "picker", "tool", "tools", "skill", "skills"}
)


_TOPIC_FOLDERS = frozenset({"context", "contexts"})


def _names_the_judge(name: str, token: str, folder: str = "") -> bool:
    """Is ``token`` in ``name`` the judge itself, not an activity or a topic?

    Files in a ``context/`` folder are context blocks for an assistant: a judge word in their
    name says what the block is about.
    """
    tokens = name_tokens(name)
    if token not in _JUDGE_NOUNS or token not in tokens:
        return False
    if set(name_tokens(folder)) & _TOPIC_FOLDERS:
        return False
    i = tokens.index(token)
    after = tokens[i + 1] if i + 1 < len(tokens) else ""
    return after not in _ABOUT


# Corroboration for a role word in a name: the text sets a task on something ("evaluate the
# code", "rate each reply"), a scale or rubric, a rendered candidate output, or a score key.
_EV_ACT = re.compile(
    r"\b(?:evaluate|grade|score|assess|rate|judge|critique|review)\s+(?:(?:the|this|these|each|"
    r"every|a|an|its|their|following|given|provided|below)\s+)+((?:[\w-]+[ \t]+){0,2}[\w-]+)",
    re.I)
_SUBJECT_STOPS = frozenset(
    {"against", "for", "on", "based", "with", "in", "of", "to", "and", "or", "by", "using",
     "according", "from", "as", "below", "above", "that", "which", "between", "is", "are",
     "if", "whether", "so", "given", "the", "a", "an", "its", "their", "your", "this", "then",
     "now", "carefully", "at", "into", "under", "considering", "without", "only", "here",
     "it", "them", "how", "what", "why", "who", "whom", "all", "any", "both", "not", "do",
     "should", "must", "will", "can", "may", "you", "yourself", "strictly", "objectively"}
)
_CANDIDATE_NAMES = frozenset(
    {"output", "response", "answer", "completion", "candidate", "submission", "final_answer",
     "final_output", "prediction", "generation"}
)
_SCORE_WORDS = frozenset({"score", "scores", "rating", "ratings", "grade", "verdict", "label"})


def _evaluates(facts: PromptFacts, body: str, tmap: TextMap) -> str | None:
    """Evidence in the text that the prompt evaluates something, else None."""
    for cue in (JUDGE_IDENTITY, JUDGE_TASK, _EV_ACT):
        m = _first_direct(cue, body)
        if m is not None:
            return _cue(m, tmap)
    weak = _weak_evidence(body, tmap)
    if weak:
        return weak[0]
    for var in facts.template.variables:
        if var.kind in ("output", "triple") and var.name.lower() in _CANDIDATE_NAMES:
            return f"renders the candidate '{var.name}' (line {var.pos.line})"
    keys = {k.lower() for k in facts.contract_keys} & _SCORE_WORDS
    if keys:
        return f"its answer holds '{sorted(keys)[0]}'"
    return None


# The verbs of a task, as verbs ("Grader that reads ..." is a name and sets no task).
_JUDGING_VERBS = (
    r"evaluat(?:e|es|ing)|grad(?:e|es|ing)|scor(?:e|es|ing)|assess(?:es|ing)?|"
    r"rat(?:e|es|ing)|judg(?:e|es|ing)|critiqu(?:e|es|ing)|review(?:s|ing)?|"
    r"analy[sz](?:e|es|ing)|examin(?:e|es|ing)|inspect(?:s|ing)?|audit(?:s|ing)?")
# For subjects only, the object may follow the verb bare ("ONLY evaluate tool calls in ...").
_EV_OBJECT = re.compile(
    rf"\b(?:{_JUDGING_VERBS})\s+"
    r"(?:(?:the|this|these|each|every|a|an|its|their|following|given|provided|below)\s+)*"
    r"(?=((?:[\w-]+(?:'s)?[ \t]+){0,7}[\w-]+))", re.I)  # a look-ahead: a verb inside is found too
# "the quality of X", "a list of X": what is judged is X.
_ASPECTS = frozenset({
    "quality", "relevance", "accuracy", "correctness", "coherence", "fluency", "completeness",
    "helpfulness", "usefulness", "faithfulness", "groundedness", "success", "efficiency",
    "effectiveness", "appropriateness", "clarity", "consistency", "validity", "safety", "list",
    "set", "series", "sequence", "each", "every", "all", "relevancy", "utilization",
    "precision", "recall", "sufficiency", "coverage", "adherence"})
_AFTER_OF = frozenset({"a", "an", "the", "each", "every", "all", "its", "their", "this", "these",
                       "list", "set", "series", "sequence", "of"})
# Words that end a subject phrase after its noun: "each tool call made by the agent".
_PARTICIPLES = frozenset({"made", "produced", "generated", "returned", "taken", "performed",
                          "invoked", "called", "chosen", "selected", "used", "written", "listed",
                          "shown", "received", "obtained", "created", "provided"})
# Nouns that hold items of what the word before them names: "CONTEXT chunks" are the context.
_HOLDERS = frozenset({"chunk", "item", "entry", "passage", "snippet", "piece", "document",
                      "record", "result", "trace"})
# A label that says its value is what gets judged: "TOOL CALLS TO BE EVALUATED: {{ calls }}".
_JUDGED_LABEL = re.compile(
    r"\b(?:to\s+be|being|under|to)\s+(?:evaluated|evaluate|evaluation|graded|grade|scored|"
    r"score|judged|judge|assessed|assess|assessment|reviewed|review|rated|rate)\b", re.I)


# A task that points at a labelled section by its name: 'ONLY evaluate tool selections in the
# "TOOL CALLS MADE BY AGENT" section' makes the variable under that label the judged item.
_NAMED_SECTION = re.compile(
    r"\b(?:evaluat|grad|scor|assess|rat|judg|review|examin)\w*\b[^.\n]{0,60}?"
    r"\b(?:in|from|under)\s+the\s+[\"\u201c']([^\"\u201d'\n]{2,60})[\"\u201d']\s+"
    r"(?:section|block|field)\b", re.I)


def labelled_subjects(facts: PromptFacts, body: str) -> list[str]:
    """Variables whose label says they are the thing judged ("Text to evaluate: {{ x }}"), or
    whose label the task names as the section it judges."""
    lines = body.split("\n")
    out: list[str] = []
    named = {_label_key(m.group(1)) for m in _NAMED_SECTION.finditer(_unemphasized(body))}
    # "Rate this reasoning path" over a "Proposed Reasoning Path:" label: the variable under
    # the label that names what the task judges is the judged item, whatever it is called
    phrases = [p.split("_") for p in evaluated_subjects(body)] if facts.template.variables \
        else []
    for var in facts.template.variables:
        if var.kind not in ("output", "triple") or var.via or not 0 < var.pos.line <= len(lines):
            continue
        words = singular(name_tokens(var.name))
        if set(words) <= _MEASURES:
            continue  # "You need to evaluate the following criteria: {{ criteria }}"
        label = _var_label(lines, var)
        if _JUDGED_LABEL.search(label) or (named and _label_key(label) in named) or \
                _label_names_subject(label, phrases):
            out.append("_".join(words))
    return out


def _label_names_subject(label: str, phrases: list[list[str]]) -> bool:
    """A short label (at most five words) that ends with what the task judges: a phrase of two
    words or more anywhere in it ("Proposed Reasoning Path" for "reasoning path"), or a
    one-word subject as the label's last word ("Path:" for "rate this path")."""
    words = singular(name_tokens(label))
    bare = label.strip().strip("*_ \t")
    is_label = bare.endswith(":") or bare.startswith("#")
    if not words or len(words) > 5 or not is_label:
        return False
    for phrase in phrases:
        n = len(phrase)
        if n >= 2 and any(words[i:i + n] == phrase for i in range(len(words) - n + 1)):
            return True
        if n == 1 and words[-1] == phrase[0] and phrase[0] not in _MEASURES:
            return True
    return False


def process_subjects(facts: PromptFacts, body: str) -> list[str]:
    """Variables holding the agent's steps, when the task grades the agent's process.

    A judge of tool selection, tool arguments or plan adherence ("Evaluate whether the tools
    ... used by the agent were appropriate", "assessing the Tool Selection Quality of an AI
    agent") grades the trajectory itself: ``steps_taken`` or ``assistant_messages`` is its
    candidate, not the generator's working context. A judge of the agent's answer that is
    merely shown the steps sets no such task, and they stay EL102."""
    if not any(_PROCESS_NOUN.search(rest) and _AGENT.search(rest)
               for rest in _task_clauses(_unemphasized(body))):
        return []
    out: list[str] = []
    for var in facts.template.variables:
        tokens = name_tokens(var.name)
        if tokens and set(tokens) <= _TRAJECTORY_WORDS and set(tokens) & _TRAJECTORY_HEADS:
            out.append("_".join(singular(tokens)))
    return list(dict.fromkeys(out))


def _task_clauses(body: str) -> Iterator[str]:
    """The rest of each sentence after a judging verb ("assessing the planning quality ...")."""
    for sentence in re.split(r"[.\n]", body):
        m = _JUDGING_VERB.search(sentence)
        if m is not None:
            yield sentence[m.end():]


_JUDGING_VERB = re.compile(rf"\b(?:{_JUDGING_VERBS})\b", re.I)
# What an agent does on its way to the answer, as a task names it.
_PROCESS_NOUN = re.compile(
    r"\b(?:tools?|tool[- ]calls?|arguments|parameters|plan|planning|trajector(?:y|ies))\b",
    re.I)
_AGENT = re.compile(r"\b(?:agent|agents|assistant)\b", re.I)
# Variables that hold the agent's steps: every word one of these, one of them a head.
_TRAJECTORY_WORDS = frozenset({"steps", "step", "taken", "trajectory", "trace", "actions",
                               "action", "tool", "tools", "calls", "call", "called",
                               "assistant", "agent", "messages", "message", "execution",
                               "intermediate", "json", "plan", "turns"})
_TRAJECTORY_HEADS = frozenset({"steps", "step", "trajectory", "trace", "actions", "action",
                               "calls", "call", "called", "messages", "plan"})


# What a judge grades by, never what it grades: a variable of these words under "to evaluate"
# is the measure, not the candidate.
_MEASURES = frozenset({"criteria", "criterion", "rubric", "guideline", "scale", "checklist",
                       "metric", "dimension", "aspect"})


def _var_label(lines: list[str], var: TemplateVar) -> str:
    """The text before ``var`` on its line, or the nearest line above when it stands alone
    (a heading or a label over it)."""
    label = lines[var.pos.line - 1][:max(0, var.pos.column - 1)]
    if not label.strip("{ \t#*-"):
        above = var.pos.line - 2  # (up from the line above, not a copy of all the lines above)
        while above >= 0 and not lines[above].strip():
            above -= 1
        label = lines[above] if above >= 0 else ""
    return label


def _label_key(label: str) -> str:
    """A label as a section name: its words, lower case ("**TOOL CALLS:** " -> "tool calls")."""
    return " ".join(re.findall(r"[a-z0-9]+", label.lower()))


# The user's own conversation: a heading or label that names a conversation and the user
# ("# Conversation between User and AI", "Chat history with the user").
_DIALOGUE_WORDS = frozenset({"conversation", "dialogue", "dialog", "chat"})
# Variables that can hold a conversation (every token one of these, one of the first four).
_DIALOGUE_VARS = frozenset({"history", "conversation", "dialogue", "dialog", "chat", "messages",
                            "turns", "prior", "previous", "user"})


def _unemphasized(text: str) -> str:
    """``text`` without markdown emphasis markers ("assesses **each tool call**"), which
    split the phrases the subject and reference cues read."""
    return text.replace("**", "").replace("__", "")


# A judge of the whole conversation: "conversation-level coherence", "across the full
# multi-turn conversation". Its graded item is every turn, so the transcript is its input.
_CONVERSATION_LEVEL = re.compile(
    r"\bconversation[- ]level\b|\bacross\s+(?:a|the)\s+(?:full\s+|entire\s+|whole\s+)?"
    r"(?:multi-turn\s+)?(?:conversation|dialogue|dialog|chat)\b"
    # ... or a transcript the prompt introduces as the user's own exchange with the assistant:
    # "There is a conversation between a user and an AI assistant", whose replies it grades
    r"|\b(?:conversation|dialogue|dialog|chat)\s+between\s+(?:a|the)\s+(?:human|user|customer)"
    r"\b[^.\n]{0,40}?\band\s+(?:an?|the)\s+(?:ai\s+)?(?:assistant|chatbot|bot)\b", re.I)


def _labels_above(lines: list[str], wanted: set[int]) -> dict[int, list[str]]:
    """For each line number in ``wanted``: the label line just above it (unless a heading is
    nearer) and the headings of the sections holding it, innermost first. Read in one pass down
    the lines (a walk up from each variable cost the lines above it, once per variable)."""
    out: dict[int, list[str]] = {}
    label: str | None = None  # the nearest line of text so far, None when a heading is nearer
    sections: list[tuple[int, str]] = []  # the open headings: depth (increasing), title
    last = max(wanted, default=0)
    for number, ln in enumerate(lines[:last], start=1):
        if number in wanted:
            out[number] = [*([label] if label is not None else []),
                           *(title for _, title in reversed(sections))]
        text = ln.strip()
        if not text or text.startswith(("```", "~~~")):
            continue
        heading = _HEADING.match(text)
        if heading is None:
            label = text
            continue
        label = None
        depth = len(heading.group(1))
        while sections and sections[-1][0] >= depth:
            sections.pop()
        sections.append((depth, heading.group(2)))
    return out


def conversation_inputs(facts: PromptFacts, body: str) -> list[str]:
    """History variables the prompt frames as the user's conversation with the assistant.

    In a multi-turn benchmark the judge must read the earlier turns to grade the last reply:
    under "# Conversation between User and AI / ## History", ``history`` is the task input,
    not the generator's working context. So is the transcript a judge of the whole
    conversation reads under a label that names it ("CONVERSATION:" in a prompt that scores
    "conversation-level coherence"). A history under any other heading ("Conversation
    history", "Agent memory") still counts as generator context (EL102)."""
    lines = body.split("\n")
    out: list[str] = []
    whole = _CONVERSATION_LEVEL.search(_unemphasized(body)) is not None
    histories = []
    for var in facts.template.variables:
        tokens = set(name_tokens(var.name))
        if not 0 < var.pos.line <= len(lines) or not tokens or \
                not tokens <= _DIALOGUE_VARS or not tokens & {"history", "conversation",
                                                               "dialogue", "dialog", "messages"}:
            continue
        histories.append(var)
    above = _labels_above(lines, {var.pos.line for var in histories})
    for var in histories:
        labels = [lines[var.pos.line - 1][:max(0, var.pos.column - 1)], *above[var.pos.line]]
        if any(set(name_tokens(t)) & _DIALOGUE_WORDS and ("user" in name_tokens(t) or whole)
               for t in labels):
            out.append("_".join(singular(name_tokens(var.name))))
    return out


# (a "{%" tag holds no other "{%": an unclosed one is read up to the next, not to the line's end
# from each of them)
_INLINE_TAG = re.compile(r"\{\{[^{}\n]*\}\}\s?|\{%(?:[^{\n]|\{(?!%))*?%\}\s?")


def evaluated_subjects(body: str) -> list[str]:
    """What the prompt's direct task evaluates: the head noun after the verb, and the phrase.

    "Evaluate the cleaned context against the criteria" gives ``context`` and
    ``cleaned_context``; "score the coherence of the answer" gives ``coherence``; "assesses
    each tool call made by an AI agent" gives ``call`` and ``tool_call``; "evaluating the
    quality of a list of CONTEXT chunks" gives ``chunk``, ``context_chunk`` and ``context``.
    Described judging ("a judge will grade the answer") sets no task.
    """
    out: list[str] = []
    # "Analyze the following {{ language }} code": a tag inside the phrase is not a word of it;
    # nor is markdown emphasis ("assesses **each tool call**").
    body = _unemphasized(_INLINE_TAG.sub("", body))
    for m in _EV_OBJECT.finditer(body):
        if reported_speech(body, m.start()):
            continue
        words = _subject_words(m.group(1).lower().split())
        if words:
            out.append(words[-1])
            if len(words) > 1:
                out.append("_".join(words))
                if words[-1] in _HOLDERS or words[-1] in _ASPECTS:
                    # "the retrieved passage", "context utilization": what is judged is the
                    # words before the holder or the aspect
                    out.append("_".join(words[:-1]))
    if _RETRIEVED & set(out):
        out.append("context")  # "evaluate the retrieval results": RAG code calls them context
    for m in _WHOLE_SESSION.finditer(body):
        if not reported_speech(body, m.start()):
            out.append(m.group(1).lower())
    return list(dict.fromkeys(out))


# A judge of a whole session: "evaluate whether the agent achieved the user's goal in a
# multi-turn conversation" grades the conversation.
_WHOLE_SESSION = re.compile(
    r"\b(?:evaluate|assess|judge|grade|score|rate)\b[^.\n]{0,120}?\b(?:in|across|over|of)\s+"
    r"(?:the|a|this|each)\s+(?:multi-turn\s+|whole\s+|entire\s+|full\s+)?"
    r"(conversation|dialogue|session|transcript)\b", re.I)
# Subjects that are what RAG code passes as ``context``.
_RETRIEVED = frozenset({"retrieval_result", "retrieved_document", "retrieved_passage",
                        "retrieved_chunk", "search_result", "retrieved_context"})


def _subject_words(tokens: list[str]) -> list[str]:
    """The noun phrase a task verb takes (singular, at most three words): "quality of" and
    "a list of" pass on to what follows them; a stop word or a participle ends it."""
    words: list[str] = []
    i = 0
    while i < len(tokens) and len(words) < 3:
        word = tokens[i]
        if word == "of" and words and words[-1] in _ASPECTS and i + 1 < len(tokens):
            words = []
            i += 1
            while i < len(tokens) and tokens[i] in _AFTER_OF:
                i += 1
            continue
        if word.endswith("'s") and len(word) > 2:  # "the agent's reasoning trace": the trace
            words = []
            i += 1
            continue
        if word in _SUBJECT_STOPS or (words and word in _PARTICIPLES):
            break
        words.append(word)
        i += 1
    return singular(words)


# The prompt names what the output is checked against: "Context is the source of truth",
# "anchored in the provided context", "supported by the retrieved documents", "entailed by
# the CONTEXT". After the grounding verbs only retrieval material counts: "score it based on
# the reasoning steps" shows the judge the generator's steps, it names no reference.
_REFERENCE = re.compile(
    # (the name is tried from the start of its run of word characters and dashes, not again
    # after each dash inside it: the run is read once)
    r"(?<![\w-])-*\b([\w-]+)\s+(?:is|are)\s+the\s+(?:only\s+|sole\s+)?(?:source|sources)\s+of"
    r"\s+truth"
    r"|\b(?:(?:grounded|anchored|supported|backed|based|entailed)\s+(?:\w+ly\s+)?(?:in|on|by)"
    r"|(?:faithful|true|consistent)\s+(?:(?:is|are)\s+(?:[\w-]+\s+){1,4}?)?to"
    r"|compare\s+(?:it|them|this|(?:the|each)\s+\w+)\s+(?:to|with)"
    r"|compared\s+(?:to|with)|match(?:es|ing)?|differs?\s+from|(?:agrees?|(?:in)?consistent)"
    r"\s+with|contradicts?|according\s+to|against)\s+"
    r"(?:(?:the|that|this|these|its|their|a|an)\s+)?"
    r"(?:(?:provided|given|retrieved|supplied|original)\s+)?"
    r"((?:(?:contexts?|documents?|passages?|sources?|evidence|references?|knowledge|chunks?|"
    r"transcripts?|articles?)\b\s*){1,2})"
    # a RAG judge's criteria about the context: "Context Utilization", "context relevancy"
    r"|\b(context)\s+(?:utili[sz]ation|relevancy|relevance|precision|recall|sufficiency|"
    r"adherence)\b", re.I)


def reference_names(body: str, template: TemplateFacts | None = None) -> list[str]:
    """Inputs the prompt names as the reference the output is judged against (a RAG judge's
    retrieved context): the judge needs them to grade; they are not the generator's working
    context. Singular, lower case, as :func:`evaluated_subjects`. With ``template``, also the
    variables whose label names such a reference ("assess the draft against a source
    document" over "SOURCE INFORMATION: {context}" makes ``context`` the reference)."""
    out: list[str] = []
    for m in _REFERENCE.finditer(_unemphasized(body)):
        for name in (m.group(1) or m.group(2) or m.group(3) or "").lower().split():
            if name not in _SUBJECT_STOPS:
                out.extend(singular([name]))
    nouns = set(out)
    if template is not None and nouns:
        lines = body.split("\n")
        for var in template.variables:
            if var.kind in ("output", "triple") and 0 < var.pos.line <= len(lines) and \
                    nouns & set(singular(name_tokens(_var_label(lines, var)))):
                out.append("_".join(singular(name_tokens(var.name))))
    return list(dict.fromkeys(out))


def _content_role(body: str, tmap: TextMap) -> RoleInfo | None:
    """The role content states directly (:func:`evallint.roles.content_role`, shared by every
    kind), with scale and rubric cues outside headings as further evidence of a judge."""
    found = content_role(body)
    if found is None:
        return None
    role, cues = found
    if role is Role.UNKNOWN:
        return RoleInfo(Role.UNKNOWN, ["content names both: "
                                       + ", ".join(_cue(c, tmap) for c in cues)])
    evidence = [_cue(c, tmap) for c in cues]
    if role is Role.EVALUATOR:
        evidence += _weak_evidence(body, tmap)
    return RoleInfo(role, evidence)


def _first_direct(pattern: re.Pattern[str], body: str) -> Cue | None:
    return first_direct(pattern, body, Role.EVALUATOR)


def _cue(c: Cue, tmap: TextMap) -> str:
    return f"content: '{c.snippet}' (line {tmap.pos(c.start).line})"


def _weak_evidence(body: str, tmap: TextMap) -> list[str]:
    """Scale and rubric cues outside headings (a heading cannot support itself)."""
    return [_cue(c, tmap) for c in scale_cues(body, lambda at: _in_heading(body, at))]


def _in_heading(body: str, offset: int) -> bool:
    line_start = body.rfind("\n", 0, offset) + 1
    return body.startswith("#", line_start) and bool(_HEADING.match(body, line_start))


def _heading_role(facts: PromptFacts, body: str, tmap: TextMap) -> RoleInfo:
    """Headings decide only with a supporting cue of the same side; otherwise unknown."""
    roles = {s.role for s in facts.sections} - {Role.UNKNOWN.value}
    if len(roles) > 1:
        return RoleInfo(Role.UNKNOWN, ["headings name both a generator and an evaluator"])
    if roles != {Role.EVALUATOR.value}:
        return RoleInfo(Role.UNKNOWN, [])
    sec = next(s for s in facts.sections if s.role == Role.EVALUATOR.value)
    support = _weak_evidence(body, tmap)
    if not support:
        return RoleInfo(Role.UNKNOWN, [f"heading '{sec.title}' (line {sec.pos.line}) alone"])
    return RoleInfo(Role.EVALUATOR, [f"heading '{sec.title}' (line {sec.pos.line})", *support])


# A folder names the step its files belong to ("Refine/system.md", "judge/user.md"); project
# areas ("evals/", "evaluation/", "generation/") do not, so their words are left out.
_FOLDER_EVALUATOR = frozenset(
    {"evaluator", "evaluate", "judge", "grader", "grade", "critic", "critique", "scorer",
     "score", "reviewer", "verifier", "verify", "rater", "rate", "assess", "assessor"}
)
_FOLDER_GENERATOR = frozenset(
    {"generator", "generate", "writer", "write", "draft", "drafter", "answerer", "solver",
     "solve", "refine", "refiner", "implementer", "implement", "producer", "responder"}
)


def _folder_role(name: str) -> tuple[Role, str]:
    tokens = name_tokens(name)
    ev = [t for t in tokens if t in _FOLDER_EVALUATOR]
    gen = [t for t in tokens if t in _FOLDER_GENERATOR]
    if ev and not gen:
        return Role.EVALUATOR, ev[0]
    if gen and not ev:
        return Role.GENERATOR, gen[0]
    return Role.UNKNOWN, ""


# ---------------------------------------------------------------------------- batches


def _find_batch(facts: PromptFileFacts, body: str, tmap: TextMap) -> None:
    for var in facts.template.variables:
        if var.kind not in ("iter", "section"):
            continue
        last = var.path[-1] if var.path else var.name
        if set(name_tokens(last)) & BATCH_WORDS:
            facts.batch_pos = var.pos
            facts.batch_evidence = f"loops over '{var.dotted}'"
            return
    m = _BATCH_TEXT.search(body)
    if m:
        facts.batch_pos = tmap.pos(m.start())
        facts.batch_evidence = f"says '{snippet(m.group(0))}'"
