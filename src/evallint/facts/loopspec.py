"""Facts of loop specs: the generator, evaluator and judge blocks, and the keys that name
their models and prompts."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from evallint.facts import FileFacts, Pos
from evallint.marks import Doc, PathT

GEN_BLOCKS: tuple[PathT, ...] = (("generator",), ("eval_config", "generator"))
EVAL_BLOCKS: tuple[PathT, ...] = (("evaluator",), ("eval_config", "evaluator"), ("judge",),
                                  ("metric", "judge"), ("eval_config", "judge"))
JUDGE_BLOCKS: tuple[PathT, ...] = (("judge",), ("metric", "judge"), ("eval_config", "judge"))
GEN_MODEL_KEYS: tuple[PathT, ...] = (("eval_config", "generator_model"), ("task_model",),
                                     ("generator_model",), ("model",), ("student", "model"))
EVAL_MODEL_KEYS: tuple[PathT, ...] = (("eval_config", "evaluator_model"),
                                      ("evaluator_model",), ("eval_config", "judge_model"))
GEN_PROMPT_KEYS: tuple[PathT, ...] = (("eval_config", "generator_prompt"),)
EVAL_PROMPT_KEYS: tuple[PathT, ...] = (("eval_config", "evaluator_prompt"),)
_FILE_EXTS = (".md", ".txt", ".j2", ".jinja", ".jinja2", ".yaml", ".yml", ".json", ".prompt",
              ".prompty", ".mustache", ".hbs", ".xml", ".jsonl", ".markdown", ".tmpl")


@dataclass
class Ref:
    """A value of the spec with the position of its key."""

    path: PathT
    value: Any
    pos: Pos


@dataclass
class LoopSpecFacts(FileFacts):
    doc: Doc = field(default_factory=lambda: Doc(None))

    def get(self, path: PathT) -> Ref | None:
        data = self.doc.data
        for key in path:
            if not isinstance(data, dict) or key not in data:
                return None
            data = data[key]
        return Ref(path, data, self.doc.pos(*path) or Pos(1, 1))

    def first(self, paths: tuple[PathT, ...]) -> Ref | None:
        for p in paths:
            ref = self.get(p)
            if ref is not None and ref.value is not None:
                return ref
        return None

    @property
    def is_loop(self) -> bool:
        """A spec that runs a judge (not merely a file that happens to be named like one)."""
        return any(isinstance(r.value, dict) for r in
                   (self.get(p) for p in (*EVAL_BLOCKS, ("eval_config",))) if r is not None)

    def role_ref(self, role: str, key: str) -> Ref | None:
        """The generator's or evaluator's ``prompt`` / ``model`` wherever the dialect keeps it."""
        blocks = GEN_BLOCKS if role == "generator" else EVAL_BLOCKS
        flat = {("generator", "model"): GEN_MODEL_KEYS, ("evaluator", "model"): EVAL_MODEL_KEYS,
                ("generator", "prompt"): GEN_PROMPT_KEYS,
                ("evaluator", "prompt"): EVAL_PROMPT_KEYS}[(role, key)]
        found = self.first(tuple((*b, key) for b in blocks))
        if found is None:
            found = self.first(flat)
        return found if found is not None and isinstance(found.value, str) else None

    def resolve(self, ref: str) -> str:
        """A path named in the spec, relative to the spec's folder ('/'-separated)."""
        base = posixpath.dirname(self.path)
        target = ref.split("#", 1)[0].strip()
        return posixpath.normpath(posixpath.join(base, target)) if base else \
            posixpath.normpath(target)

    def rubric_refs(self) -> list[Ref]:
        """Rubric files the spec names (inline rubric text and weight tables are not files)."""
        out = []
        for block in (*JUDGE_BLOCKS, ("evaluator",), ("eval_config",), ()):
            for key in ("rubric", "rubric_file", "rubric_path", "singleton_rubric"):
                r = self.get((*block, key))
                if r is not None and looks_like_path(r.value):
                    out.append(r)
        return out

    def prompt_refs(self) -> list[Ref]:
        refs = [self.role_ref("generator", "prompt"), self.role_ref("evaluator", "prompt")]
        seen = set()
        out = []
        for r in refs:
            if r is not None and looks_like_path(r.value) and r.path not in seen:
                seen.add(r.path)
                out.append(r)
        for block in JUDGE_BLOCKS:
            r = self.get((*block, "prompt"))
            if r is not None and looks_like_path(r.value) and r.path not in seen:
                seen.add(r.path)
                out.append(r)
        return out


def looks_like_path(value: Any) -> bool:
    """A one-line string naming a file (by extension or folder), not inline prompt text."""
    if not isinstance(value, str) or "\n" in value or not value.strip():
        return False
    v = value.strip().split("#", 1)[0]
    if " " in v and not v.lower().endswith(_FILE_EXTS):
        return False
    return v.lower().endswith(_FILE_EXTS) or ("/" in v and " " not in v)
