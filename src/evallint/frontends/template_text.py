"""Text helpers shared by the template front-ends: newlines, fenced blocks, delimiting tags.

Template parsers see tags; whether an interpolated value is *delimited* (inside ``<output>…``
tags, a fenced block, a triple-quoted block, or alone after a label such as ``Response:``) is a
property of the surrounding prose, so it is computed here once per file from the text around the
template tags.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from evallint.facts import Pos
from evallint.source import LineIndex

_NEWLINES = re.compile(r"\r\n|\r")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)
_TRIPLE = re.compile(r'"""|\'\'\'')
# An XML-like tag: a letter right after '<' (so "a < b" is not a tag); attributes may hold
# template tags. Self-closing tags delimit nothing.
_OPEN_TAG = re.compile(r"<([A-Za-z][\w.:-]*)(?:\s[^<>]*)?>")
_CLOSE_TAG = re.compile(r"</([A-Za-z][\w.:-]*)\s*>")
# Template tags of every dialect (what is left of a line without them is its prose): the
# paired tags of _TAG_PAIRS, tried in this order at each "{" (as the alternation
# \{\{\{.*?\}\}\}|\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\} did), then a str.format field.
_TAG_PAIRS = (("{{{", "}}}"), ("{{", "}}"), ("{%", "%}"), ("{#", "#}"))
_FIELD_TAG = re.compile(r"(?<!\{)\{[A-Za-z_][\w.\[\]'\"]*(?:![rsa])?(?::[^{}\s]*)?\}(?!\})")
# A line that only opens or closes a block of text: ``---``, a fence, ``<<<``, ``===``.
_RULE_LINE = re.compile(r"(?:-{3,}|={3,}|\*{3,}|`{3,}\w*|~{3,}\w*|<{3,}|>{3,}|\"{3}|'{3})")
# A control tag (a block, a comment, a mustache section or partial). Only ever matched whole
# against one tag's text (fullmatch); in a line, :func:`_strip_control` finds them.
_CONTROL_TAG = re.compile(r"\{%.*?%\}|\{#.*?#\}|\{\{~?\s*[#/^!>].*?\}\}")
_CONTROL_OPEN = re.compile(r"\{\{~?\s*[#/^!>]")


class _Closers:
    """``str.find`` of a tag's closer up to the end of its line (what ``.*?`` and the closer
    match), remembering where a closer is missing: another opener later on that line then fails
    at once. (A lazy pattern read the rest of the line again from each opener that has no
    closer: a line of "{{" took time quadratic in its length.)"""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line = (0, -1)  # a searched span that holds no newline: from, to (a newline or end)
        self.missing: dict[str, tuple[int, int]] = {}  # closer -> searched from, line end

    def find(self, closer: str, start: int) -> int:
        low, eol = self.line
        if not low <= start <= eol:
            eol = self.text.find("\n", start)
            eol = len(self.text) if eol == -1 else eol
            self.line = (start, eol)
        miss = self.missing.get(closer)
        if miss is not None and miss[0] <= start and miss[1] == eol:
            return -1
        at = self.text.find(closer, start, eol)
        if at == -1:
            self.missing[closer] = (start, eol)
        return at


def _template_tags(text: str) -> list[tuple[int, int]]:
    """The spans of the template tags in ``text``, left to right, none inside another."""
    spans: list[tuple[int, int]] = []
    closers = _Closers(text)
    at = text.find("{")
    while at != -1:
        end = -1
        for opener, closer in _TAG_PAIRS:
            if text.startswith(opener, at):
                close = closers.find(closer, at + len(opener))
                if close != -1:
                    end = close + len(closer)
                    break
        if end == -1:
            field_tag = _FIELD_TAG.match(text, at)
            end = field_tag.end() if field_tag else -1
        if end != -1:
            spans.append((at, end))
        at = text.find("{", max(end, at + 1))
    return spans


def _strip_control(text: str) -> str:
    """``text`` without its control tags (``_CONTROL_TAG.sub("", text)``, each closer found
    by :class:`_Closers`)."""
    if "{" not in text:
        return text
    kept: list[str] = []
    closers = _Closers(text)
    done = 0
    at = text.find("{")
    while at != -1:
        end = -1
        if text.startswith(("{%", "{#"), at):
            close = closers.find(text[at + 1] + "}", at + 2)
            end = close + 2 if close != -1 else -1
        else:
            opener = _CONTROL_OPEN.match(text, at)
            if opener is not None:
                close = closers.find("}}", opener.end())
                end = close + 2 if close != -1 else -1
        if end != -1:
            kept.append(text[done:at])
            done = end
        at = text.find("{", max(end, at + 1))
    kept.append(text[done:])
    return "".join(kept)


def is_rule_line(line: str) -> bool:
    """A stripped line that only opens or closes a block of text (``---``, a fence): the label
    of the value below it is the line above."""
    return _RULE_LINE.fullmatch(line) is not None
# A label: one to six words and a colon, in optional markdown emphasis or a heading
# ("**Response:**", "## Tool calls made:", "TOOL CALLS TO BE EVALUATED:", "[Response]:").
# (each word is read whole, by a look-ahead that is never backtracked into: a word's trailing
# "_" given back to [*_]* never made a label, and "a____x" tried so every split of its "_")
_LABEL = re.compile(
    r"^[ \t>*_#\[-]*([A-Za-z](?=([\w'()/-]*))\2(?:[ \t]+[A-Za-z](?=([\w'()/-]*))\3){0,5})"
    r"\]?[ \t]*[*_]*:[*_]*[ \t]*$"
)
# "###Response to evaluate:" (no space) is how many judge prompts write their headings; a
# prompt held in an indented Python string keeps the code's indentation before them
_HEADING_LINE = re.compile(r"^[ \t]*#{1,6}(?:[ \t]+\S|[A-Za-z])[^\n]*$")
# "RESPONSE (the assistant's reply):": a parenthetical note is not part of the label.
_PARENTHETICAL = re.compile(r"\([^()\n]*\)")
# Words that open a sentence, not a label: "Grade this answer:", "Here is the output:".
_NOT_LABEL = frozenset(
    {"grade", "evaluate", "score", "rate", "judge", "assess", "review", "check", "critique",
     "consider", "read", "compare", "verify", "here", "this", "these", "that", "the", "below",
     "following", "given", "is", "are", "was", "it", "and", "or", "but", "if", "when", "then",
     "please", "now", "return", "respond", "write", "use"}
)
_DETERMINERS = frozenset({"the", "this", "that", "these", "a", "an", "your", "my", "our", "its",
                          "following", "below", "above", "is", "are"})


def normalize_newlines(text: str) -> str:
    """Jinja's lexer treats \\r\\n and \\r as line breaks; so do all front-ends (same lines)."""
    if "\r" not in text:
        return text
    return _NEWLINES.sub("\n", text)


def fenced_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of fenced code blocks (``` or ~~~), an unclosed fence running to the end."""
    spans: list[tuple[int, int]] = []
    opened: tuple[int, str] | None = None
    for m in _FENCE.finditer(text):
        fence = m.group(1)
        if opened is None:
            opened = (m.start(), fence)
        elif fence[0] == opened[1][0] and len(fence) >= len(opened[1]):
            line_end = text.find("\n", m.end())
            rest = text[m.end(): line_end if line_end != -1 else len(text)]
            if rest.strip():  # a closing fence carries no info string
                continue
            spans.append((opened[0], m.end()))
            opened = None
    if opened is not None:
        spans.append((opened[0], len(text)))
    return spans


def _triple_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    opened: tuple[int, str] | None = None
    for m in _TRIPLE.finditer(text):
        if opened is None:
            opened = (m.start(), m.group())
        elif m.group() == opened[1]:
            spans.append((opened[0], m.end()))
            opened = None
    return spans


# MT-bench-style markers: "[The Start of Assistant A's Answer]" … "[The End of Assistant A's
# Answer]", also as "<|The Start of …|>".
# The name is the shortest that the closing bracket follows, as (.+?) found it: one character,
# or up to one that is not a blank (a name that ends in a blank is a shorter one and blanks), so
# a run of blanks is not read again after each of its characters.
_START_MARK = re.compile(
    r"(?im)^[ \t]*(?:\[|<\|)[ \t]*the start of (.(?:[^\n]*?[^ \t\n])??)[ \t]*(?:\]|\|>)")
# Distinct marker names looked for in one text (a prompt has a few): each is a search of the
# rest of the text, so the names are bounded, and a name's search is not repeated for its next
# marker before the end marker it found.
_MARKER_NAMES = 32


def _marker_spans(text: str) -> list[tuple[int, int]]:
    """Spans between a "The Start of X" marker and its "The End of X" marker."""
    spans: list[tuple[int, int]] = []
    if "tart of" not in text and "TART OF" not in text:
        return spans
    # name -> its end marker's pattern, where it was last searched from and what it found
    ends: dict[str, tuple[re.Pattern[str], int, int]] = {}
    for m in _START_MARK.finditer(text):
        name = m.group(1)
        if name not in ends:
            if len(ends) == _MARKER_NAMES:
                continue
            ends[name] = (re.compile(r"(?i)(?:\[|<\|)[ \t]*the end of " + re.escape(name)
                                     + r"[ \t]*(?:\]|\|>)"), 0, -2)
        pattern, searched, found = ends[name]
        if not (searched <= m.end() and (found == -1 or m.end() <= found)):
            end = pattern.search(text, m.end())
            searched, found = m.end(), (end.start() if end is not None else -1)
            ends[name] = (pattern, searched, found)
        if found != -1:
            spans.append((m.end(), found))
    return spans


def _tag_spans(text: str) -> list[tuple[int, int]]:
    """Spans between an opening tag and its matching closing tag (same name, nested allowed)."""
    if "</" not in text:
        return []
    events: list[tuple[int, int, str, bool]] = []
    for m in _OPEN_TAG.finditer(text):
        if not m.group(0).endswith("/>"):
            events.append((m.start(), m.end(), m.group(1).lower(), True))
    for m in _CLOSE_TAG.finditer(text):
        events.append((m.start(), m.end(), m.group(1).lower(), False))
    events.sort()
    open_by_name: dict[str, list[int]] = {}
    spans: list[tuple[int, int]] = []
    for start, end, name, is_open in events:
        if is_open:
            open_by_name.setdefault(name, []).append(end)
        elif open_by_name.get(name):
            spans.append((open_by_name[name].pop(), start))
    return spans


@dataclass
class TextMap:
    """Offset → position conversion and "is this offset delimited?" for one template text."""

    text: str
    index: LineIndex
    _spans: list[tuple[int, int]] | None = None  # the union of the enclosing spans, in order
    _starts: list[int] | None = None
    _labelled: dict[int, bool] = field(default_factory=dict)  # by line start

    @classmethod
    def of(cls, text: str) -> TextMap:
        return cls(text, LineIndex(text))

    def pos(self, offset: int) -> Pos:
        line, col = self.index.pos(max(0, min(offset, len(self.text))))
        return Pos(line, col)

    def offset(self, line: int, column: int) -> int:
        return self.index.offset(line, column)

    def delimited(self, offset: int) -> bool:
        """Inside tags, a fence or triple quotes, or alone on a labelled line."""
        return self._enclosed(offset) or self.labelled(offset)

    def labelled(self, offset: int) -> bool:
        """``Response: {{ output }}`` alone on its line, or alone under a ``Response:`` line.

        A label says where the candidate's text starts, and the end of the line (or the next
        label) where it stops; a value in the middle of a sentence has neither.
        """
        at = max(0, min(offset, len(self.text)))
        start = at - self.index.pos(at)[1] + 1
        found = self._labelled.get(start)
        if found is None:  # (the answer is the line's: asked once per line, not once per value)
            found = self._labelled[start] = self._line_labelled(start)
        return found

    def _line_labelled(self, start: int) -> bool:
        end = self.text.find("\n", start)
        line = self.text[start:end if end != -1 else len(self.text)]
        tags = _template_tags(line)
        values = [(s, e) for s, e in tags if not _CONTROL_TAG.fullmatch(line, s, e)]
        if len(values) != 1:
            return False
        prose: list[str] = []
        done = 0
        for s, e in tags:
            prose.append(line[done:s])
            done = e
        prose.append(line[done:])
        if not "".join(prose).strip():
            return _is_label(self._previous_line(start))
        head = line[:values[0][0]]
        tail = _strip_control(line[values[0][1]:])
        return not tail.strip() and _is_label(head)

    def _previous_line(self, line_start: int) -> str:
        """The nearest line above that holds more than control tags, blanks and a delimiter
        rule ("Draft:" over a ``---`` line over the value: the label is "Draft:")."""
        end = line_start - 1
        while end > 0:
            start = self.text.rfind("\n", 0, end) + 1
            line = _strip_control(self.text[start:end]).strip()
            if line and not is_rule_line(line):
                return self.text[start:end]
            end = start - 1
        return ""

    def _enclosed(self, offset: int) -> bool:
        if self._spans is None:
            spans = (fenced_spans(self.text) + _triple_spans(self.text) + _tag_spans(self.text)
                     + _marker_spans(self.text))
            spans.sort()
            union: list[tuple[int, int]] = []  # spans may nest: their union, one lookup away
            for s, e in spans:
                if union and s <= union[-1][1]:
                    union[-1] = (union[-1][0], max(union[-1][1], e))
                else:
                    union.append((s, e))
            self._spans = union
            self._starts = [s for s, _ in union]
        assert self._starts is not None
        i = bisect.bisect_right(self._starts, offset) - 1
        return i >= 0 and offset < self._spans[i][1]


def _is_label(text: str) -> bool:
    """One to six words and a colon that do not read as a sentence ("Grade this answer:")."""
    text = _PARENTHETICAL.sub("", _strip_control(text))
    if _HEADING_LINE.match(text):
        return True  # "## Assistant response" over a line holding only the value
    m = _LABEL.match(text)
    if m is None:
        return False
    words = m.group(1).lower().split()
    if len(words) == 1:
        return True  # "Reply:", "A:", "Output:" alone are labels whatever the word
    return words[0] not in _NOT_LABEL and not set(words) & _DETERMINERS


def clamp_line(text: str, line: int) -> int:
    """A 1-based line number that exists in ``text``."""
    return max(1, min(line, text.count("\n") + 1))
