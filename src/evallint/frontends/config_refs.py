"""Judge configs that name or hold judge templates.

- alpaca_eval-style annotator ``configs.yaml``: ``prompt_template`` names a ``.txt`` chat
  template (``str.format`` fields), ``completions_kwargs.model_name`` the judge model.
- arena-hard-auto ``judge_config.yaml``: ``judge_model``, an inline ``system_prompt`` and
  ``prompt_template`` (a string or a list of strings, ``str.format`` fields).
- phoenix classification evaluator YAML: ``messages[].content`` (``{{var}}``) and ``choices``.
- pydantic-evals dataset YAML: ``LLMJudge`` evaluators (``rubric``, ``model``).

A named template file is resolved relative to the config's folder, then its parent folders up
to the project root (annotator configs name ``<annotator>/<file>.txt`` from the folder that
holds every annotator). Files outside the project are never read; a missing file is recorded
for EL611. Every file read (or looked for) is recorded in :mod:`evallint.reads`: the cached
facts are reused only while those files are unchanged.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path, PureWindowsPath
from typing import Any

from evallint import reads
from evallint.classify import judge_config_shape, project_root_of
from evallint.config import Config
from evallint.confine import inside_any, within
from evallint.datasetfiles import llm_judges
from evallint.facts import Pos
from evallint.facts.configs import (
    ConfigModel,
    ConfigPrompt,
    JudgeConfigFacts,
    MissingRef,
)
from evallint.frontend import frontend
from evallint.frontends import prompt_files as pf
from evallint.frontends.embedded import identity, prompt_from_text, scalar_locator
from evallint.kinds import FileKind
from evallint.marks import Doc, PathT, load_yaml
from evallint.marks import value_at as _at
from evallint.roles import Role, RoleInfo
from evallint.source import LineIndex, SourceError, SourceFile, decode, read_bounded


@frontend(FileKind.JUDGE_CONFIG)
def parse_judge_config(source: SourceFile, config: Config) -> JudgeConfigFacts:
    """The judge templates of a config; invalid YAML raises ParseError (EL901)."""
    doc = load_yaml(source.text)
    shape = judge_config_shape(config.root_relative(source.rel), source.text) or ""
    facts = JudgeConfigFacts(path=source.rel, kind=FileKind.JUDGE_CONFIG.value, shape=shape,
                             role=RoleInfo(Role.EVALUATOR, [f"{shape} judge config"]))
    if not isinstance(doc.data, dict):
        return facts
    reader = _Reader(source, config, doc, facts)
    if shape == "annotator":
        reader.annotators()
    elif shape == "arena":
        reader.arena()
    elif shape == "phoenix":
        reader.phoenix()
    elif shape == "pydantic-evals":
        reader.pydantic_evals()
    return facts


class _Reader:
    """Reads one config's judges; keeps the source, the doc and the facts being filled."""

    def __init__(self, source: SourceFile, config: Config, doc: Doc,
                 facts: JudgeConfigFacts) -> None:
        self.source = source
        self.config = config
        self.doc = doc
        self.facts = facts
        self.index = LineIndex(source.text)
        self.name = posixpath.basename(source.rel)

    # -------------------------------------------------------------- shapes

    def annotators(self) -> None:
        data = self.doc.data
        entries: list[tuple[str, PathT]] = []
        if "prompt_template" in data:
            entries.append((Path(self.source.rel).parent.name, ()))
        entries += [(str(k), (k,)) for k, v in data.items()
                    if isinstance(v, dict) and "prompt_template" in v]
        for judge, at in entries:
            body = _at(data, at)
            target = body.get("prompt_template")
            if not isinstance(target, str) or not target.strip():
                continue
            kwargs = body.get("completions_kwargs")
            kwargs = kwargs if isinstance(kwargs, dict) else {}
            model = kwargs.get("model_name") or kwargs.get("model")
            model_at = (*at, "completions_kwargs", "model_name" if "model_name" in kwargs
                        else "model")
            contract: list[str] = []
            tools = kwargs.get("tools") or kwargs.get("functions")
            if tools or kwargs.get("response_format"):
                contract += pf._contract_keys("", {"json_schema": tools or
                                                   kwargs.get("response_format")})
                contract.append(pf.JSON_KEY)
            if isinstance(body.get("fn_completion_parser"), str) or isinstance(
                    body.get("completion_parser_kwargs"), dict):
                contract.append(pf.FORMAT_KEY)  # the config names the parser of the verdict
            self._named(target.strip(), (*at, "prompt_template"), judge,
                        model if isinstance(model, str) else None, model_at, contract)

    def arena(self) -> None:
        data = self.doc.data
        model = data.get("judge_model")
        contract = [pf.FORMAT_KEY] if isinstance(data.get("regex_pattern"), str) else []
        judge = str(data.get("name") or self.name)
        self._models(("judge_model",), "judge")
        self._models(("baseline_model",), "baseline")
        self._models(("model_list",), "tested")
        for key in ("system_prompt", "prompt_template"):
            value = data.get(key)
            if isinstance(value, str):
                self._inline(value, (key,), judge, key, model, ("judge_model",), contract)
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, str):
                        self._inline(item, (key, i), judge, key, model, ("judge_model",),
                                     contract)

    def phoenix(self) -> None:
        data = self.doc.data
        judge = str(data.get("name") or self.name)
        choices = data.get("choices")
        contract = [pf.FORMAT_KEY] if isinstance(choices, (dict, list)) and choices else []
        msgs = data.get("messages")
        if not isinstance(msgs, list):
            return
        for i, msg in enumerate(msgs):
            if isinstance(msg, dict) and isinstance(msg.get("content"), str):
                role = str(msg.get("role", "message"))
                self._inline(msg["content"], ("messages", i, "content"), judge,
                             f"{role}_message", None, (), contract)

    def pydantic_evals(self) -> None:
        for at, judge, spec in llm_judges(self.doc.data):
            # LLMJudge answers in a fixed structure (reason, pass, score): a contract.
            contract = [pf.JSON_KEY, "reason", "score"]
            if isinstance(spec, str):
                self._inline(spec, at, judge, "rubric", None, (), contract)
            elif isinstance(spec, dict) and isinstance(spec.get("rubric"), str):
                self._inline(spec["rubric"], (*at, "rubric"), judge, "rubric",
                             spec.get("model"), (*at, "model"), contract)

    # -------------------------------------------------------------- templates

    def _role(self, judge: str, at: PathT) -> RoleInfo:
        p = self.doc.pos(*at) or Pos(1, 1)
        return RoleInfo(Role.EVALUATOR,
                        [f"{self.facts.shape} config '{judge}' ({self.name}:{p.line})"],
                        explicit=True)

    def _inline(self, text: str, at: PathT, judge: str, key: str, model: Any,
                model_at: PathT, contract: list[str]) -> None:
        decoded, locate = scalar_locator(self.source.text, self.index, self.doc, at, text)
        facts = prompt_from_text(self.source.rel, decoded, locate, self.config,
                                 name=f"{judge}_{key}", role=self._role(judge, at),
                                 extra_contract=contract)
        self._model(facts, model, model_at)
        anchor = self.doc.values.get(at) or self.doc.pos(*at) or Pos(1, 1)
        self.facts.prompts.append(ConfigPrompt(facts, judge, anchor, "", anchor))

    def _named(self, target: str, at: PathT, judge: str, model: str | None, model_at: PathT,
               contract: list[str]) -> None:
        pos = self.doc.values.get(at) or self.doc.pos(*at) or Pos(1, 1)
        found = self._resolve(target)
        probable = ""
        if isinstance(found, list):
            guess = probable_file(self.source, self.config, target)
            if guess is None:
                self.facts.missing.append(MissingRef(target, pos, "prompt template", found))
                return
            probable, found = guess[0], guess
            self.facts.missing.append(MissingRef(target, pos, "prompt template", [], probable))
        display, text = found
        facts = prompt_from_text(display, text, identity, self.config,
                                 name=posixpath.basename(display), role=self._role(judge, at),
                                 extra_contract=contract)
        if model:
            facts.model = model
            facts.model_pos = None
        note = f"{self.facts.shape} config '{judge}' names this template as its judge prompt"
        self.facts.prompts.append(ConfigPrompt(facts, judge, pos, note, Pos(1, 1)))

    def _models(self, at: PathT, use: str) -> None:
        value = _at(self.doc.data, at)
        items = [(at, value)] if isinstance(value, str) else \
            [((*at, i), v) for i, v in enumerate(value)] if isinstance(value, list) else []
        for where, model in items:
            if isinstance(model, str) and model.strip():
                pos = self.doc.values.get(where) or self.doc.pos(*where) or Pos(1, 1)
                self.facts.models.append(ConfigModel(model.strip(), pos, use))

    def _model(self, facts: pf.PromptFileFacts, model: Any, at: PathT) -> None:
        if isinstance(model, str) and model.strip():
            facts.model = model.strip()
            facts.model_pos = self.doc.values.get(at)

    def _resolve(self, target: str) -> tuple[str, str] | list[str]:
        return read_named_file(self.source, self.config, target, levels=4)


def probable_file(source: SourceFile, config: Config,
                  target: str) -> tuple[str, str] | None:
    """(display path, text) of the file an absolute path from another machine probably
    means: ``/Users/ana/work/evals/prompts/judge.txt`` named by a config whose project holds
    ``prompts/judge.txt`` beside it (the longest tail of the path found from the config's
    folder or a folder above it, inside the project; at least the file name). None when the
    target is not absolute or no such file is there."""
    if not (os.path.isabs(target) or PureWindowsPath(target).is_absolute()) or "\0" in target:
        return None
    parts = [p for p in target.replace("\\", "/").split("/") if p and p not in (".", "..")]
    if parts and parts[0].endswith(":"):
        parts = parts[1:]  # a Windows drive
    for start in range(len(parts)):  # the longest tail first
        found = read_named_file(source, config, "/".join(parts[start:]), levels=4)
        if not isinstance(found, list):
            return found
    return None


def read_noted(path: str, config: Config) -> bytes | None:
    """The bytes of ``path`` (None when it is not a readable file), recorded for the result
    cache either way: what a front-end read, or found missing, decides its facts."""
    data = None
    if os.path.isfile(path):
        try:
            data = read_bounded(path, config.max_file_size)
        except OSError:
            data = None
    reads.note(path, config.max_file_size, data)
    return data


def ignored_by(source: SourceFile, config: Config, target: str) -> str:
    """The ``.gitignore`` (display path) that ignores a missing ``target`` named relative to
    the config, else '': a file the project generates and does not keep (test data a script
    writes), which is not a broken reference. The ``.gitignore`` files from the target's
    folder up to the project root are read, never one outside it; negations are not
    followed (a file they would keep is reported missing, as without them)."""
    from evallint import globs

    if os.path.isabs(target) or "\0" in target:
        return ""
    root = os.path.realpath(project_root_of(str(source.path)) or config.root)
    cand = os.path.realpath(source.path.parent / target)
    if not within(cand, root) or not inside_any(cand, config.roots):
        return ""
    here = os.path.realpath(source.path.parent)
    folder = os.path.dirname(cand)
    for _ in range(32):
        if not within(folder, root):
            break
        ignore = os.path.join(folder, ".gitignore")
        data = read_noted(ignore, config)
        if data is not None:
            rel = os.path.relpath(cand, folder).replace(os.sep, "/")
            for line in data.decode("utf-8", "replace").splitlines():
                pat = line.strip()
                if pat and not pat.startswith(("#", "!")) and globs.match(rel, pat):
                    shown = os.path.relpath(ignore, here).replace(os.sep, "/")
                    return posixpath.normpath(posixpath.join(
                        posixpath.dirname(source.rel) or ".", shown))
        if folder == root:
            break
        folder = os.path.dirname(folder)
    return ""


def read_named_file(source: SourceFile, config: Config, target: str,
                    levels: int = 1) -> tuple[str, str] | list[str]:
    """(display path, text) of a file a config names, or the folders tried when it is missing.

    ``target`` is relative to the config's folder, then (``levels`` > 1) to its parents. Never
    reads outside the project root: the tree is untrusted and a template's text shows in
    findings.
    """
    if os.path.isabs(target) or "\0" in target:
        return []
    # the file's own project (nearest marker), whatever folder evallint was started from
    root = os.path.realpath(project_root_of(str(source.path)) or config.root)
    here = source.path.parent
    display_dir = posixpath.dirname(source.rel)
    tried: list[str] = []
    for up in range(levels):
        folder = here.joinpath(*([".."] * up)) if up else here
        shown = posixpath.normpath(posixpath.join(display_dir, *([".."] * up))) \
            if display_dir or up else "."
        cand = os.path.realpath(folder / target)
        if not within(cand, root) or not inside_any(cand, config.roots):
            break  # outside the project: neither read nor listed as tried
        tried.append(shown + "/")
        data = read_noted(cand, config)  # a missing file is noted too: it may appear
        if data is None and os.path.isfile(cand):
            return tried  # there, but unreadable
        if data is not None:
            try:
                text = decode(data, config.max_file_size)
            except SourceError:
                return tried
            return posixpath.normpath(posixpath.join(shown, target)), text
        if os.path.realpath(folder) == root:
            break
    return tried
