"""Python modules and Jupyter notebooks -> :class:`~evallint.pyflow.ir.PythonFacts`.

Most Python files have nothing to do with LLMs: a substring prefilter decides which files are
parsed at all. A file that passes gets one ``ast.parse``; a second, tree-level prefilter
(:mod:`evallint.pyflow.relevance`) decides whether the builder's one recursive pass runs.
Syntax newer than the interpreter's (an f-string of 3.12, ``type X = ...``, ``except A, B:``)
is read through :mod:`evallint.pygrammar`, imported only when ``ast.parse`` refuses a file.
"""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import PurePosixPath

from evallint.config import Config
from evallint.facts import Pos, PromptFacts
from evallint.frontend import ParseError, frontend
from evallint.frontends.envfiles import env_defaults
from evallint.frontends.pystrings import find_templates, may_hold_templates, prompt_module
from evallint.kinds import FileKind
from evallint.pyast import quiet_parse
from evallint.pyflow.build import Builder, PosMap
from evallint.pyflow.callbacks import chains_params, handed_to
from evallint.pyflow.datasets import dataset_facts
from evallint.pyflow.ir import PythonFacts
from evallint.pyflow.notebook import JoinedNotebook, is_python, join_cells
from evallint.pyflow.providers import (
    CAT,
    framework_roots,
    has_sdk_call,
    model_reads,
    prefilter_words,
)
from evallint.pyflow.relevance import needs_analysis
from evallint.source import SourceFile

# (the module name is one run of [\w.]; without one, "from  import" is the blanks before "import"
# split one from the rest, as it always matched: never two blank runs side by side to split
# every way)
_IMPORTS = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]*)(?:(?<=[\w.])[ \t]+|[ \t])import"
                      r"|import[ \t]+([\w., \t]+))", re.M)


# Jinja tags in a file named .py: a template a generator renders into Python (cookiecutter,
# copier, a framework's scaffold); the tags are what keeps it from parsing.
_SCAFFOLD = re.compile(r"\{\{[^\n{}]{0,200}\}\}|\{%-?\s*\w[^\n]{0,200}?-?%\}")


_BLOCK_LINE = re.compile(r"^[ \t]*\{%-?[ \t]*\w", re.M)


def _scaffold(code: str, line: int) -> bool:
    """Is this unparsable file a template? A Jinja tag on the line Python rejects, or a line
    that starts with a block tag (``{% if %}`` is never Python)."""
    lines = code.splitlines()
    here = lines[line - 1] if 0 < line <= len(lines) else ""
    return bool(_SCAFFOLD.search(here)) or bool(_BLOCK_LINE.search(code))


def module_name(rel: str) -> str:
    """``src/pkg/helpers.py`` -> ``src.pkg.helpers``; ``pkg/__init__.py`` -> ``pkg``."""
    p = PurePosixPath(rel)
    parts = [x for x in p.parent.parts if x not in (".", "")]
    if p.stem != "__init__":
        parts.append(p.stem)
    return ".".join(parts)


def needs_cst(text: str, low: str | None = None) -> bool:
    """The cheap test: could this file hold an LLM call, an evaluator or a model constant?
    (``low``: the text lowercased, when the caller has it)"""
    low = text.lower() if low is None else low
    return any(w in low for w in prefilter_words())


def imported_modules(text: str, package: str) -> tuple[str, ...]:
    """What a skipped file imports (a line scan): ``pkg.mod`` for ``import pkg.mod`` and
    ``pkg.mod.name`` for ``from pkg.mod import name``, so that the project analysis can parse
    the file after all if it imports an LLM helper of the project.

    Only the lines that hold the word ``import`` are matched (found with ``str.find``, which
    is fast C): a multi-line regex tried at every character of every skipped file cost more."""
    out: list[str] = []
    at = text.find("import")
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        m = _IMPORTS.match(text, start, end if end != -1 else len(text))
        if m is not None:
            _import_names(text, m, package, out)
        if end == -1:
            break
        at = text.find("import", end)
    return tuple(dict.fromkeys(n for n in out if n))


def _import_names(text: str, m: re.Match[str], package: str, out: list[str]) -> None:
    if m.group(1) is not None:
        name = m.group(1)
        dots = len(name) - len(name.lstrip("."))
        if dots:
            parts = package.split(".") if package else []
            base = parts[: max(0, len(parts) - (dots - 1))]
            name = ".".join([*base, name[dots:]] if name[dots:] else base)
        nl = text.find("\n", m.end())
        rest = text[m.end():nl if nl != -1 else None]
        if rest.lstrip().startswith("("):
            close = text.find(")", m.end())
            rest = text[m.end():close if close != -1 else None]
        for item in rest.replace("(", " ").replace("\\", " ").split(","):
            words = item.split()
            if words and words[0].isidentifier():
                out.append(f"{name}.{words[0]}" if name else words[0])
    else:
        out.extend(x.split()[0] for x in m.group(2).split(",") if x.strip())


@frontend(FileKind.PYTHON, FileKind.NOTEBOOK)
def parse_python(source: SourceFile, config: Config) -> PythonFacts:
    """Facts of one module or notebook (near-empty when the prefilter finds nothing), read
    with the project's own catalogue files beside the shipped ones."""
    CAT.use(config.model_docs)
    facts = build_facts(source, force=False, limit=config.max_file_size)
    if facts.analyzed:  # (a notebook's JSON too: the reads are found in its escaped text)
        defaults = env_defaults(source, config, source.text)
        if defaults:  # what the analysis resolves changes with them: so does the digest
            facts.env_defaults = defaults
            facts.digest = digest(facts.digest + repr(defaults))
    return facts


def build_facts(source: SourceFile, force: bool, limit: int | None = None) -> PythonFacts:
    """``force``: parse even when the prefilter would skip the file (the project analysis
    found that it imports an LLM helper module). A module that names ``inspect_ai`` also gets
    its Inspect grader calls, from the tree parsed here when there is one. ``limit``: the most
    bytes of a notebook's code cells analysed (max-file-size; a Python file's own size is
    bounded when it is read): past it, a ParseError."""
    facts, tree = _facts(source, force, limit)
    if not facts.notebook and "inspect_ai" in source.text:
        from evallint.frontends.inspect_facts import scan_inspect

        facts.inspect_graders = tuple(scan_inspect(source.text, tree))
    return facts


def _facts(source: SourceFile, force: bool,
           limit: int | None = None) -> tuple[PythonFacts, ast.Module | None]:
    """The facts of :func:`build_facts`, with the module's tree when it was parsed (a
    notebook's joined cells are not the file's text: None)."""
    is_nb = source.rel.lower().endswith(".ipynb")
    kind = FileKind.NOTEBOOK if is_nb else FileKind.PYTHON
    facts = PythonFacts(path=source.rel, kind=kind.value, module=module_name(source.rel),
                        notebook=is_nb)
    code = source.text
    pos_map = plain_pos
    joined: JoinedNotebook | None = None
    if is_nb:
        joined = join_cells(source.text, limit)
        facts.suppressions = joined.suppressions
        if not is_python(joined.language):
            facts.not_python = (f"a {joined.language} notebook (its kernel's language), not "
                                "Python: not analysed")
            return facts, None
        code = joined.code
        pos_map = joined.pos
    package = facts.module if source.rel.endswith("__init__.py") else (
        facts.module.rpartition(".")[0])
    low = code.lower()  # (the prefilters below test words in any case)
    if not force and not needs_cst(code, low):
        if prompt_module(code, low):
            facts.prompts = _templates_only(code, source.rel, pos_map)
        if "import" in code:
            facts.imported = imported_modules(code, package)
        # (the analysis may still read it: it imports an LLM helper, or a relevant module
        # hands its function steps to run; a result read from it is keyed by its text)
        facts.digest = digest(code)
        return facts, None
    skipped: list[tuple[Pos, str]] = []
    try:
        tree = _ast_tree(code, joined, skipped)
    except ParseError as err:
        if joined is None and _scaffold(code, err.line):
            facts.not_python = ("a scaffold template (it holds Jinja `{{ }}` / `{% %}` tags and "
                                "is not Python until rendered): not analysed")
            return facts, None
        raise
    module_tree = None if joined is not None else tree
    if joined is not None and joined.code != code:  # cells left out that do not parse
        code = joined.code
        low = code.lower()
    facts.digest = digest(code)
    facts.skipped_cells = tuple(skipped)
    if may_hold_templates(code, low):
        facts.prompts = _templates(tree, code, source.rel, pos_map)
    if not force and not needs_analysis(tree, code, facts.module):
        facts.imported = imported_modules(code, package)
        return facts, module_tree
    build_into(facts, Builder(tree, code, None if pos_map is plain_pos else pos_map), package)
    if "pydantic_evals" in facts.fw_roots:
        facts.datasets, facts.judge_defaults = dataset_facts(tree, facts.imports, pos_map)
    return facts, module_tree


def build_into(facts: PythonFacts, builder: Builder, package: str) -> None:
    """Run the builder over a module's tree (a Python module's, or a script's lowered one) and
    keep what it built on ``facts``: the analysis reads both kinds the same way."""
    try:
        builder.build(package)
    except RecursionError:
        raise ParseError("too deeply nested to analyse (recursion limit)") from None
    facts.analyzed = True
    facts.imports = builder.imports
    facts.constants = builder.constants
    facts.functions = builder.functions
    facts.owners = builder.owners
    facts.calls_sdk = has_sdk_call(facts)
    facts.runs_steps = any(chains_params(fn) for fn in builder.functions.values())
    facts.handed_to = handed_to(builder.imports, builder.functions)
    facts.fw_roots = framework_roots(facts)
    facts.model_reads = model_reads(facts)
    facts.function_names = frozenset(builder.functions)
    facts.function_order = tuple(builder.functions)
    facts.constant_names = frozenset(builder.constants)


def _templates_only(code: str, rel: str, pos_map: PosMap) -> list[PromptFacts]:
    """Templates of a module the LLM prefilter skips (a prompts module holds only strings);
    one that does not parse has none: it was never linted as Python either."""
    try:
        tree = _parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return _templates(tree, code, rel, pos_map)


def _templates(tree: ast.Module, code: str, rel: str, pos_map: PosMap) -> list[PromptFacts]:
    try:
        return list(find_templates(tree, code, rel, pos_map))
    except RecursionError:
        return []


def _ast_tree(code: str, joined: JoinedNotebook | None,
              skipped: list[tuple[Pos, str]]) -> ast.Module:
    """The ``ast`` tree of ``code``. In a notebook a cell that does not parse is left out
    (IPython runs the others; a notebook is not a module) and recorded in ``skipped``; a
    module's syntax error is a ParseError at Python's own position. Deep nesting is bounded by
    the interpreter's own recursion limit, never raised here: past it, a ParseError.

    Each parse of the whole code costs as much as the code is long: a cell is left out alone
    after a parse only the first time; on a second syntax error every cell that does not
    parse on its own is left out at once, so that a notebook of thousands of broken cells
    costs a few parses, not one per cell."""
    one_by_one = True
    while True:
        try:
            tree = _parse(code)
        except SyntaxError as err:
            line, col = err.lineno or 1, max(0, (err.offset or 1) - 1)
            if joined is None:
                raise ParseError(f"Python syntax error: {err.msg}", line, col + 1) from None
            where = joined.pos(line, col)
            if (not one_by_one or where.cell is None
                    or any(p.cell == where.cell for p, _ in skipped)
                    or _parses(joined.cell_code(where.cell))):
                # Python blamed a cell that is not at fault (an unclosed block in an earlier
                # cell is reported where the next code starts), or this is the second error:
                # leave out every cell that does not parse on its own
                if not _blank_broken_cells(joined, skipped):
                    raise ParseError(f"Python syntax error: {err.msg}", where.line,
                                     where.column, where.cell) from None
                code = joined.code
                continue
            skipped.append((where, err.msg))
            joined.blank(where.cell)
            one_by_one = False
            code = joined.code
        except (RecursionError, MemoryError):
            raise ParseError("too deeply nested for Python's own parser (a very long operator "
                             "or attribute chain?)") from None
        except ValueError as err:  # a NUL byte in the source
            raise ParseError(f"Python source cannot be parsed: {err}") from None
        else:
            return tree


def _parse(code: str) -> ast.Module:
    """``ast.parse``; a module it refuses may be in a newer grammar than the interpreter's."""
    try:
        return quiet_parse(code)
    except SyntaxError as err:
        from evallint.pygrammar import parse_newer

        return parse_newer(code, err)


def _parses(code: str) -> bool:
    try:
        _parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _blank_broken_cells(joined: JoinedNotebook, skipped: list[tuple[Pos, str]]) -> bool:
    """Leave out the cells that do not parse alone (each recorded in ``skipped`` with its own
    error); False when there is none left to leave out."""
    done = {p.cell for p, _ in skipped}
    found = False
    for cell in range(1, len(joined.starts) + 1):
        if cell in done:
            continue
        code = joined.cell_code(cell)
        if code.isspace():  # an empty cell parses (most cells of a long notebook are short)
            continue
        try:
            _parse(code)
        except SyntaxError as err:
            line = (err.lineno or 1) + joined.starts[cell - 1] - 1
            skipped.append((joined.pos(line, max(0, (err.offset or 1) - 1)), err.msg))
            joined.blank(cell)
            found = True
        except (ValueError, RecursionError, MemoryError):
            continue
    return found


def digest(code: str) -> str:
    """The digest the project analysis cache keys a module's facts by."""
    return hashlib.blake2b(code.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def plain_pos(line: int, column: int) -> Pos:
    """A module's own position (no notebook cells): a 0-based column made 1-based."""
    return Pos(line, column + 1)
