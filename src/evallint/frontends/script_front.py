"""TypeScript and JavaScript files -> the same facts as a Python module.

A script that names an LLM SDK, a framework or a model (the Python prefilter's words, and the
script packages of the catalogue) is parsed with tree-sitter, lowered into a Python tree of the
same meaning (:mod:`evallint.frontends.scriptlower`) and built by the Python builder: the
project analysis, the catalogue and the rules read it as they read a module. Other scripts keep
only what they import, so that a script importing the project's LLM helper is parsed after all
(as a Python module is).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from evallint.config import Config
from evallint.facts import Pos
from evallint.frontend import ParseError, frontend
from evallint.frontends.envfiles import env_defaults
from evallint.frontends.pystrings import RULE_WORDS, find_templates
from evallint.frontends.python_front import build_into, digest, needs_cst, plain_pos
from evallint.frontends.scriptlower import lower
from evallint.frontends.scriptparse import (
    TYPESCRIPT_SUFFIXES,
    minified,
    module_name,
    parse_partial,
    resolve_specifier,
)
from evallint.kinds import FileKind
from evallint.pyflow.build import Builder
from evallint.pyflow.ir import PythonFacts
from evallint.pyflow.providers import CAT
from evallint.pyflow.relevance import needs_analysis
from evallint.source import SourceFile

# ``from "x"``, ``require("x")``, ``import("x")``: what a skipped script imports
# A folder's barrel (``index.ts``): nothing but ``export { a, b } from "./a"`` statements
# (between comments). It holds no LLM word, but its importers reach the project's LLM
# helpers through it, so it is analysed like a module that has them.
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_REEXPORT = re.compile(
    r"""export\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s+from\s+["'][^"'\n]+["'];?""")
_SPECIFIERS = re.compile(r"""(?:\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(\s*)["']([^"'\n]+)["']""")


def kind_of(rel: str) -> FileKind:
    suffix = PurePosixPath(rel).suffix.lower()
    return FileKind.TYPESCRIPT if suffix in TYPESCRIPT_SUFFIXES else FileKind.JAVASCRIPT


def needs_parse(text: str, low: str | None = None) -> bool:
    """Could this script hold an LLM call, an evaluator or a model name? (the Python
    prefilter's words, and the catalogue's script packages)"""
    low = text.lower() if low is None else low
    return needs_cst(text, low) or any(w in low for w in CAT.script_prefilter)


@frontend(FileKind.TYPESCRIPT, FileKind.JAVASCRIPT)
def parse_script(source: SourceFile, config: Config) -> PythonFacts:
    """Facts of one script, read with the project's own catalogue files beside the
    shipped ones."""
    CAT.use(config.model_docs)
    facts = build_script_facts(source, force=False)
    if facts.analyzed:
        defaults = env_defaults(source, config, source.text)
        if defaults:
            facts.env_defaults = defaults
            facts.digest = digest(facts.digest + repr(defaults))
    return facts


def build_script_facts(source: SourceFile, force: bool) -> PythonFacts:
    """``force``: parse even when the prefilter would skip the script (the project analysis
    found that it imports an LLM helper module)."""
    rel = source.rel
    facts = PythonFacts(path=rel, kind=kind_of(rel).value, module=module_name(rel))
    code = source.text
    if minified(code):  # (``*.min.js`` and ``*.d.ts`` are never classified as scripts)
        return facts  # build output: no code of anyone's to check
    low = code.lower()
    force = force or (len(code) < 20000 and "export" in low and _barrel(code))
    if not force and not needs_parse(code, low):
        facts.imported = imported_modules(code, rel)
        facts.digest = digest(code)  # (see python_front: the analysis may still read it)
        return facts
    tree, error = parse_partial(code, rel)
    if error is not None:  # a note names it; what parsed is analysed
        facts.skipped_cells = ((Pos(error.line, error.column), error.message),)
    try:
        module, imported = lower(tree.root_node, source.data, rel, CAT)
    except RecursionError:
        raise ParseError("too deeply nested to analyse (recursion limit)") from None
    facts.digest = digest(code)
    if may_hold_prompts(low):
        facts.prompts = list(find_templates(module, code, rel, plain_pos, script=True))
    if not force and not needs_analysis(module, code, facts.module):
        facts.imported = tuple(dict.fromkeys(imported))
        return facts
    build_into(facts, Builder(module, code, None), "")  # (the lowering resolved the imports)
    return facts


def _barrel(code: str) -> bool:
    """Only re-export statements (one match per statement: no repetition to backtrack)."""
    text = _COMMENTS.sub("", code)
    at, end, seen = 0, len(text), False
    while True:
        while at < end and text[at].isspace():
            at += 1
        if at == end:
            return seen
        m = _REEXPORT.match(text, at)
        if m is None:
            return False
        at, seen = m.end(), True


def imported_modules(code: str, rel: str) -> tuple[str, ...]:
    """The project modules a skipped script imports (a scan of its specifiers)."""
    out = []
    for m in _SPECIFIERS.finditer(code):
        own = resolve_specifier(m.group(1), rel)
        if own is not None:
            out.append(own)
    return tuple(dict.fromkeys(out))


def may_hold_prompts(low: str) -> bool:
    """A word of a judge's side or of a rubric somewhere (in the lowercased text): a template a
    rule can speak of."""
    return any(w in low for w in RULE_WORDS)
