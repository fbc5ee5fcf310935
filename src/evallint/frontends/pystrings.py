"""Prompt templates that live as Python strings -> prompt facts the template rules read.

A string becomes a template by its use (``.format(...)``, ``%``, ``string.Template``,
``jinja2.Template``, LangChain ``PromptTemplate`` / ``ChatPromptTemplate``, a message
``content``, a ``system=`` / ``prompt=`` argument) or by its shape (a constant named
``*_PROMPT``, ``*_TEMPLATE``, ``SYSTEM_*``). Only strings whose role is stated (a judge's or a
generator's, with the evidence the prompt files use) are kept: SQL, log formats and URLs name
no role and never become prompts. Every variable is reported where it stands in the ``.py``
file: the decoded string is mapped back, character by character, to the literal's tokens
(implicit concatenation, triple quotes, raw strings, escapes and ``{{`` included).
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from evallint.facts import Pos, TemplateFacts, TemplateVar
from evallint.facts.prompt_files import PyPromptFacts
from evallint.frontend import ParseError
from evallint.frontends.format_front import has_format_fields, parse_format
from evallint.frontends.prompt_files import (
    _CANDIDATE_NAMES,
    _content_role,
    _evaluates,
    _names_the_judge,
    conversation_inputs,
    evaluated_subjects,
    labelled_subjects,
    process_subjects,
    reference_names,
)
from evallint.frontends.template_text import TextMap, is_rule_line
from evallint.pyast import dotted, str_const
from evallint.pyflow.build import asks_score
from evallint.pyflow.relevance import function_role, makes_eval_artifacts
from evallint.roles import EVALUATOR_WORDS, Role, RoleInfo, name_tokens, prompt_name_role
from evallint.source import char_column

PosMap = Callable[[int, int], Pos]

# The text prefilter: a template constant's shape or a template class/use. Substring tests
# first (a regex over every file of a large tree costs more than parsing the few it admits).
_SHAPE_WORDS = ("PROMPT", "TEMPLATE", "INSTRUCTION", "SYSTEM_", "InputField", "from_messages",
                "from_template", "Template(")
# Substrings of EVALUATOR_WORDS that are not parts of common words ("generate", "medieval"),
# and the rubric's plural: a module without any holds no template a rule can report.
RULE_WORDS = (*sorted(EVALUATOR_WORDS - {"rate", "eval", "evals"}), "rate ", "criteria")
# A prompt or template bound or passed by name ("prompt =", "templates:", "instructions(")
# is one of these words followed by this tail.
_ASSIGNED_WORDS = ("prompt", "template", "instructions")
_ASSIGNED_TAIL = re.compile(r"s?(?:\s*[:=]|\()")
# Words on a line that can make a string a prompt by its use; statements without one on any
# of their lines are not walked (most of a large module).
_HOT_WORDS = (".format(", " % ", "emplate", "rompt", "ROMPT", "content", "ystem", "YSTEM",
              "nstruction", "NSTRUCTION", "Message", "InputField")
# Name tokens that make a name a prompt's ("JUDGE_PROMPT", "grader_template", "SYSTEM_MSG").
_PROMPT_HEADS = frozenset({"prompt", "prompts", "template", "templates", "tmpl", "instructions",
                           "instruction"})
_SYSTEM = "system"
# The fields of a compound statement that hold statements (``handlers`` and ``cases``: each
# with a ``body``).
_BLOCKS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
# Keyword arguments that carry a prompt's text into a call.
_PROMPT_KWARGS = frozenset({"system", "system_prompt", "prompt", "instructions", "template",
                            "system_message", "user_prompt", "prompt_template", "content"})
_LC_TEMPLATES = frozenset({"PromptTemplate", "ChatPromptTemplate", "HumanMessagePromptTemplate",
                           "SystemMessagePromptTemplate", "AIMessagePromptTemplate"})
_LC_MESSAGES = frozenset({"SystemMessage", "HumanMessage", "AIMessage"})
_DEDENT = frozenset({"dedent", "cleandoc", "strip", "lstrip", "rstrip"})
_DOLLAR = re.compile(r"\$(?:(\$)|([A-Za-z_]\w*)|\{([A-Za-z_]\w*)\})")
_PERCENT = re.compile(r"%%|%\(([A-Za-z_]\w*)\)[-#0 +]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]")


def prompt_module(code: str, low: str | None = None) -> bool:
    """For a module the LLM prefilter skips (no SDK, no judge word): only a prompt-specific
    shape is worth a parse (``*_PROMPT``, LangChain's ``*Prompt*`` classes, dspy fields):
    ``TEMPLATES`` and ``template =`` are everywhere in web and tooling code. Three substring
    tests, as every skipped file pays them."""
    return ("PROMPT" in code or "Prompt" in code or "InputField" in code) and (
        may_hold_templates(code, low))


def _assigned(code: str) -> bool:
    """Is a prompt or template bound or passed by name? The tail is tried only where one of
    the words occurs (str.find), not at every position of the module."""
    for word in _ASSIGNED_WORDS:
        at = code.find(word)
        while at != -1:
            if _ASSIGNED_TAIL.match(code, at + len(word)):
                return True
            at = code.find(word, at + 1)
    return False


def may_hold_templates(code: str, low: str | None = None) -> bool:
    """The cheap test before ``ast.parse``: could this module hold a prompt template that a
    rule can speak of? A template's shape or use, and a word of the evaluator's side or of a
    rubric somewhere (every template rule needs a judge's template or a rubric variable)."""
    if not (any(w in code for w in _SHAPE_WORDS) or _assigned(code)
            or (('"content"' in code or "'content'" in code) and "role" in code)):
        return False
    low = code.lower() if low is None else low  # (the caller's, when it has it)
    return any(w in low for w in RULE_WORDS)


@dataclass
class _Cand:
    """A candidate string: its node, the name it is bound to and how it is used."""

    node: ast.expr
    name: str
    scope: str
    uses: list[str] = field(default_factory=list)
    dialect: str = ""  # forced by the use: format | dollar | percent | jinja | mustache
    shaped: bool = False  # named like a prompt
    grouped: bool = False  # a message of a conversation: read with the others
    # the other messages of one conversation (a ChatPromptTemplate, a messages list)
    parts: list[ast.expr] = field(default_factory=list)


class _Finder:
    """One walk over the tree: string bindings, and the uses that make strings templates."""

    def __init__(self, tree: ast.Module, code: str) -> None:
        self.tree = tree
        self.hot = _hot_lines(code)
        self.imports: dict[str, str] = {}
        self.bound: dict[tuple[str, str], _Cand] = {}
        self.direct: list[_Cand] = []
        self.signatures: list[ast.ClassDef] = []
        self.by_node: dict[int, _Cand] = {}
        self.by_class_attr: dict[str, _Cand] = {}  # class attributes by bare name
        self.groups: list[tuple[list[ast.expr], str, str, str, str]] = []
        self.target = ""  # the name the statement being walked assigns
        self.target_value: ast.expr | None = None  # ... and the value it assigns
        self.grouped_dicts: set[int] = set()

    def run(self) -> list[_Cand]:
        self._walk(self.tree.body, "<module>")
        seen: set[int] = set()
        out: list[_Cand] = []
        for cand in [*self.bound.values(), *self.direct]:
            if id(cand.node) in seen or not (cand.uses or cand.shaped) or cand.grouped:
                continue
            seen.add(id(cand.node))
            out.append(cand)
        for members, name, scope, how, dialect in self.groups:
            nodes = [n for n in (self._member(m, scope) for m in members) if n is not None]
            if nodes:
                out.append(_Cand(nodes[0], name, scope, uses=[how], dialect=dialect,
                                 parts=nodes[1:]))
        return out

    def _member(self, node: ast.expr, scope: str) -> ast.expr | None:
        """A message's text: the literal, or the string a name is bound to."""
        node = _unwrap(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                node.func.attr == "format"):
            node = _unwrap(node.func.value)
        lit = _string_node(node)
        if lit is not None:
            return lit
        cand = self._lookup(node, scope)
        if cand is not None and hasattr(cand.node, "lineno"):
            cand.grouped = True
            return cand.node
        return None

    def _lookup(self, node: ast.expr, scope: str) -> _Cand | None:
        path = dotted(node)
        if not path:
            return None
        name = path.rsplit(".", 1)[-1]
        for key in ((scope, name), ("<module>", name)):
            if key in self.bound:
                return self.bound[key]
        return self.by_class_attr.get(name)

    def _walk(self, body: list[ast.stmt], scope: str) -> None:
        for stmt in body:
            self._stmt(stmt, scope)

    def _stmt(self, stmt: ast.stmt, scope: str) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not self._hot(stmt):
                return  # no line of it uses a prompt: its locals cannot be one
            inner = stmt.name if scope in ("<module>",) or scope.startswith("<class") else (
                f"{scope}.{stmt.name}")
            if scope.startswith("<class "):
                inner = f"{scope[7:-1]}.{stmt.name}"
            self._walk(stmt.body, inner)
            return
        if isinstance(stmt, ast.ClassDef):
            if any(self._qualified(b).split(".")[0] == "dspy" and
                   self._qualified(b).endswith("Signature") for b in stmt.bases):
                self.signatures.append(stmt)
            self._walk(stmt.body, f"<class {stmt.name}>")
            return
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                self.imports[a.asname or a.name.split(".")[0]] = a.name if a.asname else (
                    a.name.split(".")[0])
        elif isinstance(stmt, ast.ImportFrom):
            for a in stmt.names:
                self.imports[a.asname or a.name] = f"{stmt.module or ''}.{a.name}"
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            value = stmt.value
            self.target = next((n for n in map(_target_name, targets) if n), "")
            self.target_value = _unwrap(value)
            if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mod):
                value = value.left  # NAME = "... %(x)s ..." % values
            text = _string_node(value)
            for t in targets:
                name = _target_name(t)
                if name and text is not None and not _extends_itself(text, name):
                    self._bind(name, scope, text)
        elif isinstance(stmt, ast.Return) and stmt.value is not None and scope != "<module>":
            # def build_judge_prompt(...): return f"""..."""
            name = scope.rsplit(".", 1)[-1]
            text = _string_node(stmt.value)
            if text is not None and set(name_tokens(name)) & _PROMPT_HEADS:
                self._bind(name, scope, text)
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            self.target, self.target_value = "", None
        hot = self._hot(stmt)
        if not hot:
            # No line of it uses a prompt, so neither do the statements inside it: only their
            # bindings matter (the loop below would visit the same ones, in the same order,
            # after walking every expression node just to skip it).
            for name in stmt._fields:
                if name in _BLOCKS:
                    for sub in getattr(stmt, name):
                        if isinstance(sub, ast.stmt):
                            self._stmt(sub, scope)
                        else:  # an except handler or a match case
                            for inner in sub.body:
                                self._stmt(inner, scope)
            return
        for node in ast.iter_child_nodes(stmt):
            if isinstance(node, ast.stmt):
                self._stmt(node, scope)
            elif isinstance(node, ast.expr):
                if hot:
                    self._expr(node, scope)
            else:  # handlers, match cases, comprehensions, keywords, withitems
                for sub in ast.iter_child_nodes(node):
                    if isinstance(sub, ast.stmt):
                        self._stmt(sub, scope)
                    elif isinstance(sub, ast.expr) and hot:
                        self._expr(sub, scope)

    def _hot(self, stmt: ast.stmt) -> bool:
        """Does a line of this statement hold a word of a prompt's use?"""
        i = bisect.bisect_left(self.hot, stmt.lineno)
        return i < len(self.hot) and self.hot[i] <= (stmt.end_lineno or stmt.lineno)

    def _bind(self, name: str, scope: str, node: ast.expr) -> None:
        tokens = name_tokens(name)
        shaped = bool(set(tokens) & _PROMPT_HEADS) or (
            name.isupper() and tokens[:1] == [_SYSTEM]) or (
            tokens[-1:] == [_SYSTEM] and len(tokens) > 1)
        key = (scope, name)
        old = self.bound.get(key)
        cand = _Cand(node, name, scope, shaped=shaped)
        if old is not None and old.uses:
            cand.uses, cand.dialect = old.uses, old.dialect
        self.bound[key] = cand
        self.by_node[id(node)] = cand
        if scope.startswith("<class"):
            self.by_class_attr[name] = cand

    def _expr(self, node: ast.expr, scope: str) -> None:
        stack: list[ast.AST] = [node]
        while stack:
            cur = stack.pop()
            if type(cur) in _LEAVES:  # nothing below them is a use (a name's context node)
                continue
            if isinstance(cur, ast.Call):
                self._call(cur, scope)
            elif isinstance(cur, ast.BinOp) and isinstance(cur.op, ast.Mod):
                self._use(cur.left, scope, "formatted with %", "percent")
            elif isinstance(cur, ast.Dict):
                self._message(cur, scope)
            elif isinstance(cur, ast.List) and len(cur.elts) > 1 and all(
                    _message_content(e) is not None for e in cur.elts):
                self._group(cur, [_message_content(e) for e in cur.elts], scope,
                            "a messages list", "")
                self.grouped_dicts.update(id(e) for e in cur.elts)
            elif isinstance(cur, (ast.Lambda,)):
                continue
            stack.extend(ast.iter_child_nodes(cur))

    def _qualified(self, func: ast.expr) -> str:
        path = dotted(func)
        if not path:
            return ""
        root, _, rest = path.partition(".")
        full = self.imports.get(root, root)
        return f"{full}.{rest}" if rest else full

    def _call(self, call: ast.Call, scope: str) -> None:
        func = call.func
        last = func.attr if isinstance(func, ast.Attribute) else (
            func.id if isinstance(func, ast.Name) else "")
        qual = self._qualified(func)
        parts = qual.split(".")
        if last == "format" and isinstance(func, ast.Attribute) and call.keywords:
            self._use(func.value, scope, "formatted with .format", "format", owner=call)
        elif last == "substitute" or last == "safe_substitute":
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
                self._call(func.value, scope)
        elif qual in ("string.Template",) or (last == "Template" and "string" in parts):
            if call.args:
                self._use(call.args[0], scope, "wrapped by string.Template", "dollar", owner=call)
        elif (qual.startswith("jinja2.") and last == "Template") or last == "from_string":
            if call.args:
                self._use(call.args[0], scope, "rendered by jinja2", "jinja", owner=call)
        elif set(parts) & _LC_TEMPLATES:
            fmt = _kw_text(call, "template_format") or "f-string"
            dialect = {"jinja2": "jinja", "mustache": "mustache"}.get(fmt, "format")
            where = next(p for p in parts if p in _LC_TEMPLATES)
            if last == "from_messages":
                for arg in call.args[:1]:
                    if isinstance(arg, (ast.List, ast.Tuple)):
                        members = [m for m in map(_lc_content, arg.elts) if m is not None]
                        self._group(call, members, scope, f"messages of a {where}",
                                    dialect)
            else:
                args = [*call.args[:1], *[k.value for k in call.keywords if k.arg == "template"]]
                for arg in args:
                    self._use(arg, scope, f"wrapped by {where}", dialect, owner=call)
        elif last in _LC_MESSAGES:
            for arg in [*call.args[:1], *[k.value for k in call.keywords if k.arg == "content"]]:
                self._use(arg, scope, f"passed as {last} content", "", owner=call)
        for kw in call.keywords:
            if kw.arg in _PROMPT_KWARGS and kw.arg != "template":
                self._use(kw.value, scope, f"passed as {kw.arg}=", "")

    def _group(self, owner: ast.expr, members: Sequence[ast.expr | None], scope: str,
               how: str, dialect: str) -> None:
        """The messages of one conversation: one prompt, whose role any message may state."""
        found = [m for m in members if m is not None]
        if found:
            self.groups.append((found, self._name_of(owner), scope, how, dialect))

    def _name_of(self, node: ast.expr) -> str:
        """The name a prompt is assigned to (``judge = ChatPromptTemplate...``), if any: a
        prompt inside a call (``resp = client.create(messages=[...])``) is not ``resp``."""
        return self.target if node is self.target_value else ""

    def _message(self, node: ast.Dict, scope: str) -> None:
        keys = [str_const(k) if k is not None else None for k in node.keys]
        if "role" in keys and "content" in keys and id(node) not in self.grouped_dicts:
            value = node.values[keys.index("content")]
            role = str_const(node.values[keys.index("role")]) or "chat"
            self._use(value, scope, f"a '{role}' message content", "")

    def _use(self, node: ast.expr, scope: str, how: str, dialect: str,
             owner: ast.expr | None = None) -> None:
        """``node`` is used as a prompt (``how``); ``owner`` is the call that uses it."""
        node = _unwrap(node)
        if isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and dotted(node)):
            path = dotted(node) or ""
            name = path.rsplit(".", 1)[-1]
            cand = self._lookup(node, scope)
            if cand is not None:
                cand.uses.append(how)
                cand.dialect = cand.dialect or dialect
                return
            # bound later in the module (a function above the constant): remember the use
            pending = _Cand(ast.Constant(""), name, "<module>", uses=[how], dialect=dialect)
            self.bound.setdefault(("<module>", name), pending)
            return
        lit = _string_node(node)
        bound = self.by_node.get(id(lit)) if lit is not None else None
        if bound is not None:  # NAME = "..." % values: the bound string is the one used
            bound.uses.append(how)
            bound.dialect = bound.dialect or dialect
        elif lit is not None:
            self.direct.append(_Cand(node, self._name_of(owner or node), scope, uses=[how],
                                     dialect=dialect))


def _hot_lines(code: str) -> list[int]:
    """The sorted numbers of the lines that hold a word of :data:`_HOT_WORDS`."""
    offsets: set[int] = set()
    for word in _HOT_WORDS:
        at = code.find(word)
        while at != -1:
            offsets.add(at)
            at = code.find(word, at + 1)
    lines: list[int] = []
    line, last = 1, 0
    for off in sorted(offsets):  # each line: 1 + the newlines before it, counted onward
        line += code.count("\n", last, off)
        last = off
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def _message_content(node: ast.expr) -> ast.expr | None:
    """``{"role": ..., "content": X}`` -> X."""
    if not isinstance(node, ast.Dict):
        return None
    keys = [str_const(k) if k is not None else None for k in node.keys]
    if "role" in keys and "content" in keys:
        return node.values[keys.index("content")]
    return None


def _lc_content(node: ast.expr) -> ast.expr | None:
    """``("system", X)`` -> X; ``SystemMessage(content=X)`` -> X."""
    if isinstance(node, ast.Tuple) and len(node.elts) == 2 and str_const(node.elts[0]):
        return node.elts[1]
    if isinstance(node, ast.Call) and node.args:
        return node.args[0]
    if isinstance(node, ast.Call):
        return next((k.value for k in node.keywords if k.arg in ("content", "template")), None)
    return None


def _unwrap(node: ast.expr) -> ast.expr:
    """``textwrap.dedent(X)``, ``X.strip()``: the string inside."""
    while isinstance(node, ast.Call):
        func = node.func
        last = func.attr if isinstance(func, ast.Attribute) else (
            func.id if isinstance(func, ast.Name) else "")
        if last not in _DEDENT:
            break
        if node.args:
            node = node.args[0]
        elif isinstance(func, ast.Attribute):
            node = func.value
        else:
            break
    return node


def _string_node(node: ast.expr) -> ast.expr | None:
    node = _unwrap(node)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node
    if isinstance(node, ast.JoinedStr):
        return node
    return None


def _target_name(t: ast.expr) -> str | None:
    if isinstance(t, ast.Name):
        return t.id
    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in (
            "self", "cls"):
        return t.attr
    return None


def _kw_text(call: ast.Call, name: str) -> str | None:
    for kw in call.keywords:
        if kw.arg == name:
            return str_const(kw.value)
    return None


# ---------------------------------------------------------------------------- source mapping


class _Source:
    """The module's text, for mapping string literals back to lines and columns."""

    def __init__(self, code: str, script: bool = False) -> None:
        self.code = code
        self.script = script  # TypeScript/JavaScript literals (see _script_text)
        self.lines = code.split("\n")
        # where each line starts: the lengths before it, each with its newline
        self.starts: list[int] = list(accumulate(map(len, self.lines[:-1]),
                                                 lambda at, n: at + n + 1, initial=0))

    def offset(self, line: int, byte_col: int) -> int:
        if not 0 < line <= len(self.lines):
            return len(self.code)
        text = self.lines[line - 1]
        return self.starts[line - 1] + char_column(text, byte_col)

    def linecol(self, offset: int) -> tuple[int, int]:
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.starts[lo]


_QUOTES = ('"""', "'''", '"', "'")
# Nodes whose children hold no call, formatting or message: a walk stops at them.
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del})
_SIMPLE_ESC = {"\n": "", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f",
               "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _tokens(code: str, start: int, end: int) -> Iterator[tuple[str, int, int, int]]:
    """The string tokens between ``start`` and ``end``: (prefix, body start, body end, quote
    length). Whitespace, comments, parentheses and line continuations between them are
    skipped; anything else stops the scan."""
    i = start
    while i < end:
        c = code[i]
        if c in " \t\r\n\\()":
            i += 1
            continue
        if c == "#":
            nl = code.find("\n", i)
            i = end if nl == -1 else nl + 1
            continue
        j = i
        while j < end and code[j].isalpha() and j - i < 3:
            j += 1
        quote = next((q for q in _QUOTES if code.startswith(q, j)), None)
        if quote is None:
            return
        prefix = code[i:j].lower()
        body = j + len(quote)
        k = body
        while k < end:  # to the closing quote; a backslash takes the next character along
            close = code.find(quote, k)
            escape = code.find("\\", k, end)
            if escape != -1 and (close == -1 or escape < close):
                k = escape + 2
                continue
            k = close if close != -1 and close < end else end
            break
        yield prefix, body, k, len(quote)
        i = k + len(quote)


def _decode(code: str, prefix: str, start: int, end: int,
            text: list[str], where: list[int]) -> None:
    """Append the characters a token's body stands for, each with its source offset."""
    raw = "r" in prefix
    i = start
    while i < end:
        # the characters up to the next carriage return or escape stand for themselves
        stop = code.find("\r", i, end)
        escape = -1 if raw else code.find("\\", i, end)
        if escape != -1 and (stop == -1 or escape < stop):
            stop = escape
        if stop == -1:
            stop = end
        if stop > i:
            text.extend(code[i:stop])
            where.extend(range(i, stop))
            i = stop
            continue
        c = code[i]
        if c == "\r":
            if not code.startswith("\r\n", i):
                text.append(c)
                where.append(i)
            i += 1
            continue
        nxt = code[i + 1] if i + 1 < end else ""
        if nxt == "\r" and code.startswith("\r\n", i + 1):
            i += 3
            continue
        if nxt in _SIMPLE_ESC:
            val = _SIMPLE_ESC[nxt]
            if val:
                text.append(val)
                where.append(i)
            i += 2
            continue
        m = re.match(r"[0-7]{1,3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}",
                     code[i + 1:min(end, i + 12 + 64)])
        if m is not None:
            try:
                val = (code[i:i + 1 + m.end()]).encode("latin-1", "backslashreplace").decode(
                    "unicode_escape")
            except (UnicodeDecodeError, UnicodeEncodeError):
                val = "?"
            text.append(val)
            where.append(i)
            i += 1 + m.end()
            continue
        text.append("\\")
        where.append(i)
        i += 1


@dataclass
class _Text:
    """A template's text and, for each character, its offset in the module."""

    text: str
    where: list[int]
    exact: bool  # False: the mapping could not be verified, positions are the literal's start
    # spans of messages that hold only variables, no instructions: the message boundary
    # delimits them
    alone: list[tuple[int, int]] = field(default_factory=list)


def _literal_text(src: _Source, node: ast.expr) -> _Text | None:
    start = src.offset(node.lineno, node.col_offset)
    end_line = node.end_lineno or node.lineno
    end = src.offset(end_line, node.end_col_offset or 0)
    chars: list[str] = []
    where: list[int] = []
    if src.script:
        return _script_text(src, node, start, end)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        for prefix, b, e, _ in _tokens(src.code, start, end):
            _decode(src.code, prefix, b, e, chars, where)
        text = "".join(chars)
        if text == node.value:
            return _Text(text, where, True)
        return _Text(node.value, [start] * len(node.value), False)
    if isinstance(node, ast.JoinedStr):
        return _fstring_text(src, node, start, end)
    return None


def _script_text(src: _Source, node: ast.expr, start: int, end: int) -> _Text | None:
    """A TypeScript/JavaScript string or template literal (``'...'``, ``"..."``,
    `` `...${x}...` ``) as format text, each character at its offset in the script."""
    code = src.code
    if end - start < 2 or code[start] not in "'\"`" or code[end - 1] != code[start]:
        return None
    chars: list[str] = []
    where: list[int] = []
    fields: list[int] = []
    marks: set[int] = set()
    i, e = start + 1, end - 1
    template = code[start] == "`"
    while i < e:
        if template and code.startswith("${", i):
            fields.append(i + 2)
            _add_field(chars, where, marks, i + 2)
            i = _field_end(code, i + 2, e)
            continue
        seg = i
        while seg < e and not (template and code.startswith("${", seg)):
            seg += 1
        n = len(chars)
        _decode(code, "", i, seg, chars, where)
        if isinstance(node, ast.JoinedStr):  # literal braces in format text
            for k in range(len(chars) - 1, n - 1, -1):
                if chars[k] in "{}":
                    chars.insert(k, chars[k])
                    where.insert(k, where[k])
        i = max(seg, i + 1)
    if isinstance(node, ast.Constant):  # a plain string: its braces are the template's own
        text = "".join(chars)
        if isinstance(node.value, str) and text == node.value:
            return _Text(text, where, True)
        return None
    if not isinstance(node, ast.JoinedStr):
        return None
    values = [v for v in node.values if isinstance(v, ast.FormattedValue)]
    if len(values) != len(fields):
        return None
    text, out_where = _with_fields(
        chars, where, marks, values,
        lambda _expr, name, w: w if code.startswith(name.split(".")[0], w) else None)
    return _Text(text, out_where, True)


def _extends_itself(node: ast.expr, name: str) -> bool:
    """``prompt = f"{prompt}\nAlso: ..."``: an f-string whose only field is the name it is
    assigned to adds fixed text to a prompt made elsewhere (loaded from a config); its one
    field is that prompt, not a slot a caller fills, so it is no template."""
    if not isinstance(node, ast.JoinedStr):
        return False
    fields = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
    return bool(fields) and all(isinstance(f, ast.Name) and f.id == name for f in fields)


def _fstring_text(src: _Source, node: ast.JoinedStr, start: int, end: int) -> _Text:
    """An f-string as format text: ``{name}`` for each simple field, in source order."""
    chars: list[str] = []
    where: list[int] = []
    fields: list[int] = []  # source offset of each top-level replacement field's expression
    marks: set[int] = set()  # where in ``chars`` each field stands
    for prefix, b, e, _ in _tokens(src.code, start, end):
        if "f" not in prefix:
            n = len(chars)
            _decode(src.code, prefix, b, e, chars, where)
            # a plain part's braces are literal: escape them in the format text
            for k in range(len(chars) - 1, n - 1, -1):
                if chars[k] in "{}":
                    chars.insert(k, chars[k])
                    where.insert(k, where[k])
            continue
        i = b
        while i < e:
            c = src.code[i]
            if c in "{}" and src.code.startswith(c * 2, i):
                chars.extend((c, c))
                where.extend((i, i + 1))
                i += 2
                continue
            if c == "{":
                fields.append(i + 1)
                _add_field(chars, where, marks, i + 1)
                i = _field_end(src.code, i + 1, e)
                continue
            seg_end = i
            while seg_end < e and src.code[seg_end] not in "{}":
                seg_end += 1
            _decode(src.code, prefix, i, seg_end, chars, where)
            i = max(seg_end, i + 1)
    values = [v for v in node.values if isinstance(v, ast.FormattedValue)]
    exact = len(values) == len(fields)
    joined, out_where = _with_fields(chars, where, marks, values,
                                     lambda expr, name, _w: _name_offset(src, expr, name))
    if not exact:
        return _Text(joined, [start] * len(joined), False)
    return _Text(joined, out_where, True)


def _field_end(code: str, at: int, end: int) -> int:
    """Past the brace that closes a replacement field whose expression starts at ``at``."""
    depth, j = 1, at
    while j < end and depth:
        if code[j] in "{[(":
            depth += 1
        elif code[j] in "}])":
            depth -= 1
        j += 1
    return j


def _add_field(chars: list[str], where: list[int], marks: set[int], at: int) -> None:
    """A field's place among the decoded characters (known by its index: a decoded "\0"
    is text, not a field), its expression at ``at``."""
    marks.add(len(chars))
    chars.append("\0")
    where.append(at)


def _with_fields(chars: list[str], where: list[int], marks: set[int],
                 values: list[ast.FormattedValue],
                 name_at: Callable[[ast.expr, str, int], int | None]) -> tuple[str, list[int]]:
    """A literal's decoded characters as format text: ``{name}`` where each field stands (the
    indexes in ``marks``; ``{_}`` for a field that is not one name), every character with its
    offset. ``name_at`` says where a field's name stands in the source (None: at the field)."""
    out: list[str] = []
    out_where: list[int] = []
    k = 0
    for at_char, (ch, w) in enumerate(zip(chars, where, strict=True)):
        if at_char not in marks:
            out.append(ch)
            out_where.append(w)
            continue
        val = values[k] if k < len(values) else None
        k += 1
        names = _field_names(val.value) if val is not None else []
        label = "{" + names[0] + "}" if len(names) == 1 else "{_}"
        out.append(label)
        at = name_at(val.value, names[0], w) if val is not None and len(names) == 1 else None
        out_where.extend([w] + [at if at is not None else w] * (len(label) - 1))
    return "".join(out), out_where


def _name_offset(src: _Source, expr: ast.expr, path: str) -> int | None:
    """Where the field's variable stands in the source, when ``ast`` says so and the text
    there bears it out (nested positions in f-strings are unreliable before Python 3.12)."""
    root = path.split(".")[0].split("[")[0]
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id == root and hasattr(node, "lineno"):
            off = src.offset(node.lineno, node.col_offset)
            if src.code.startswith(root, off):
                return off
    return None


def _field_names(expr: ast.expr) -> list[str]:
    """What an f-string field shows: its access path, or the paths a call formats."""
    path = _access_path(expr)
    if path:
        return [path]
    out: list[str] = []
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and \
            expr.func.id in _MEASURES:
        return []  # {len(history)} shows a count, never the history itself
    if isinstance(expr, ast.Call):
        for arg in [*expr.args, *(k.value for k in expr.keywords)]:
            out.extend(_field_names(arg))
        if isinstance(expr.func, ast.Attribute) and not isinstance(expr.func.value, ast.Name):
            out.extend(_field_names(expr.func.value))
        elif isinstance(expr.func, ast.Attribute) and isinstance(expr.func.value, ast.Name) and (
                expr.func.attr not in ("join", "format", "dumps")):
            out.append(expr.func.value.id)
    return out


# Builtins whose result says how big or what type a value is, not what it holds.
_MEASURES = frozenset({"len", "type", "id", "bool", "hash", "isinstance", "callable"})


def _access_path(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = _access_path(expr.value)
        return f"{base}.{expr.attr}" if base else None
    if isinstance(expr, ast.Subscript):
        base = _access_path(expr.value)
        key = expr.slice
        if base and isinstance(key, ast.Constant) and isinstance(key.value, (str, int)):
            return f"{base}[{key.value}]"
    return None


# ---------------------------------------------------------------------------- templates


def _convert(text: str, pattern: re.Pattern[str]) -> tuple[str, list[int]]:
    """``$x`` / ``${x}`` / ``%(x)s`` rewritten as ``{x}`` (braces escaped), with the offset in
    ``text`` of each character of the result, so one format parser serves every dialect."""
    out: list[str] = []
    where: list[int] = []
    last = 0

    def plain(upto: int) -> None:
        for i in range(last, upto):
            c = text[i]
            piece = c * 2 if c in "{}" else c
            out.append(piece)
            where.extend([i] * len(piece))

    for m in pattern.finditer(text):
        plain(m.start())
        last = m.end()
        name = next((g for g in m.groups() if g and g not in ("$",)), None)
        if name is None or not name.isidentifier():
            out.append(m.group(0)[0])
            where.append(m.start())
            continue
        piece = "{" + name + "}"
        out.append(piece)
        name_at = text.index(name, m.start())
        where.extend([m.start()] + [name_at + i for i in range(len(name))] + [m.end() - 1])
    plain(len(text))
    return "".join(out), where


def _dialect(cand: _Cand, text: str) -> str:
    if cand.dialect:
        return cand.dialect
    if isinstance(cand.node, ast.JoinedStr):
        return "format"
    if has_format_fields(text):
        return "format"
    if "{{" in text or "{%" in text:
        return "jinja"
    return "none"


def _parse(dialect: str, text: str) -> tuple[TemplateFacts, tuple[str, list[int]] | None]:
    """Template facts of ``text`` and, for converted dialects, the converted text with the
    offset in ``text`` of each of its characters."""
    if dialect in ("dollar", "percent"):
        conv, where = _convert(text, _DOLLAR if dialect == "dollar" else _PERCENT)
        return parse_format(conv), (conv, where)
    if dialect in ("jinja", "mustache"):
        try:
            if dialect == "mustache":
                from evallint.frontends.mustache_front import parse_mustache

                return parse_mustache(text), None
            from evallint.frontends.jinja_front import parse_jinja

            return parse_jinja(text), None
        except ParseError:
            return TemplateFacts(dialect="none"), None
    if dialect == "format":
        return parse_format(text), None
    return TemplateFacts(dialect="none"), None


def _role(cand: _Cand, facts: PyPromptFacts, body: str) -> RoleInfo:
    """The string's own name first (a judge noun decides, an activity needs the text's
    support, a generator name yields to a text that evaluates), then what the text states
    directly, then the enclosing function's name with the text's support: the evidence
    prompt files use."""
    tmap = TextMap.of(body)
    content = _content_role(body, tmap)
    if cand.name and makes_eval_artifacts(cand.name):
        return RoleInfo(Role.UNKNOWN, [f"'{cand.name}' makes evaluations"])
    role, token = prompt_name_role(cand.name) if cand.name else (Role.UNKNOWN, "")
    verb = False
    if role is Role.UNKNOWN and cand.name and function_role(cand.name) is Role.EVALUATOR:
        # "JudgeAnswer", "score_answer_prompt": words of both sides, the judging verb first
        # (the text must bear it out); "GenerateRubric" stays unknown
        role, token, verb = Role.EVALUATOR, name_tokens(cand.name)[0], True
    note = f"name '{cand.name}' token '{token}'"
    if role is Role.GENERATOR:
        # "ABSOLUTE_REFINE_PROMPT" that grades ("###Response to evaluate:"): a name alone
        # never outweighs a text that sets the evaluator's task.
        if (content is not None and content.role is Role.EVALUATOR) or labelled_subjects(
                facts, body):
            return RoleInfo(Role.UNKNOWN, [f"{note}, but the text evaluates"])
        return RoleInfo(role, [note])
    if role is Role.EVALUATOR:
        # In code a constant's name is a label, not a file's stated purpose: even a judge
        # noun ("ASSISTANT_EVALUATOR_PROMPT" that simulates the user) needs the text to evaluate
        support = _evaluates(facts, body, tmap)
        if support is not None:
            why = [note] if not verb and _names_the_judge(cand.name, token) else [note, support]
            return RoleInfo(role, why)
    if content is not None:
        return content
    labelled = [v for v in facts.template.variables
                if tmap.labelled(tmap.offset(v.pos.line, v.pos.column))]
    view = PyPromptFacts(path=facts.path, kind=facts.kind,
                         template=TemplateFacts(dialect="format", variables=labelled))
    judged = labelled_subjects(view, body) if labelled else []
    if judged:  # "###Response to evaluate:" over {response}: the text hands over a candidate
        return RoleInfo(Role.EVALUATOR, [f"a label says '{judged[0]}' is to be evaluated"])
    scope = cand.scope if cand.scope not in ("<module>", "") else ""
    scope_name = scope.rsplit(".", 1)[-1]
    if scope_name and not makes_eval_artifacts(scope_name):
        role, token = prompt_name_role(scope_name)
        note = f"in function '{scope}' (token '{token}')"
        facts.by_scope = True
        # a function's name is weak evidence: its text must evaluate, and what it evaluates
        # must be a candidate's text or end in a score ("assess_severity" of the weather is
        # no judge)
        candidate = any(v.name.lower() in _CANDIDATE_NAMES for v in facts.template.variables)
        if role is Role.EVALUATOR and (candidate or asks_score(body)):
            support = _evaluates(facts, body, tmap)
            if support is not None:
                return RoleInfo(role, [note, support])
        elif role is Role.GENERATOR:
            return RoleInfo(role, [note])
    return RoleInfo(Role.UNKNOWN, [])


_WORD = re.compile(r"[A-Za-z]{2,}")
_FIELDS = re.compile(r"\{[^{}\n]*\}")


def _prose(text: str) -> bool:
    """Instructions in words, not a query, a format string or a join of values: six words
    or more outside the placeholders."""
    return len(_WORD.findall(_FIELDS.sub(" ", text[:2000]))) >= 6


def find_templates(tree: ast.Module, code: str, rel: str, pos_map: PosMap,
                   script: bool = False) -> list[PyPromptFacts]:
    """The prompt templates of one module whose role is stated, with positions in the file
    (``script``: the tree is a TypeScript/JavaScript file's, lowered)."""
    src = _Source(code, script)
    out: list[PyPromptFacts] = []
    finder = _Finder(tree, code)
    for cand in finder.run():
        if not hasattr(cand.node, "lineno"):
            continue
        lit = _literal_text(src, cand.node)
        alone: list[str] = []
        for part in cand.parts:
            more = _literal_text(src, part)
            whole = _ALONE.fullmatch(more.text.strip()) if more is not None else None
            if whole is not None:
                alone.append(whole.group(1))
            if lit is not None and more is not None:
                begin = len(lit.text) + 2
                data = not _WORD.search(_FIELDS.sub(" ", more.text))
                spans = [*lit.alone, (begin, begin + len(more.text))] if data else lit.alone
                lit = _Text(lit.text + "\n\n" + more.text,
                            lit.where + [lit.where[-1] if lit.where else 0] * 2 + more.where,
                            lit.exact and more.exact, spans)
        if lit is None or not lit.text.strip():
            continue
        facts = _prompt_facts(cand, lit, src, rel, pos_map)
        if facts is not None:
            facts.handed = list(dict.fromkeys([*alone, *facts.handed]))
            out.append(facts)
    for cls in finder.signatures:
        sig = _signature(cls, finder, src, rel, pos_map)
        if sig is not None:
            out.append(sig)
    return out


def _signature(cls: ast.ClassDef, finder: _Finder, src: _Source, rel: str,
               pos_map: PosMap) -> PyPromptFacts | None:
    """A dspy ``Signature``: its docstring is the instruction, each ``InputField`` a variable
    the model sees (dspy renders every field under its own ``[[ ## name ## ]]`` header, so
    none is undelimited)."""
    doc = ast.get_docstring(cls) or ""
    variables: list[TemplateVar] = []
    for stmt in cls.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        if not isinstance(target, ast.Name) or not isinstance(value, ast.Call):
            continue
        if finder._qualified(value.func).rsplit(".", 1)[-1] != "InputField":
            continue
        line, col = src.linecol(src.offset(target.lineno, target.col_offset))
        variables.append(TemplateVar(name=target.id, path=(target.id,), pos=pos_map(line, col),
                                     delimited=True))
    start = src.linecol(src.offset(cls.lineno, cls.col_offset))
    facts = PyPromptFacts(path=rel, kind="python", name=cls.name, how="a dspy Signature",
                          start=pos_map(*start),
                          template=TemplateFacts(dialect="dspy", variables=variables))
    cand = _Cand(ast.Constant(doc), cls.name, "<module>", uses=["a dspy Signature"])
    body = doc + "\n" + "\n".join(f"{v.name}: {{{v.name}}}" for v in variables)
    facts.role = _role(cand, facts, body)
    if facts.role.role is Role.UNKNOWN:
        return None
    facts.role.evidence = [_LINE_NOTE.sub("", e) for e in facts.role.evidence]
    facts.role.evidence.append(f"dspy Signature {cls.name}")
    if facts.role.is_evaluator:
        facts.subjects = evaluated_subjects(doc)
        # a field's name is its label: "response_A", "program_output" name the candidate
        judged = _CANDIDATE_NAMES | _judged_words(doc) | set(facts.subjects)
        facts.handed = ["_".join(name_tokens(v.name)) for v in variables
                        if set(name_tokens(v.name)) & judged]
    return facts


def _prompt_facts(cand: _Cand, lit: _Text, src: _Source, rel: str,
                  pos_map: PosMap) -> PyPromptFacts | None:
    """Parse, infer the role (on the template's own text), then move every position into the
    module: a variable to its placeholder, evidence lines to the file's lines."""
    def at(offset: int) -> Pos:
        line, col = src.linecol(offset)
        return pos_map(line, col)

    dialect = "format" if isinstance(cand.node, ast.JoinedStr) else _dialect(cand, lit.text)
    template, conv = _parse(dialect, lit.text)
    if not template.variables:
        return None  # a fixed text: nothing reaches it, and a rule speaks only of templates
    how = cand.uses[0] if cand.uses else "named like a prompt"
    facts = PyPromptFacts(path=rel, kind="python", name=cand.name or cand.scope, how=how,
                          start=at(src.offset(cand.node.lineno, cand.node.col_offset)),
                          template=template)
    facts.role = _role(cand, facts, lit.text)
    if facts.role.role is Role.UNKNOWN or not _prose(lit.text):
        return None
    tmap = TextMap.of(lit.text)
    if facts.role.is_evaluator:
        subjects = evaluated_subjects(lit.text) + process_subjects(facts, lit.text)
        if conv is None:
            subjects += labelled_subjects(facts, lit.text)
            strong, facts.handed = _labelled_candidates(template, lit.text, set(subjects))
            subjects += strong
        facts.subjects = list(dict.fromkeys(subjects))
        facts.conversation = conversation_inputs(facts, lit.text)
        facts.references = reference_names(lit.text, template if conv is None else None)
    conv_map = TextMap.of(conv[0]) if conv is not None else tmap
    for var in template.variables:
        off = conv_map.offset(var.pos.line, var.pos.column)
        if conv is not None:
            off = conv[1][min(off, len(conv[1]) - 1)] if conv[1] else 0
        if any(b <= off < e for b, e in lit.alone):
            var.delimited = True
        var.pos = at(lit.where[min(off, len(lit.where) - 1)] if lit.where else 0)

    def file_line(m: re.Match[str]) -> str:
        off = tmap.offset(int(m.group(1)), 1)
        return f"(line {at(lit.where[min(off, len(lit.where) - 1)]).line})" if lit.where else ""

    facts.role.evidence = [_LINE_NOTE.sub(file_line, e) for e in facts.role.evidence]
    facts.role.evidence.append(f"Python string {facts.name or '(literal)'}: {how}")
    return facts


def _labelled_candidates(template: TemplateFacts, text: str,
                         subjects: set[str]) -> tuple[list[str], list[str]]:
    """Variables alone under a label that names the candidate or what the prompt evaluates
    ("Drafted Email:" over ``{final_email}`` when it evaluates "the email", "Model
    Prediction: {intent}"): the item under evaluation, whatever the code calls it. First
    those under a one-word candidate label ("Answer:" over ``{draft}``: the label says what
    it is), then the others (a generator-context name still wins over them)."""
    lines = text.split("\n")
    wanted = subjects | _CANDIDATE_NAMES | _judged_words(text)
    tmap = TextMap.of(text)
    strong: list[str] = []
    out: list[str] = []
    for var in template.variables:
        if var.kind != "output" or not 0 < var.pos.line <= len(lines) or not tmap.labelled(
                tmap.offset(var.pos.line, var.pos.column)):
            continue  # a label, not a sentence: "Response:", "[Model Prediction]:"
        label = lines[var.pos.line - 1][:max(0, var.pos.column - 2)]
        if not label.strip(" \t{[]*#:-"):
            above = [ln for ln in lines[:var.pos.line - 1]
                     if ln.strip() and not is_rule_line(ln.strip())]
            label = above[-1] if above else ""
        if not label.rstrip(" \t*").endswith((":", "]")):
            continue
        words = {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in name_tokens(label)}
        # ``{state['response_draft']}``: the value is the state's entry, named by its key
        name = "_".join(name_tokens(var.path[-1] if len(var.path) == 2 else var.name))
        if len(words - _CANDIDATE_MODIFIERS) == 1 and words - _CANDIDATE_MODIFIERS <= \
                _CANDIDATE_NAMES:
            strong.append(name)
        elif words & wanted:
            out.append(name)
    return strong, out


# Words that only say whose or which candidate a label names ("Generated Response:",
# "Model Answer:", "Final Output:"): the label still names the candidate alone.
_CANDIDATE_MODIFIERS = frozenset({"generated", "model", "final", "candidate", "assistant", "ai",
                                  "current", "proposed", "agent", "llm"})


_ALONE = re.compile(r"\{\{?\s*([A-Za-z_]\w*)\s*\}?\}")
_SENTENCE = re.compile(r"[^.!?\n]+")
_EVALUATES = frozenset({"evaluate", "grade", "score", "assess", "rate", "judge", "critique",
                        "review"})


def _judged_words(text: str) -> set[str]:
    """The words of the sentences that set an evaluation task ("Evaluate the depth of
    analysis in the following essay"): a label made of one names what is judged."""
    out: set[str] = set()
    for m in _SENTENCE.finditer(_FIELDS.sub(" ", text)):
        words = [w[:-1] if len(w) > 3 and w.endswith("s") else w
                 for w in name_tokens(m.group())]
        at = next((i for i, w in enumerate(words) if w in _EVALUATES), None)
        if at is None or (words[at + 1:at + 2] and words[at + 1].isdigit()):
            continue  # (no task, or a line of a scale: "Score 0: key term not addressed")
        # up to the first word after the verb that says for what, against what or how it is
        # judged: what is judged ("Evaluate the extracted answer for the key term")
        out.update(words[:at])
        for w in words[at + 1:]:
            if w in _OBJECT_ENDS:
                break
            out.add(w)
    return out - _EVALUATES


# Words that end the object of an evaluation verb: what follows says for what, against what,
# with what or by which measure the object is judged, not what is judged ("in the following
# essay" still names it).
_OBJECT_ENDS = frozenset({"for", "using", "against", "with", "based", "according", "given",
                          "relative", "compared", "regarding"})


_LINE_NOTE = re.compile(r"\(line (\d+)\)")
