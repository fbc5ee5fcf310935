"""Python modules and Jupyter notebooks -> :class:`~evallint.pyflow.ir.PythonFacts`.

Most Python files have nothing to do with LLMs, and libcst is several times slower than
``ast``: a substring prefilter decides which files get a CST at all. A file that passes gets one
``parse_module``, one ``PositionProvider`` resolution (no deep copy) and one recursive pass.
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

import libcst as cst
from libcst.metadata import MetadataWrapper

from evallint.config import Config
from evallint.facts import Pos
from evallint.frontend import ParseError, frontend
from evallint.kinds import FileKind
from evallint.pyflow.build import Builder
from evallint.pyflow.ir import PythonFacts
from evallint.pyflow.notebook import join_cells
from evallint.source import SourceFile

# Words that any LLM call, evaluator or model constant evallint can reason about must contain.
PREFILTER = re.compile(
    r"anthropic|openai|litellm|messages\.create|completion|judge|evaluat|grade|grading|rubric"
    r"|critic|claude|gpt-|gemini|llm|generat",
    re.IGNORECASE,
)


def module_name(rel: str) -> str:
    """``src/pkg/helpers.py`` -> ``src.pkg.helpers``; ``pkg/__init__.py`` -> ``pkg``."""
    p = PurePosixPath(rel)
    parts = [x for x in p.parent.parts if x not in (".", "")]
    if p.stem != "__init__":
        parts.append(p.stem)
    return ".".join(parts)


def needs_cst(text: str) -> bool:
    """The cheap test: could this file hold an LLM call, an evaluator or a model constant?"""
    return PREFILTER.search(text) is not None


@frontend(FileKind.PYTHON, FileKind.NOTEBOOK)
def parse_python(source: SourceFile, config: Config) -> PythonFacts:
    is_nb = source.rel.lower().endswith(".ipynb")
    kind = FileKind.NOTEBOOK if is_nb else FileKind.PYTHON
    facts = PythonFacts(path=source.rel, kind=kind.value, module=module_name(source.rel),
                        notebook=is_nb)
    code = source.text
    pos_map = _plain_pos
    if is_nb:
        joined = join_cells(source.text)
        facts.suppressions = joined.suppressions
        code = joined.code
        pos_map = joined.pos
    if not needs_cst(code):
        return facts
    try:
        module = cst.parse_module(code)
    except cst.ParserSyntaxError as exc:
        line, col, msg = _syntax_error(code, exc)
        where = pos_map(line, col)
        raise ParseError(f"Python syntax error: {msg}", where.line, where.column,
                         where.cell) from None
    except RecursionError:
        raise ParseError("too deeply nested to parse (recursion limit)") from None
    try:
        builder = Builder(MetadataWrapper(module, unsafe_skip_copy=True), pos_map)
        package = facts.module if source.rel.endswith("__init__.py") else (
            facts.module.rpartition(".")[0])
        builder.build(package)
    except RecursionError:
        raise ParseError("too deeply nested to analyse (recursion limit)") from None
    facts.analyzed = True
    facts.imports = builder.imports
    facts.constants = builder.constants
    facts.functions = builder.functions
    return facts


def _syntax_error(code: str, exc: cst.ParserSyntaxError) -> tuple[int, int, str]:
    """Where the error is, as Python itself reports it (libcst's parser often points at a
    later token); libcst's position when ``ast`` accepts the code."""
    try:
        ast.parse(code)
    except SyntaxError as err:
        return err.lineno or 1, max(0, (err.offset or 1) - 1), err.msg
    except (ValueError, RecursionError, MemoryError):
        pass
    return exc.raw_line, max(0, exc.raw_column), exc.message


def _plain_pos(line: int, column: int) -> Pos:
    return Pos(line, column + 1)
