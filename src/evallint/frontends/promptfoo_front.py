"""promptfoo configs (``promptfooconfig.yaml``) and the test files they include via ``file://``.

The front-end extracts what the I2/I3/I4 rules need, with positions: the providers under test
(and whether they reason and show their thinking), the graders set at each level (assertion
``provider`` > test ``options.provider`` > ``defaultTest.options.provider``), every assertion
with its type, and the template variables its rubric text pulls in.
"""

from __future__ import annotations

import posixpath
from typing import Any

from evallint.config import Config
from evallint.facts import Pos
from evallint.facts.promptfoo import (
    PfAssertion,
    PfGrader,
    PfInclude,
    PfMissing,
    PfProvider,
    PfTest,
    PfVar,
    PromptfooFacts,
    target_file,
)
from evallint.frontend import ParseError, frontend
from evallint.kinds import FileKind
from evallint.marks import Doc, PathT, load_json, load_yaml
from evallint.marks import value_at as _at
from evallint.source import SourceFile

# Provider-id segments that name a vendor or an API flavour, not the model.
_PREFIXES = frozenset({
    "openai", "anthropic", "bedrock", "vertex", "google", "azure", "azureopenai", "ollama",
    "openrouter", "groq", "mistral", "deepseek", "xai", "togetherai", "fireworks", "perplexity",
    "litellm", "cohere", "replicate", "huggingface", "localai", "vllm", "cerebras", "ai21",
    "hyperbolic", "cloudflare-ai", "github", "chat", "completion", "messages", "responses",
    "converse", "realtime", "assistant", "text-generation", "gemini", "claude-code",
})
_CUSTOM = ("file://", "python:", "exec:", "http:", "https:", "webhook:", "js:", "golang:",
           "ruby:", "echo", "sequence", "package:", "browser", "websocket:", "mcp")


def provider_model(pid: str) -> str | None:
    """The model a promptfoo provider id names (``openai:chat:gpt-4o-mini`` -> gpt-4o-mini);
    None for scripts, HTTP endpoints and other custom providers."""
    pid = pid.strip()
    if not pid or pid.startswith(_CUSTOM):
        return None
    parts = pid.split(":")
    while len(parts) > 1 and parts[0].lower() in _PREFIXES:
        parts = parts[1:]
    model = ":".join(parts).strip()
    return model or None


def provider_vendor(pid: str) -> str:
    return pid.split(":", 1)[0].strip().lower() if ":" in pid else ""


_CONFIG_KEYS = ("providers", "targets", "prompts", "defaultTest", "scenarios", "description")


@frontend(FileKind.PROMPTFOO)
def parse_promptfoo(source: SourceFile, config: Config) -> PromptfooFacts:
    """A config or an included test file; invalid YAML raises ParseError (EL901)."""
    doc = load_yaml(source.text)
    facts = PromptfooFacts(path=source.rel, kind=FileKind.PROMPTFOO.value)
    data = doc.data
    if isinstance(data, list):
        facts.tests = _tests(doc, (), facts)
        _follow(source, config, doc, facts)
        return facts
    if not isinstance(data, dict):
        return facts
    facts.is_config = any(k in data for k in _CONFIG_KEYS)
    if not facts.is_config:  # a single test, or a defaultTest file
        facts.tests = [_test(doc, ())]
        _follow(source, config, doc, facts)
        return facts
    for key in ("providers", "targets"):
        if key in data:
            facts.providers = _providers(doc, (key,), facts)
            facts.providers_pos = doc.keys.get((key,))
            break
    dt = data.get("defaultTest")
    if isinstance(dt, str):
        _include(doc, ("defaultTest",), dt, "defaultTest", facts)
    elif isinstance(dt, dict):
        facts.default_test = _test(doc, ("defaultTest",))
    facts.tests = _tests(doc, ("tests",), facts)
    scen = data.get("scenarios")
    if isinstance(scen, list):
        for i, sc in enumerate(scen):
            if isinstance(sc, str):
                _include(doc, ("scenarios", i), sc, "scenarios", facts)
            elif isinstance(sc, dict):
                facts.tests += _tests(doc, ("scenarios", i, "tests"), facts)
                facts.tests += _tests(doc, ("scenarios", i, "config"), facts)
    _follow(source, config, doc, facts)
    return facts


# ---------------------------------------------------------------------------- file:// targets

_SCRIPT_EXTS = (".py", ".js", ".mjs", ".cjs", ".ts", ".go", ".rb", ".sh")
_DATA_EXTS = (".yaml", ".yml", ".json")


def _follow(source: SourceFile, config: Config, doc: Doc, facts: PromptfooFacts) -> None:
    """Read what ``file://`` references hold that the rules need: providers (and whether they
    show their thinking), graders named by file, prompt and rubric files; record each missing
    target. Globs are left to the project (several files may match)."""
    from evallint.frontends.config_refs import ignored_by, probable_file, read_named_file

    for inc in facts.includes:
        target = target_file(inc.target.strip())
        if not target or any(ch in target for ch in "*?[{"):
            continue
        found = read_named_file(source, config, target)
        if isinstance(found, list):
            guess = probable_file(source, config, target)
            facts.missing.append(PfMissing(inc.purpose, target, inc.pos,
                                           guess[0] if guess else "",
                                           "" if guess else ignored_by(source, config, target)))
            if guess is None:
                continue
            found = guess
        if inc.purpose != "providers" or not target.lower().endswith(_DATA_EXTS):
            continue
        try:
            sub = _load_data(target, found[1])
        except ParseError:
            continue
        holder = PromptfooFacts(path=found[0], kind=FileKind.PROMPTFOO.value)
        data = sub.data
        at: PathT = ("providers",) if isinstance(data, dict) and "providers" in data else ()
        for p in _providers(sub, at, holder):
            p.path = found[0]
            facts.providers.append(p)
    for ref, pos, path in _file_refs(doc, facts):
        target = target_file(ref)
        if any(ch in target for ch in "*?[{"):
            continue
        found = read_named_file(source, config, target)
        if isinstance(found, list):
            guess = probable_file(source, config, target)
            facts.missing.append(PfMissing("prompt, rubric or grader", target, pos,
                                           guess[0] if guess else "",
                                           "" if guess else ignored_by(source, config, target)))
            if guess is None:
                continue
            found = guess
        if path[0] == "prompts" and target.lower().endswith(_PROMPT_EXTS):
            _prompt_under_test(source, config, found[0], found[1], pos, facts)
    _graders_by_file(source, config, facts)
    _rubric_files(source, config, facts)


def _rubric_files(source: SourceFile, config: Config, facts: PromptfooFacts) -> None:
    """Rubric text kept in a file: its variables, positioned in that file."""
    from evallint.frontends.config_refs import read_named_file

    tests = list(facts.tests) + ([facts.default_test] if facts.default_test else [])
    for a in (a for t in tests for a in t.assertions if a.rubric_file):
        assert a.rubric_file is not None
        if a.rubric_file.lower().endswith(_SCRIPT_EXTS + _DATA_EXTS):
            continue
        found = read_named_file(source, config, a.rubric_file)
        if isinstance(found, list):
            continue
        holder = Doc({"value": found[1]}, values={("value",): Pos(1, 1)})
        for v in _template_vars(found[1], holder, ("value",)):
            v.file = found[0]
            a.rubric_vars.append(v)


# Keys whose ``file://`` values promptfoo reads at run time: prompts, assertion values and
# rubric prompts, graders, transforms. tests/providers/defaultTest/scenarios are includes.
_REF_KEYS = frozenset({"prompts", "value", "provider", "transform", "rubricPrompt"})


def _file_refs(doc: Doc, facts: PromptfooFacts) -> list[tuple[str, Pos, PathT]]:
    """Every other ``file://`` string value under those keys, with its position and path."""
    followed = {(i.pos.line, i.pos.column) for i in facts.includes}
    out: list[tuple[str, Pos, PathT]] = []
    for path, pos in doc.values.items():
        if (pos.line, pos.column) in followed or not any(
                isinstance(k, str) and k in _REF_KEYS for k in path):
            continue
        value = _at(doc.data, path)
        if isinstance(value, str) and value.startswith("file://"):
            out.append((value[len("file://"):].strip(), pos, path))
    return out


_PROMPT_EXTS = (".txt", ".md", ".j2", ".njk", ".jinja", ".jinja2", ".tmpl")


def _prompt_under_test(source: SourceFile, config: Config, display: str, text: str,
                       pos: Pos, facts: PromptfooFacts) -> None:
    """A prompt file under test is the generator's template: the rubric must stay out of it."""
    from evallint.facts.configs import ConfigPrompt
    from evallint.frontends.embedded import identity, prompt_from_text
    from evallint.roles import Role, RoleInfo

    own = prompt_from_text(display, text, identity, config, name=posixpath.basename(display))
    if own.role.is_evaluator:
        return  # promptfoo testing a judge prompt: the prompt under test is the judge
    role = RoleInfo(Role.GENERATOR, [f"promptfoo prompt under test ({source.rel}:{pos.line})"],
                    explicit=True)
    prompt = prompt_from_text(display, text, identity, config,
                              name=posixpath.basename(display), role=role)
    facts.prompts.append(ConfigPrompt(prompt, display, pos,
                                      "promptfoo tests this prompt (prompts:)", Pos(1, 1)))


def _graders_by_file(source: SourceFile, config: Config, facts: PromptfooFacts) -> None:
    """A grader given as ``provider: file://grader.yaml`` is the provider that file defines."""
    from evallint.frontends.config_refs import read_named_file

    tests = list(facts.tests) + ([facts.default_test] if facts.default_test else [])
    graders = [t.grader for t in tests] + [a.grader for t in tests for a in t.assertions]
    for g in graders:
        if g is None or not g.id or not g.id.startswith("file://"):
            continue
        target = target_file(g.id[len("file://"):].strip())
        if not target.lower().endswith(_DATA_EXTS):
            continue
        found = read_named_file(source, config, target)
        if isinstance(found, list):
            continue
        try:
            sub = _load_data(target, found[1])
        except ParseError:
            continue
        pid = sub.data.get("id") if isinstance(sub.data, dict) else None
        if isinstance(pid, str):
            g.id, g.model, g.via = pid, provider_model(pid), found[0]


def _include(doc: Doc, path: PathT, value: str, purpose: str, facts: PromptfooFacts) -> None:
    if value.startswith("file://"):
        facts.includes.append(PfInclude(purpose, value[len("file://"):], _pos(doc, path)))


def _load_data(name: str, text: str) -> Doc:
    """A referenced JSON or YAML file, by its name (ParseError when it does not parse)."""
    return load_json(text) if name.lower().endswith(".json") else load_yaml(text)


def _pos(doc: Doc, path: PathT) -> Pos:
    return doc.values.get(path) or doc.pos(*path) or Pos(1, 1)


def _tests(doc: Doc, path: PathT, facts: PromptfooFacts) -> list[PfTest]:
    value = _at(doc.data, path)
    if isinstance(value, str):
        _include(doc, path, value, "tests", facts)
        return []
    if not isinstance(value, list):
        return []
    out = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            _include(doc, (*path, i), item, "tests", facts)
        elif isinstance(item, dict):
            out.append(_test(doc, (*path, i)))
    return out


def _test(doc: Doc, path: PathT) -> PfTest:
    test = PfTest(pos=_pos(doc, path))
    test.grader = _grader(doc, (*path, "options", "provider"))
    test.assertions = _assertions(doc, (*path, "assert"))
    return test


def _assertions(doc: Doc, path: PathT) -> list[PfAssertion]:
    value = _at(doc.data, path)
    if not isinstance(value, list):
        return []
    out: list[PfAssertion] = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            continue
        at = (*path, i)
        atype = item["type"].strip()
        if atype.startswith("not-"):
            atype = atype[4:]
        if atype == "assert-set":
            out += _assertions(doc, (*at, "assert"))
            continue
        a = PfAssertion(atype, doc.keys.get((*at, "type")) or _pos(doc, at))
        a.grader = _grader(doc, (*at, "provider"))
        rubric = item.get("value")
        if isinstance(rubric, str) and rubric.startswith("file://"):
            a.rubric_file = rubric[len("file://"):].strip()
        elif isinstance(rubric, str):
            a.rubric_vars = _template_vars(rubric, doc, (*at, "value"))
        elif isinstance(rubric, list):
            for j, part in enumerate(rubric):
                if isinstance(part, str):
                    a.rubric_vars += _template_vars(part, doc, (*at, "value", j))
        out.append(a)
    return out


def _grader(doc: Doc, path: PathT) -> PfGrader | None:
    value = _at(doc.data, path)
    if value is None:
        return None
    pos = doc.keys.get(path) or _pos(doc, path)
    if isinstance(value, str):
        return PfGrader(value, provider_model(value), pos)
    if isinstance(value, dict):
        if isinstance(value.get("id"), str):
            at = doc.values.get((*path, "id"), pos)
            return PfGrader(value["id"], provider_model(value["id"]), at)
        if "text" in value:
            inner = _grader(doc, (*path, "text"))
            return inner or PfGrader(None, None, pos)
        return PfGrader(None, None, pos)
    return PfGrader(None, None, pos)


def _providers(doc: Doc, path: PathT, facts: PromptfooFacts) -> list[PfProvider]:
    value = _at(doc.data, path)
    items: list[tuple[PathT, Any]]
    if isinstance(value, str):
        if value.startswith("file://"):
            _include(doc, path, value, "providers", facts)
            return []
        items = [(path, value)]
    elif isinstance(value, list):
        items = [((*path, i), v) for i, v in enumerate(value)]
    elif isinstance(value, dict):
        items = [(path, value)]
    else:
        return []
    out = []
    for at, item in items:
        if isinstance(item, str):
            if item.startswith("file://"):
                _include(doc, at, item, "providers", facts)
                continue
            out.append(_provider(item, {}, _pos(doc, at)))
        elif isinstance(item, dict):
            if isinstance(item.get("id"), str):
                conf = item.get("config")
                where = doc.keys.get((*at, "id")) or _pos(doc, at)
                out.append(_provider(item["id"], conf if isinstance(conf, dict) else {}, where))
            elif len(item) == 1:  # legacy form: {"openai:gpt-4o": {config: ...}}
                pid, opts = next(iter(item.items()))
                raw = opts.get("config") if isinstance(opts, dict) else None
                out.append(_provider(str(pid), raw if isinstance(raw, dict) else {},
                                     doc.keys.get((*at, str(pid))) or _pos(doc, at)))
    return out


_REASONING_KEYS = ("thinking", "reasoning_effort", "reasoning", "thinkingConfig",
                   "extended_thinking", "enable_thinking", "reasoningEffort")


def _provider(pid: str, cfg: dict[str, Any], pos: Pos) -> PfProvider:
    """A provider and whether it reasons: a built-in provider reasons when its config turns
    thinking on; a custom one (``file://providers/agent.js``, ``python:``, ``exec:``, an HTTP
    endpoint) is the user's own code, and a ``reasoningEffort`` in its config says nothing of
    what it returns."""
    p = PfProvider(pid, provider_model(pid), provider_vendor(pid), pos)
    if pid.strip().startswith(_CUSTOM):
        return p
    for key in _REASONING_KEYS:
        val = cfg.get(key)
        if val in (None, False, "none", "disabled"):
            continue
        if isinstance(val, dict) and str(val.get("type", "")).lower() == "disabled":
            continue
        p.reasoning = f"config '{key}'"
        break
    show = cfg.get("showThinking")
    if isinstance(show, bool):
        p.show_thinking = show
    return p


def _template_vars(text: str, doc: Doc, path: PathT) -> list[PfVar]:
    """Variables a rubric renders, from a real (Jinja, nunjucks-compatible) parse."""
    if "{{" not in text and "{%" not in text:
        return []
    import jinja2
    from jinja2 import nodes

    try:
        tree = jinja2.Environment().parse(text)
    except jinja2.TemplateError:
        return []
    first = doc.text_line(*path) or 1
    base = _pos(doc, path)
    out: list[PfVar] = []
    claimed: set[int] = set()
    for node in tree.find_all((nodes.Getattr, nodes.Getitem, nodes.Name)):
        if id(node) in claimed:
            continue
        chain: list[str] = []
        cur: Any = node
        while isinstance(cur, (nodes.Getattr, nodes.Getitem)):
            claimed.add(id(cur))
            if isinstance(cur, nodes.Getattr):
                chain.append(cur.attr)
            elif isinstance(cur.arg, nodes.Const):
                chain.append(str(cur.arg.value))
            cur = cur.node
        if not isinstance(cur, nodes.Name) or cur.ctx != "load":
            continue
        claimed.add(id(cur))
        line = first + (node.lineno or 1) - 1
        col = base.column if line == base.line else 1
        out.append(PfVar(cur.name, (cur.name, *reversed(chain)), Pos(line, col)))
    return out
