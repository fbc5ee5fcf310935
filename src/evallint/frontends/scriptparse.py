"""TypeScript and JavaScript files: which grammar reads them, the parse, and module names.

A script is parsed by tree-sitter with the published TypeScript/TSX/JavaScript grammars (wheels,
no compiler). A part of a file the grammar cannot read (a syntax error, or syntax newer than
the grammar) is left out and named in a note; the rest is analysed. A minified bundle is not
analysed (it is build output, and one line of it costs as much as a module).
"""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from evallint.frontend import ParseError

# file suffix -> grammar
GRAMMARS = {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
            ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript",
            ".cjs": "javascript"}
TYPESCRIPT_SUFFIXES = frozenset({".ts", ".mts", ".cts", ".tsx"})
# suffixes an import specifier may carry (``./judge.js`` in an ES module written in TypeScript)
_SPEC_SUFFIXES = (*GRAMMARS, ".json")
# A line this long in a .js file is a bundle's, not someone's code.
MINIFIED_LINE = 2000


@lru_cache(maxsize=4)
def _parser(grammar: str) -> Any:
    try:
        import tree_sitter
    except ImportError as exc:  # an install without the grammars: one clear message per file
        raise ParseError("TypeScript/JavaScript support needs the `tree-sitter` package "
                         f"(pip install evallint-policy installs it): {exc}") from None
    if grammar == "javascript":
        import tree_sitter_javascript as js

        lang = js.language()
    else:
        import tree_sitter_typescript as ts

        lang = ts.language_tsx() if grammar == "tsx" else ts.language_typescript()
    return tree_sitter.Parser(tree_sitter.Language(lang))


def grammar_of(rel: str) -> str:
    return GRAMMARS.get(PurePosixPath(rel).suffix.lower(), "javascript")


def minified(text: str) -> bool:
    """A bundle: a very long line early in the file (``*.min.js`` is caught by its name)."""
    head = text[:20000]
    return any(len(line) > MINIFIED_LINE for line in head.splitlines()[:50])


def parse(text: str, rel: str) -> Any:
    """The tree-sitter tree of ``text``; a ParseError at the first syntax error (see
    :func:`parse_partial` for the tree with the error left out)."""
    tree, error = parse_partial(text, rel)
    if error is not None:
        raise error
    return tree


def parse_partial(text: str, rel: str) -> tuple[Any, ParseError | None]:
    """The tree, and the first syntax error the grammar met (None: none). The grammar may lag
    the language (a new syntax, a JSX corner), so a caller analyses what did parse: the error
    covers only its own part of the tree."""
    data = text.encode("utf-8", "surrogatepass")
    parser = _parser(grammar_of(rel))
    tree = parser.parse(data)
    patched = data
    for _ in range(_MAX_PATCHES):  # the grammar's known gaps, mended in place and read again
        bad = _first_error(tree.root_node) if tree.root_node.has_error else None
        mended = _mend(patched, bad) if bad is not None else None
        if mended is None:
            break
        patched = mended
        tree = parser.parse(patched)
    root = tree.root_node
    if root.has_error:
        bad = _first_error(root)
        line, col = (bad.start_point if bad is not None else root.start_point)
        what = "unexpected code"
        if bad is not None and bad.is_missing:
            what = f"missing {bad.type!r}"
        elif bad is not None and not data[bad.end_byte:].strip():
            # an error that runs to the end of the file: something left open
            what = "unexpected end of file (something is left open)"
            line, col = bad.end_point
        lang = "TypeScript" if PurePosixPath(rel).suffix.lower() in TYPESCRIPT_SUFFIXES \
            else "JavaScript"
        return tree, ParseError(f"{lang} syntax error: {what}", line + 1, col + 1)
    return tree, None


# Gaps of the published grammars in code that TypeScript accepts: a bare ``&`` in JSX text or
# in a JSX attribute's string ("Home & Sign In", "?a=1&b=2"), and a property named by a
# modifier keyword (``abstract?: string;`` in an interface). Each is mended by one byte of
# the same length, so every position stays; the lowering reads the original text.
_MAX_PATCHES = 32
_KEYWORD_PROPERTY = re.compile(rb"(?:abstract|declare|override|accessor)\s*\??\s*:")
# type arguments of a tagged template (``prisma.$queryRaw<Row[]>`SELECT ...` ``): blanked
_TAG_TYPES = re.compile(rb"[\w$]<[^\n;()=`]{1,200}>$")


def _mend(data: bytes, bad: Any) -> bytes | None:
    at = bad.start_byte
    if data[at:at + 1] == b"&" and data[at + 1:at + 2] not in (b"&", b"="):
        return data[:at] + b"_" + data[at + 1:]
    if _KEYWORD_PROPERTY.match(data, at):
        return data[:at] + b"_" + data[at + 1:]
    if bad.is_missing and data[at:at + 1] == b"`":
        line = data.rfind(b"\n", 0, at) + 1
        m = _TAG_TYPES.search(data, max(line, at - 240), at)
        if m is not None:
            return data[:m.start() + 1] + b" " * (m.end() - m.start() - 1) + data[m.end():]
    return None


def _first_error(node: Any) -> Any:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing:
            return n
        if n.has_error:
            stack.extend(reversed(n.children))
    return None


def module_name(rel: str) -> str:
    """``src/lib/judge.ts`` -> ``./src/lib/judge``; ``src/lib/index.ts`` -> ``./src/lib`` (a
    folder's index is the folder). A script's module name is its path from the root, written
    as a specifier: it never meets a Python module's or a package's dotted name (a file
    ``agents.ts`` is not the ``agents`` package its neighbour imports as ``@openai/agents``)."""
    p = PurePosixPath(rel)
    parts = [x for x in p.parent.parts if x not in (".", "")]
    stem = p.name[: -len(p.suffix)] if p.suffix else p.name
    if stem != "index":
        parts.append(stem)
    return "./" + "/".join(parts)


def resolve_specifier(spec: str, rel: str) -> str | None:
    """The module a relative or project-alias specifier names, as :func:`module_name` names
    it (``./judge.js`` beside ``src/app.ts`` -> ``./src/judge``); None for a package's.
    ``@/x`` and ``~/x`` are the common aliases of the project's source folder (``src/`` when
    the file is under one, else the root)."""
    folder = posixpath.dirname(rel)
    if spec.startswith((".", "/")):
        target = posixpath.normpath(posixpath.join(folder, spec))
        if target.startswith(".."):
            return None
    elif spec.startswith(("@/", "~/")):
        parts = PurePosixPath(rel).parts
        base = "/".join(parts[: parts.index("src") + 1]) if "src" in parts[:-1] else ""
        target = posixpath.join(base, spec[2:]) if base else spec[2:]
    else:
        return None
    for suffix in _SPEC_SUFFIXES:
        if target.endswith(suffix):
            target = target[: -len(suffix)]
            break
    return module_name(target + ".ts")
