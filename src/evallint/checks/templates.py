"""Template rules (EL1xx, EL601/EL602, template-level EL301/EL302).

Every check reads :class:`PromptFacts` from the prompt front-end; cross-file checks (includes,
partials, generator/evaluator pairs) resolve template references among the discovered files.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import Any

from evallint.facts import FileFacts, Pos, PromptFacts, TemplateRef, TemplateVar
from evallint.facts.modelpairs import ModelEnd, ModelPair, pair_source
from evallint.facts.prompt_files import FORMAT_KEY, JSON_KEY, PromptFileFacts
from evallint.findings import Finding, Related, Severity
from evallint.kinds import TEMPLATE_KINDS, FileKind
from evallint.registry import Context, Project, file_check, project_check
from evallint.roles import LABEL_TOKENS, Role, heading_role, name_tokens, singular
from evallint.signals import as_list, name_listed, signal_in

# ---------------------------------------------------------------------------- references

_VERBS = {"include": "includes", "import": "imports", "from": "imports from",
          "extends": "extends", "partial": "renders the partial"}


def _verb(ref: TemplateRef) -> str:
    return _VERBS.get(ref.kind, ref.kind)


def _prompts(project: Project) -> Iterator[PromptFacts]:
    for facts in project.of_kind(*TEMPLATE_KINDS):
        if isinstance(facts, PromptFacts):
            yield facts


def _role_note(facts: FileFacts) -> str:
    return facts.role.evidence[0] if facts.role.evidence else facts.role.role.value


def _rel(facts: FileFacts, pos: Pos | None, message: str) -> Related:
    p = pos or Pos(1, 1)
    return Related(facts.path, p.line, p.column, message)


# ---------------------------------------------------------------------------- EL101


@file_check("EL101", kinds=TEMPLATE_KINDS)
def merged_prompt_file(facts: PromptFacts, ctx: Context) -> Iterator[Finding]:
    """One file holding both a generator and an evaluator prompt (I1)."""
    gen = [s for s in facts.sections if s.role == Role.GENERATOR.value]
    ev = [s for s in facts.sections if s.role == Role.EVALUATOR.value]
    if gen and ev:
        first_gen, first_ev = gen[0], ev[0]
        yield ctx.finding(
            "EL101", facts.path, first_ev.pos,
            f"prompt file holds an evaluator prompt ('{first_ev.title}') and a generator prompt "
            f"('{first_gen.title}', line {first_gen.pos.line}); give the evaluator its own file",
            related=[_rel(facts, first_gen.pos, f"generator section '{first_gen.title}'")],
        )
        return
    fm = facts.front_matter
    gen_key = next((k for k in ("generator", "generate") if isinstance(fm.get(k), (str, dict))),
                   None)
    ev_key = next((k for k in ("evaluator", "judge", "grader")
                   if isinstance(fm.get(k), (str, dict))), None)
    if gen_key and ev_key and _holds_prompt(fm[gen_key]) and _holds_prompt(fm[ev_key]):
        line = facts.front_matter_lines.get(ev_key, 1)
        yield ctx.finding(
            "EL101", facts.path, Pos(line, 1),
            f"front matter holds both a generator prompt ('{gen_key}:') and an evaluator prompt "
            f"('{ev_key}:'); give the evaluator its own file",
        )


def _holds_prompt(value: Any) -> bool:
    if isinstance(value, str):
        return len(value.split()) >= 4
    if isinstance(value, dict):
        return any(isinstance(value.get(k), str) for k in ("prompt", "system", "template", "user"))
    return False


# ---------------------------------------------------------------------------- EL102/103/105


# Objects that hold what a prompt reads rather than name it: an agent SDK's run context
# (``RunContextWrapper.context``) handed to a dynamic-instructions function.
_CONTAINERS = frozenset({"context", "ctx", "run_context", "wrapper"})


def _denied(var: TemplateVar, ctx: Context) -> tuple[str, str] | None:
    """The first path element that is a generator-context signal, with the signal."""
    params = ctx.params("EL102")
    signals = as_list(params.get("signals"))
    exact = as_list(params.get("exact"))
    ignore = as_list(params.get("ignore"))
    owned = as_list(params.get("evaluator_owned"))
    inputs = {"input", *as_list(ctx.params("EL103").get("input_aliases")),
              *ctx.config.aliases.get("input", [])}
    if var.name in inputs:
        # The task input's own structure (a chat task's input.messages) is the input.
        return None
    path = var.path or (var.name,)
    if singular(name_tokens(path[-1]))[-1:] and \
            singular(name_tokens(path[-1]))[-1] in LABEL_TOKENS and \
            (len(path) > 1 or len(name_tokens(path[-1])) > 1):
        return None  # `plan.title`, `stepName`: what a thing is called, not its content
    for i, element in enumerate(path):
        if name_listed(element, ignore):
            continue
        if i < len(path) - 1 and element.lower() in _CONTAINERS:
            continue  # ``context.context.goal`` (a run context object): what it reads counts
        sig = signal_in(element, signals, exact, owned)
        if sig is not None:
            return element, sig.rstrip("*_")
    return None


def _weight(signal: str, ctx: Context) -> Severity | None:
    """A note for a signal that names the task's own material as often as the generator's
    (EL102's ``weak`` parameter), else the rule's severity."""
    weak = as_list(ctx.params("EL102").get("weak"))
    return Severity.NOTE if signal in weak or name_listed(signal, weak) else None


def _allowed_names(ctx: Context) -> set[str]:
    params = ctx.params("EL103")
    names = set(ctx.config.allowed_evaluator_inputs)
    for key in ("input_aliases", "output_aliases", "harness"):
        names.update(as_list(params.get(key)))
    return names


def _checked_name(var: TemplateVar, containers: list[str]) -> tuple[str, int]:
    """The name that must be allowed: the root, or an item field for batch containers."""
    if name_listed(var.name, containers):
        if len(var.path) > 1:
            return var.path[1], 1
        return "", 0
    return var.name, 0


def _legit(ctx: Context, facts: FileFacts, *names: str) -> str | None:
    for name in names:
        reason = ctx.legitimate(facts, name)
        if reason:
            return reason
    return None


def _how(var: TemplateVar) -> str:
    if var.via and var.via != var.name:
        if var.via == "this":
            return " (inside a block over it)"
        return f" (through '{var.via}')"
    return ""


@file_check("EL102", "EL103", "EL105", kinds=TEMPLATE_KINDS)
def evaluator_inputs(facts: PromptFacts, ctx: Context) -> Iterator[Finding]:
    """What an evaluator template interpolates: generator context, extras, undelimited output."""
    if not facts.role.is_evaluator:
        return
    evidence = list(facts.role.evidence)
    allowed = _allowed_names(ctx)
    params103 = ctx.params("EL103")
    containers = as_list(params103.get("containers"))
    output_names = {"output", *as_list(ctx.params("EL105").get("output_names")),
                    *ctx.config.aliases.get("output", [])}
    seen102: set[tuple[str, str]] = set()
    seen103: set[str] = set()
    # Names in Python code qualify their head noun ("user_query", "program_input",
    # "pass_criteria"): the head decides, for the input and the harness (an output alias as
    # head is no pass: "reference_answer" is the very extra input EL103 exists for).
    code_names = bool(getattr(facts, "qualified_names", False))
    head_allowed = {"input", *as_list(params103.get("input_aliases")),
                    *as_list(params103.get("harness"))}
    subjects = set(getattr(facts, "subjects", ()))
    conversation = set(getattr(facts, "conversation", ()))
    references = set(getattr(facts, "references", ()))
    for var in facts.template.variables:
        if conversation and "_".join(singular(name_tokens(var.name))) in conversation:
            continue  # the user's earlier turns: a multi-turn judge's task input
        if _is_subject(var, subjects):
            # "Evaluate the cleaned context": the context is what is graded, the candidate.
            if var.kind in ("output", "triple") and not var.delimited:
                yield _undelimited(ctx, facts, var, evidence)
            continue
        denied = _denied(var, ctx)
        if denied is not None and _is_subject(var, references):
            denied = None  # what the output is judged against: EL103 decides on it below
        if denied is not None:
            element, signal = denied
            key = (var.name, element)
            if key in seen102:
                continue
            seen102.add(key)
            # A declaration may name the variable, the signal or a token of it ("context"
            # declares `retrieved_context`).
            reason = _legit(ctx, facts, var.name, element, var.dotted, signal,
                            *name_tokens(element))
            shown = var.dotted
            msg = (f"evaluator template uses '{shown}'{_how(var)}: '{element}' is generator "
                   f"context; a judge should see only the task input and the final output")
            if reason:
                yield ctx.finding("EL102", facts.path, var.pos,
                                  f"'{shown}' reaches the evaluator by design: {reason}",
                                  severity=Severity.NOTE, evidence=evidence)
            else:
                yield ctx.finding("EL102", facts.path, var.pos, msg, evidence=evidence,
                                  default=_weight(signal, ctx))
            continue
        name, _ = _checked_name(var, containers)
        if name and name not in allowed and not name_listed(name, allowed) and (
            name not in seen103
        ) and _unnumbered(name) not in allowed and not (
            code_names and _headed_by(name, head_allowed)):
            seen103.add(name)
            # as for EL102, a token declares the name ("context" declares `retrieved_context`)
            reason = _legit(ctx, facts, name, var.name, var.dotted, *name_tokens(name))
            if reason:
                yield ctx.finding("EL103", facts.path, var.pos,
                                  f"'{name}' reaches the evaluator by design: {reason}",
                                  severity=Severity.NOTE, evidence=evidence)
            else:
                yield ctx.finding(
                    "EL103", facts.path, var.pos,
                    f"evaluator template uses '{var.dotted}'{_how(var)}, which is neither the "
                    "task input nor the output; remove it, add an alias, or declare it "
                    "legitimate with a reason",
                    evidence=evidence,
                )
        if var.kind in ("output", "triple") and not var.delimited:
            rendered, _ = _checked_name(var, containers)
            if rendered and (rendered in output_names or _unnumbered(rendered) in output_names):
                yield _undelimited(ctx, facts, var, evidence)


_TURN = re.compile(r"_\d+$")


def _unnumbered(name: str) -> str:
    """``question_1``, ``answer_a_2``: one turn of a multi-turn input or output."""
    return _TURN.sub("", name)


def _headed_by(name: str, allowed: set[str]) -> bool:
    """Is the last word of ``name`` (singular) an allowed name ("user_query" -> "query")?"""
    tokens = singular(name_tokens(name))
    return len(tokens) > 1 and (tokens[-1] in allowed or name_listed(tokens[-1], allowed))


def _is_subject(var: TemplateVar, subjects: set[str]) -> bool:
    """A variable named for what the prompt says it evaluates (``context``, ``code``): a root
    name, or the key of a one-level entry (``state['draft']``, ``inputs.context``).

    The whole name must be the subject: "evaluate the context" does not make
    ``retrieved_context`` the graded item.
    """
    if not subjects or var.via or len(var.path) > 2:
        return False
    # ``state['response_draft']`` (a LangGraph state): the entry is the value, named by its key
    tokens = singular(name_tokens(var.path[-1] if len(var.path) == 2 else var.name))
    while len(tokens) > 1 and tokens[-1] in _FORM_WORDS:  # ``trajectory_str`` is the trajectory
        tokens = tokens[:-1]
    return bool(tokens) and "_".join(tokens) in subjects


# Words a variable's name ends in that say how its value is written, not what it is.
_FORM_WORDS = frozenset({"str", "string", "text", "txt", "json", "fmt", "formatted", "repr",
                         "md", "markdown", "xml", "block", "summary"})


def _undelimited(ctx: Context, facts: PromptFacts, var: TemplateVar,
                 evidence: list[str]) -> Finding:
    return ctx.finding(
        "EL105", facts.path, var.pos,
        f"'{var.dotted}' is interpolated into the evaluator prompt without delimiters; wrap it "
        "in tags such as <output>…</output>, a fence, or put it alone after a label "
        "('Response:') so the judge can tell the candidate's text from its instructions",
        evidence=evidence,
    )


# ---------------------------------------------------------------------------- EL106 (vars)


@file_check("EL106", kinds=TEMPLATE_KINDS)
def generator_rubric_vars(facts: PromptFacts, ctx: Context) -> Iterator[Finding]:
    """A generator template that renders the rubric or the evaluator's prompt (I6)."""
    if not facts.role.is_generator:
        return
    params = ctx.params("EL106")
    signals = as_list(params.get("signals"))
    seen: set[str] = set()
    for var in facts.template.variables:
        for element in var.path or (var.name,):
            sig = signal_in(element, signals)
            if sig is None or var.name in seen:
                continue
            seen.add(var.name)
            yield ctx.finding(
                "EL106", facts.path, var.pos,
                f"generator template uses '{var.dotted}': the generator should learn only the "
                "evaluator's feedback, never its rubric or prompt",
                evidence=list(facts.role.evidence),
            )
            break


# ---------------------------------------------------------------------------- references

_TEMPLATE_EXTS = (".j2", ".jinja", ".jinja2", ".mustache", ".hbs", ".handlebars", ".prompt",
                  ".prompty", ".md", ".prompt.md", ".txt")


class _Resolver:
    """Find the file an include/import/extends/partial names, among the discovered files."""

    def __init__(self, project: Project) -> None:
        self.files = project.files
        self.by_stem: dict[str, list[str]] = {}
        for path in self.files:
            base = posixpath.basename(path)
            stem = base.split(".", 1)[0]
            self.by_stem.setdefault(stem, []).append(path)
            if stem.startswith("_"):
                self.by_stem.setdefault(stem[1:], []).append(path)

    def resolve(self, facts: FileFacts, ref: TemplateRef) -> FileFacts | None:
        if ref.dynamic or not ref.target:
            return None
        target = ref.target.strip().lstrip("/")
        folder = posixpath.dirname(facts.path)
        roots: list[str] = []
        cur = folder
        while True:  # up to "" for a path relative to the run, "/" for one outside it
            roots.append(cur)
            parent = posixpath.dirname(cur)
            if not cur or parent == cur:
                break
            cur = parent
        own_ext = posixpath.splitext(facts.path)[1]
        for root in roots:
            base = posixpath.normpath(posixpath.join(root, target)) if root else posixpath.normpath(
                target
            )
            for cand in (base, *(base + e for e in (own_ext, *_TEMPLATE_EXTS))):
                hit = self.files.get(cand)
                if hit is not None and hit is not facts:
                    return hit
        stem = posixpath.basename(target).split(".", 1)[0]
        hits = [p for p in self.by_stem.get(stem, []) if p != facts.path]
        if len(hits) == 1:
            return self.files[hits[0]]
        return None


def _target_role(resolver: _Resolver, facts: FileFacts, ref: TemplateRef) -> tuple[
    Role, str, FileFacts | None
]:
    """The role of what a reference names: the resolved file's stated role, else its name's.

    Names count only with unambiguous role words (``generator_base``, ``judge_rubric``):
    a partial called ``answer_format`` is not the generator's template.
    """
    target = resolver.resolve(facts, ref)
    if target is not None and target.role.explicit:
        return target.role.role, _role_note(target), target
    for name in (ref.target, target.path if target is not None else ""):
        stem = posixpath.basename(name).split(".", 1)[0]
        role = heading_role(stem) if stem else Role.UNKNOWN.value
        if role != Role.UNKNOWN.value:
            return Role(role), "by its name", target
    return Role.UNKNOWN, "", target


def _included_by_others(project: Project, resolver: _Resolver) -> set[str]:
    out: set[str] = set()
    for facts in _prompts(project):
        for ref in facts.template.refs:
            target = resolver.resolve(facts, ref)
            if target is not None:
                out.add(target.path)
    return out


def _is_partial(path: str) -> bool:
    parts = path.split("/")
    return parts[-1].startswith("_") or any(p in ("partials", "includes", "macros")
                                            for p in parts[:-1])


@project_check("EL102", "EL104", "EL106")
def template_references(project: Project, ctx: Context) -> Iterator[Finding]:
    """Includes, imports, extends and partials that carry generator context or rubrics across."""
    resolver = _Resolver(project)
    rubric_signals = as_list(ctx.params("EL106").get("signals"))
    for facts in _prompts(project):
        role = facts.role.role
        if role is Role.UNKNOWN:
            continue
        for ref in facts.template.refs:
            target_role, why, target = _target_role(resolver, facts, ref)
            related = [_rel(target, Pos(1, 1), f"{target.path}: {why}")] if target else []
            if role is Role.EVALUATOR and target_role is Role.GENERATOR:
                yield ctx.finding(
                    "EL104", facts.path, ref.pos,
                    f"evaluator {_verb(ref)} generator template '{ref.target}' ({why}); the judge "
                    "must not share the generator's prompt", related=related,
                    evidence=list(facts.role.evidence),
                )
            elif role is Role.EVALUATOR and target is not None and not target.role.is_evaluator:
                yield from _context_through(facts, ref, target, resolver, ctx)
            elif role is Role.GENERATOR:
                rubric = target_role is Role.EVALUATOR or bool(
                    {signal_in(t, rubric_signals) for t in name_tokens(ref.target)} - {None}
                ) or signal_in(posixpath.basename(ref.target).split(".")[0], rubric_signals)
                if rubric:
                    yield ctx.finding(
                        "EL106", facts.path, ref.pos,
                        f"generator {_verb(ref)} '{ref.target}'"
                        f"{f' ({why})' if why else ''}: the rubric and evaluator prompt must "
                        "stay out of the generator's context", related=related,
                        evidence=list(facts.role.evidence),
                    )


def _context_through(facts: PromptFacts, ref: TemplateRef, target: FileFacts,
                     resolver: _Resolver, ctx: Context) -> Iterator[Finding]:
    """EL102 for generator-context variables that an included file renders."""
    seen: set[str] = {facts.path}
    todo = [target]
    reported: set[tuple[str, str]] = set()
    while todo:
        cur = todo.pop()
        if cur.path in seen or not isinstance(cur, PromptFacts) or cur.role.is_evaluator:
            continue
        seen.add(cur.path)
        for var in cur.template.variables:
            denied = _denied(var, ctx)
            if denied is None or (var.name, denied[0]) in reported:
                continue
            element, signal = denied
            reported.add((var.name, element))
            related = [_rel(cur, var.pos, f"'{var.dotted}' is rendered here")]
            reason = _legit(ctx, facts, var.name, element, var.dotted, signal)
            if reason:
                yield ctx.finding("EL102", facts.path, ref.pos,
                                  f"'{var.dotted}' (through {ref.kind} '{ref.target}') reaches the "
                                  f"evaluator by design: {reason}", severity=Severity.NOTE,
                                  related=related)
            else:
                yield ctx.finding(
                    "EL102", facts.path, ref.pos,
                    f"evaluator {_verb(ref)} '{ref.target}', which renders '{var.dotted}' "
                    f"({cur.path}:{var.pos.line}): '{element}' is generator context",
                    related=related, evidence=list(facts.role.evidence),
                )
        for sub in cur.template.refs:
            nxt = resolver.resolve(cur, sub)
            if nxt is not None:
                todo.append(nxt)


# ---------------------------------------------------------------------------- EL601/EL602


_PAIR = re.compile(r"^(?P<stem>.*?)(?P<part>system|user|prompt)(?P<ext>\.[^/]*)?$", re.I)


def _pair_of(facts: FileFacts, files: dict[str, FileFacts]) -> FileFacts | None:
    """``system.md`` ↔ ``user.md`` (or ``judge_system.j2`` ↔ ``judge_user.j2``, or
    ``judge_prompt.j2``, the user half by another name) in one folder: the two halves of one
    conversation, so one half's output contract covers the other."""
    folder, name = posixpath.split(facts.path)
    m = _PAIR.match(name)
    if m is None or (m.group("stem") and not m.group("stem").endswith(("_", "-", "."))):
        return None
    part = m.group("part")
    others = ("user", "prompt") if part.lower() == "system" else ("system",)
    for other in others:
        if part.isupper():
            other = other.upper()
        elif part[0].isupper():
            other = other.capitalize()
        found = files.get(posixpath.join(folder, f"{m.group('stem')}{other}{m.group('ext') or ''}"))
        if found is not None:
            return found
    return None


def _contract(facts: PromptFacts, resolver: _Resolver) -> set[str]:
    keys: set[str] = set()
    seen: set[str] = set()
    todo: list[FileFacts] = [facts]
    pair = _pair_of(facts, resolver.files)
    if pair is not None:
        todo.append(pair)
    while todo:
        cur = todo.pop()
        if cur.path in seen or not isinstance(cur, PromptFacts):
            continue
        seen.add(cur.path)
        keys.update(k.lower() for k in cur.contract_keys)
        for ref in cur.template.refs:
            nxt = resolver.resolve(cur, ref)
            if nxt is not None:
                todo.append(nxt)
    return keys


_SCORE_INPUTS = frozenset({"score", "scores", "rating", "ratings"})


def _given_the_score(facts: PromptFacts) -> bool:
    """The prompt renders a score (``{{ final_score }}``): the score is not its output."""
    return any(set(name_tokens(v.name)) & _SCORE_INPUTS for v in facts.template.variables)


@project_check("EL601", "EL602")
def judge_contracts(project: Project, ctx: Context) -> Iterator[Finding]:
    """An evaluator prompt must say what it returns (score + feedback; item_id per item)."""
    resolver = _Resolver(project)
    included = _included_by_others(project, resolver)
    p601 = ctx.params("EL601")
    score_keys = {k.lower() for k in as_list(p601.get("score_keys"))}
    feedback_keys = {k.lower() for k in as_list(p601.get("feedback_keys"))}
    id_keys = {k.lower() for k in as_list(ctx.params("EL602").get("id_keys"))}
    for facts in _prompts(project):
        if not facts.role.is_evaluator or facts.path in included or _is_partial(facts.path):
            continue
        keys = _contract(facts, resolver)
        # A prompt that is given the score explains a score computed in code: what it writes
        # is the feedback, and there is no number to scrape out of prose.
        explains = _given_the_score(facts)
        has_score = bool(keys & score_keys)
        has_feedback = bool(keys & feedback_keys)
        has_id = bool(keys & id_keys)
        # Any explicit structure is a contract: a JSON example or schema (whatever its key
        # names), "respond in JSON with the keys ...", a spelled-out format, or a score tag.
        stated = JSON_KEY in keys or FORMAT_KEY in keys
        if not (has_score or (has_feedback and has_id)) and not stated and not explains:
            yield ctx.finding(
                "EL601", facts.path, Pos(1, 1),
                "evaluator prompt has no output contract: it never shows the JSON (or other "
                "structure) it must return, so its verdict has to be scraped out of prose",
                evidence=list(facts.role.evidence),
            )
        batch_pos = getattr(facts, "batch_pos", None)
        if batch_pos is not None and not has_id:
            why = getattr(facts, "batch_evidence", "") or "grades a batch"
            yield ctx.finding(
                "EL602", facts.path, batch_pos,
                f"batched judge ({why}) but its output contract has no "
                f"{'/'.join(sorted(id_keys)) or 'item_id'} key: results cannot be matched back "
                "to items, and a dropped or duplicated item goes unnoticed",
                evidence=list(facts.role.evidence),
            )


# ---------------------------------------------------------------------------- EL301/EL302


@pair_source
def prompt_pairs(project: Project, ctx: Context) -> Iterator[ModelPair]:
    """Front-matter models of an evaluator prompt and the generator prompts of its folder."""
    by_folder: dict[str, list[PromptFacts]] = {}
    for facts in _prompts(project):
        if facts.model and facts.role.role is not Role.UNKNOWN:
            by_folder.setdefault(posixpath.dirname(facts.path), []).append(facts)
    for group in by_folder.values():
        gens = [f for f in group if f.role.is_generator]
        for ev in (f for f in group if f.role.is_evaluator):
            assert ev.model is not None
            end = ModelEnd(f"evaluator prompt {ev.path}", ev.path, ev.model_pos or Pos(1, 1),
                           ev.model, ev.model)
            for gen in gens:
                assert gen.model is not None
                yield ModelPair(
                    end, ModelEnd(f"generator prompt {gen.path}", gen.path,
                                  gen.model_pos or Pos(1, 1), gen.model, gen.model),
                    key=ev.path,
                    related=(_rel(gen, gen.model_pos, f"generator model {gen.model}"),),
                    evidence=tuple(ev.role.evidence), hint="use a different, cheaper judge model")


# ---------------------------------------------------------------------------- Python strings


@file_check("EL101", "EL102", "EL103", "EL105", "EL106",
            kinds=(FileKind.PYTHON, FileKind.NOTEBOOK, FileKind.TYPESCRIPT, FileKind.JAVASCRIPT))
def python_templates(facts: FileFacts, ctx: Context) -> Iterator[Finding]:
    """The template rules on prompt templates held in Python strings and in TypeScript/
    JavaScript string and template literals (frontends/pystrings)."""
    prompts: list[PromptFacts] = getattr(facts, "prompts", [])
    for prompt in prompts:
        handed = [n for n in getattr(prompt, "handed", ())
                  if _denied(TemplateVar(name=n, path=(n,), pos=Pos(1, 1)), ctx) is None]
        if handed and isinstance(prompt, PromptFileFacts):
            # the item the prompt hands over for evaluation (its own message, a label that
            # names the candidate), unless it is named generator context
            prompt.subjects = [*prompt.subjects, *("_".join(name_tokens(n)) for n in handed)]
        extras = bool(ctx.params("EL103").get("python_strings", False))
        yield from (f for f in evaluator_inputs(prompt, ctx) if extras or f.code != "EL103")
        yield from generator_rubric_vars(prompt, ctx)
    if prompts and str(ctx.params("EL101").get("python_modules", "templates")).lower() != "off":
        yield from _merged_module(prompts, ctx)


def _merged_module(prompts: list[PromptFacts], ctx: Context) -> Iterator[Finding]:
    """EL101: one module that holds the generator's and the evaluator's templates. Only
    templates count (the front-end keeps no fixed text): a fixed system prompt beside the
    code that sends it is configuration; two templates side by side are a prompt file in
    disguise."""
    stated = [p for p in prompts if not getattr(p, "by_scope", False)]
    gen = next((p for p in stated if p.role.is_generator), None)
    ev = next((p for p in stated if p.role.is_evaluator), None)
    if gen is None or ev is None:
        return
    ev_pos = getattr(ev, "start", Pos(1, 1))
    gen_pos = getattr(gen, "start", Pos(1, 1))
    ev_name = getattr(ev, "name", "") or "a string"
    gen_name = getattr(gen, "name", "") or "a string"
    where = f"cell {gen_pos.cell}, line {gen_pos.line}" if gen_pos.cell else (
        f"line {gen_pos.line}")
    yield ctx.finding(
        "EL101", ev.path, ev_pos,
        f"module holds an evaluator prompt ('{ev_name}') and a generator prompt ('{gen_name}', "
        f"{where}); give the evaluator's template its own module or file",
        default=Severity.WARNING,
        related=[Related(gen.path, gen_pos.line, gen_pos.column,
                         f"generator template '{gen_name}'", gen_pos.cell)],
        evidence=[*ev.role.evidence[:1], *gen.role.evidence[:1]],
    )
