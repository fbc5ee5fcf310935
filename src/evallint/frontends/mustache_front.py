"""A mustache / handlebars tokenizer → :class:`TemplateFacts` with exact positions.

Written for linting, not rendering: it keeps every tag's position, follows set-delimiter tags,
matches sections (``{{#x}}…{{/x}}``, handlebars block helpers) and resolves references through
the context stack, so a name used inside ``{{#each steps}}`` is attributed to ``steps``.
Standalone-line whitespace rules only change output, never positions, so they are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evallint.facts import Pos, TemplateFacts, TemplateRef, TemplateVar
from evallint.frontend import ParseError
from evallint.frontends.template_text import TextMap, normalize_newlines

# Block helpers whose argument becomes the new context (handlebars).
_CONTEXT_HELPERS = frozenset({"each", "with"})
_CONDITION_HELPERS = frozenset({"if", "unless"})
_LITERALS = frozenset({"true", "false", "null", "undefined"})
# One token of a tag. It is never looked for right after a blank: _Parser.words gets there only
# by stepping past a position where no token started, and inside a run of blanks that position
# was its first blank (so a run of blanks before something that starts no token, as in
# "{{    =}}", is read once, not once per blank).
_TOKEN = r"""(?<!\s)\s*(?:
        (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<params>as\s+\|[^|]*\|)
      | (?P<sub>\()
      | (?P<close>\))
      | (?P<word>(?:BRACKET[^\s()=\[\]])+(?:=(?!=))?)
    )"""
# A word may hold "[...]" segments. An unclosed "[" is read to the end of the tag, so after the
# tag's last "]" (where no "[" closes) the tokens are read by _EXPR_TOKEN_FLAT, which has no
# segments: a tag of "[[[[" is then read once, not from each of its brackets.
_EXPR_TOKEN = re.compile(_TOKEN.replace("BRACKET", r"\[[^\]]*\]|"), re.X)
_EXPR_TOKEN_FLAT = re.compile(_TOKEN.replace("BRACKET", ""), re.X)


@dataclass
class _Frame:
    """An open section: its closing name, and the context it pushes (if any)."""

    name: str
    pos: Pos
    opener_offset: int
    context: tuple[str, ...] | None = None  # the variable path that became the context
    via: str | None = None
    params: dict[str, tuple[str, ...]] = field(default_factory=dict)  # block params → path
    raw_name: str = ""


@dataclass
class _Word:
    text: str
    offset: int  # absolute offset in the template text


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tmap = TextMap.of(text)
        self.vars: list[TemplateVar] = []
        self.refs: list[TemplateRef] = []
        self.locals: list[str] = []
        self.stack: list[_Frame] = []

    def fail(self, message: str, offset: int) -> ParseError:
        p = self.tmap.pos(offset)
        return ParseError(message, p.line, p.column)

    # ------------------------------------------------------------------ scanning
    def run(self) -> None:
        text = self.text
        otag, ctag = "{{", "}}"
        pos = 0
        while True:
            start = text.find(otag, pos)
            if start < 0:
                break
            inner = start + len(otag)
            default = otag == "{{"
            if default and text.startswith("{{{{", start):
                pos = self.raw_block(start)
                continue
            if (default and text.startswith("{", inner)) or (
                default and text.startswith("~{", inner)
            ):
                brace = text.index("{", inner)
                end = text.find("}}}", brace)
                if end < 0:
                    raise self.fail("unclosed triple-stache tag '{{{'", start)
                self.expression(brace + 1, end, "triple", start)
                pos = end + 3
                continue
            body = inner + 1 if text.startswith("~", inner) else inner
            sigil = text[body: body + 1]
            if sigil == "!":
                long = text.startswith("!--", body)
                closer = "--" + ctag if long else ctag
                end = text.find(closer, body)
                if end < 0:
                    raise self.fail("unclosed comment tag", start)
                pos = end + len(closer)
                continue
            if sigil == "=":
                end = text.find("=" + ctag, body + 1)
                if end < 0:
                    raise self.fail("unclosed set-delimiter tag", start)
                parts = text[body + 1: end].split()
                if len(parts) != 2 or any("=" in p for p in parts):
                    raise self.fail("set-delimiter tag needs two delimiters, like {{=<% %>=}}",
                                    start)
                otag, ctag = parts
                pos = end + 1 + len(ctag)
                continue
            end = text.find(ctag, body)
            if end < 0:
                raise self.fail(f"unclosed tag '{otag}'", start)
            stop = end - 1 if end > body and text[end - 1] == "~" else end
            self.tag(sigil, body, stop, start)
            pos = end + len(ctag)
        if self.stack:
            frame = self.stack[-1]
            raise self.fail(f"section '{frame.raw_name or frame.name}' is never closed "
                            f"(expected '{{{{/{frame.name}}}}}')", frame.opener_offset)

    def raw_block(self, start: int) -> int:
        """Handlebars ``{{{{raw}}}} … {{{{/raw}}}}``: nothing inside is a tag."""
        end = self.text.find("}}}}", start)
        if end < 0:
            raise self.fail("unclosed raw block tag '{{{{'", start)
        name = self.text[start + 4: end].strip()
        if name.startswith("/"):
            return end + 4
        closer = "{{{{/" + name + "}}}}"
        close = self.text.find(closer, end)
        if close < 0:
            raise self.fail(f"raw block '{name}' is never closed", start)
        return close + len(closer)

    # ------------------------------------------------------------------ tags
    def tag(self, sigil: str, body: int, end: int, start: int) -> None:
        inner = body + 1 if sigil in ("#", "^", "/", ">", "&") else body
        if sigil == "/":
            self.close(inner, end, start)
        elif sigil == ">":
            self.partial(inner, end)
        elif sigil == "#":
            self.open_section(inner, end, start)
        elif sigil == "^":
            words = self.words(inner, end)
            if not words:  # handlebars {{^}}: an else
                self.else_()
                return
            self.open_plain(words, start, inverted=True)
        elif sigil == "&":
            self.expression(inner, end, "triple", start)
        else:
            words = self.words(inner, end)
            if words and words[0].text == "else":
                self.else_()
                if len(words) > 2 and words[1].text in _CONDITION_HELPERS:
                    for w in words[2:]:
                        self.value(w, "test")
                return
            self.call(words, "output")

    def expression(self, inner: int, end: int, kind: str, start: int) -> None:
        self.call(self.words(inner, end), kind)

    def words(self, inner: int, end: int) -> list[_Word]:
        out: list[_Word] = []
        segment = self.text[inner:end]
        flat = segment.rfind("]") + 1  # no "[" at or after this closes
        last = len(segment.rstrip())  # nothing but blanks at or after this
        i = 0
        while i < len(segment):
            m = (_EXPR_TOKEN if i < flat else _EXPR_TOKEN_FLAT).match(segment, i)
            if m is None or m.end() == i:
                if i < last:
                    i += 1
                    continue
                break
            kind = m.lastgroup or ""
            text = m.group(kind)
            if kind in ("str", "params", "sub", "close", "word"):
                out.append(_Word(text, inner + m.start(kind)))
            i = m.end()
        return [w for w in out if w.text]

    def call(self, words: list[_Word], kind: str) -> None:
        """``{{x}}`` is a reference; ``{{helper a b k=v}}`` references only its arguments.

        The first word after ``(`` names a helper too (a subexpression).
        """
        if len(words) == 1:
            self.value(words[0], kind)
            return
        helper_next = True
        for w in words:
            if w.text == "(":
                helper_next = True
                continue
            if w.text == ")":
                continue
            if helper_next:
                helper_next = False
                continue
            self.value(w, "arg")

    def value(self, word: _Word, kind: str) -> None:
        text = word.text
        offset = word.offset
        if "=" in text and not text.startswith("["):
            key, _, text = text.partition("=")
            offset += len(key) + 1
            if not text:
                return
        if not (text[0].isalpha() or text[0] in "_@.[") or text in _LITERALS:
            return
        if text.startswith("as ") or (text.startswith("@") and not text.startswith("@root")):
            return
        self.reference(text, offset, kind)

    def reference(self, text: str, offset: int, kind: str) -> None:
        """Resolve a mustache/handlebars path against the open sections and record it."""
        if text.startswith("@root"):
            segments = _segments(text[len("@root"):].lstrip("./"))
            if segments:
                self.record(segments[0], tuple(segments), None, offset, kind)
            return
        ups = 0
        while text.startswith("../"):
            ups += 1
            text = text[3:]
        explicit_this = text in (".", "this") or text.startswith(("this.", "this/", "./"))
        if explicit_this:
            text = text.split(".", 1)[1] if text.startswith("this.") else (
                text[5:] if text.startswith("this/") else text[2:] if text.startswith("./")
                else ""
            )
        segments = _segments(text)
        frames = [f for f in self.stack if f.context is not None or f.params]
        if ups:
            frames = frames[: max(0, len(frames) - ups)]
        if segments and frames:
            for frame in reversed(frames):
                if segments[0] in frame.params:
                    path = frame.params[segments[0]]
                    self.record(path[0], path + tuple(segments[1:]), segments[0], offset, kind)
                    return
        context = next((f for f in reversed(frames) if f.context is not None), None)
        if context is not None and context.context is not None:
            if not explicit_this and segments and segments[0] == context.context[-1]:
                # {{#output}}{{output}}{{/output}}: a lookup that falls back to the outer name
                outer = context.context[:-1]
                path = (*outer, *segments) if outer else tuple(segments)
                self.record(path[0], path, None, offset, kind)
                return
            path = context.context + tuple(segments)
            self.record(path[0], path, context.via, offset, kind)
            return
        if not segments:
            return
        self.record(segments[0], tuple(segments), None, offset, kind)

    def record(self, name: str, path: tuple[str, ...], via: str | None, offset: int,
               kind: str) -> None:
        self.vars.append(TemplateVar(
            name=name, path=path, pos=self.tmap.pos(offset), kind=kind, via=via,
            delimited=self.tmap.delimited(offset),
        ))

    # ------------------------------------------------------------------ sections
    def open_section(self, inner: int, end: int, start: int) -> None:
        text = self.text
        if text.startswith(">", inner):  # partial block {{#> layout}}
            words = self.words(inner + 1, end)
            self.partial(inner + 1, end)
            name = words[0].text if words else ""
            self.push(_Frame(name, self.tmap.pos(start), start, raw_name=name))
            return
        if text.startswith("*", inner):  # decorator block {{#*inline "name"}}
            words = self.words(inner + 1, end)
            name = words[0].text if words else ""
            self.push(_Frame(name, self.tmap.pos(start), start, raw_name=name))
            return
        words = self.words(inner, end)
        if not words:
            raise self.fail("empty section tag", start)
        self.open_plain(words, start, inverted=False)

    def open_plain(self, words: list[_Word], start: int, *, inverted: bool) -> None:
        head = words[0].text
        rest = _drop_helpers(words[1:])
        params = next((w.text for w in rest if w.text.startswith("as ")), None)
        args = [w for w in rest if not w.text.startswith("as ")]
        frame = _Frame(head, self.tmap.pos(start), start, raw_name=head)
        if not args:
            # A mustache section: the variable is tested/iterated and becomes the context.
            before = len(self.vars)
            self.reference(head, words[0].offset, "inverted" if inverted else "section")
            if not inverted and len(self.vars) > before:
                var = self.vars[-1]
                frame.context = var.path
                frame.via = head
        elif head in _CONTEXT_HELPERS:
            before = len(self.vars)
            self.value(args[0], "iter" if head == "each" else "section")
            for w in args[1:]:
                self.value(w, "arg")
            if len(self.vars) > before:
                var = self.vars[-1]
                names = params[3:].strip(" |").split() if params else []
                if names:
                    frame.params[names[0]] = var.path
                    for extra in names[1:]:
                        self.locals.append(extra)
                    self.locals.append(names[0])
                else:
                    frame.context = var.path
                    frame.via = "this"
        else:
            kind = "test" if head in _CONDITION_HELPERS else "arg"
            for w in args:
                self.value(w, kind)
        self.push(frame)

    def push(self, frame: _Frame) -> None:
        if len(self.stack) > 500:
            raise self.fail("sections nested too deeply", frame.opener_offset)
        self.stack.append(frame)

    def else_(self) -> None:
        """After ``{{else}}`` an ``each``/``with`` block no longer renders in its context."""
        if self.stack:
            self.stack[-1].context = None
            self.stack[-1].params = {}

    def close(self, inner: int, end: int, start: int) -> None:
        name = self.text[inner:end].strip()
        if not self.stack:
            raise self.fail(f"closing tag '{{{{/{name}}}}}' has no open section", start)
        frame = self.stack.pop()
        if name != frame.name:
            opened = frame.pos
            raise self.fail(
                f"closing tag '{{{{/{name}}}}}' does not match '{frame.name}' opened at line "
                f"{opened.line}", start,
            )

    def partial(self, inner: int, end: int) -> None:
        words = self.words(inner, end)
        if not words:
            return
        first = words[0]
        pos = self.tmap.pos(first.offset)
        if first.text == "(":
            self.refs.append(TemplateRef(target=self.text[first.offset:end].strip(),
                                         kind="partial", pos=pos, dynamic=True))
            return
        target = first.text.strip("\"'")
        self.refs.append(TemplateRef(target=target, kind="partial", pos=pos))
        for w in words[1:]:
            self.value(w, "arg")


def _drop_helpers(words: list[_Word]) -> list[_Word]:
    """Arguments without parentheses and without the helper names of subexpressions."""
    out: list[_Word] = []
    helper_next = False
    for w in words:
        if w.text == "(":
            helper_next = True
        elif w.text == ")":
            continue
        elif helper_next:
            helper_next = False
        else:
            out.append(w)
    return out


def _segments(path: str) -> list[str]:
    """``a.b/[c d].e`` → ``['a', 'b', 'c d', 'e']``."""
    out: list[str] = []
    for m in re.finditer(r"\[([^\]\[]*)\]|([^./\[\]]+)", path):
        out.append(m.group(1) if m.group(1) is not None else m.group(2))
    return [s for s in out if s]


def parse_mustache(text: str) -> TemplateFacts:
    """Parse mustache/handlebars text; raise :class:`ParseError` on unbalanced sections."""
    parser = _Parser(normalize_newlines(text))
    parser.run()
    return TemplateFacts(dialect="mustache", variables=parser.vars, refs=parser.refs,
                         locals=parser.locals)
