"""Position-aware loading of YAML and JSON for config front-ends (agents, promptfoo, specs).

``yaml.safe_load`` and ``json.loads`` forget where values came from; rules need a line for every
finding. Both loaders here return a :class:`Doc`: the plain value plus the 1-based position of
every key path. Bad input raises :class:`evallint.frontend.ParseError` at the position the
parser saw, which the engine reports as EL901.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evallint.facts import Pos
from evallint.frontend import ParseError

if TYPE_CHECKING:
    import yaml

PathT = tuple[str | int, ...]


@dataclass
class Doc:
    """A loaded document with positions.

    ``keys`` holds the position of the key of each mapping entry (``("a", "b")`` is the ``b:``
    inside ``a:``); ``values`` the position of each value node (list items included);
    ``body_lines`` the first line of a block scalar's text (``|`` / ``>``), for positions
    inside multi-line strings.
    """

    data: Any
    keys: dict[PathT, Pos] = field(default_factory=dict)
    values: dict[PathT, Pos] = field(default_factory=dict)
    body_lines: dict[PathT, int] = field(default_factory=dict)
    quoted: set[PathT] = field(default_factory=set)
    # A key given twice in one mapping (YAML keeps the last silently): path and position.
    duplicates: list[tuple[PathT, Pos]] = field(default_factory=list)

    def pos(self, *path: str | int) -> Pos | None:
        """The key position of ``path`` (else its value position), or the nearest parent's."""
        probe: PathT = tuple(path)
        while True:
            if probe in self.keys:
                return self.keys[probe]
            if probe in self.values:
                return self.values[probe]
            if not probe:
                return None
            probe = probe[:-1]

    def text_line(self, *path: str | int) -> int | None:
        """First line of a scalar's text (the line after ``|`` for block scalars)."""
        t: PathT = tuple(path)
        if t in self.body_lines:
            return self.body_lines[t]
        v = self.values.get(t)
        return v.line if v else None


def value_at(data: Any, path: PathT) -> Any:
    """The value at ``path`` in decoded YAML/JSON data, or None where the path breaks."""
    for key in path:
        if isinstance(data, dict):
            data = data.get(key)
        elif isinstance(data, list) and isinstance(key, int) and 0 <= key < len(data):
            data = data[key]
        else:
            return None
    return data


def load_yaml(text: str, line_offset: int = 0) -> Doc:
    """Parse one YAML document with positions (``line_offset`` for embedded front matter).
    (``yaml`` is imported here, not with the module: a run over Python files reads none.)"""
    import yaml

    try:
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as exc:  # a control character: found before any parsing
        line = text.count("\n", 0, exc.position) + 1 + line_offset
        col = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise ParseError(f"invalid YAML: character #x{exc.character:04x} is not allowed",
                         line, col) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return Doc(None)
        _check_graph(node, line_offset)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark is not None else 1 + line_offset
        col = mark.column + 1 if mark is not None else 1
        raise ParseError(f"invalid YAML: {exc.problem or exc}", line, col) from None
    except yaml.YAMLError as exc:
        raise ParseError(f"invalid YAML: {exc}", 1 + line_offset) from None
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. odd timestamps, unhashable keys
        raise ParseError(f"invalid YAML value: {exc}", 1 + line_offset) from None
    except RecursionError:
        raise ParseError(f"YAML nested too deeply to read (over {MAX_YAML_DEPTH} levels)",
                         1 + line_offset) from None
    finally:
        loader.dispose()
    doc = Doc(data)
    _walk(node, (), doc, line_offset, set())
    return doc


MAX_YAML_NODES = 100_000  # after aliases are expanded; real configs have a few thousand
MAX_YAML_DEPTH = 100


def _children(node: yaml.Node) -> list[yaml.Node]:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_graph(root: yaml.Node, offset: int) -> None:
    """Refuse a document whose aliases expand past :data:`MAX_YAML_NODES` nodes (an alias
    bomb: 0.2 KB that would expand to billions), that refers to itself, or that nests deeper
    than :data:`MAX_YAML_DEPTH`, before anything walks the expanded data. Counts each node's
    expanded size once (memoised over the node graph, an explicit stack): linear in the text."""
    size: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 0, False)]
    while stack:
        node, depth, closing = stack.pop()
        key = id(node)
        if closing:
            open_nodes.discard(key)
            total = 1 + sum(size[id(child)] for child in _children(node))
            if total > MAX_YAML_NODES:
                raise _refuse(f"YAML aliases expand to more than {MAX_YAML_NODES:,} nodes "
                              "(an alias bomb?): not read", node, offset)
            size[key] = total
            continue
        if key in size:
            continue
        if key in open_nodes:
            raise _refuse("YAML alias refers to a node that contains it: not read", node,
                          offset)
        if depth > MAX_YAML_DEPTH:
            raise _refuse(f"YAML nested more than {MAX_YAML_DEPTH} levels deep: not read", node,
                          offset)
        open_nodes.add(key)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node)
                     if id(child) not in size)


def _refuse(message: str, node: yaml.Node, offset: int) -> ParseError:
    where = _p(node.start_mark, offset)
    return ParseError(message, where.line, where.column)


def _p(mark: Any, offset: int) -> Pos:
    return Pos(mark.line + 1 + offset, mark.column + 1)


def _walk(node: yaml.Node, at: PathT, doc: Doc, offset: int, seen: set[int]) -> None:
    import yaml

    doc.values.setdefault(at, _p(node.start_mark, offset))
    if id(node) in seen:  # aliases may form cycles
        return
    seen.add(id(node))
    if isinstance(node, yaml.ScalarNode):
        if node.style in ("|", ">"):
            doc.body_lines[at] = node.start_mark.line + 2 + offset
        elif node.style in ('"', "'"):
            doc.quoted.add(at)
        return
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*at, i), doc, offset, seen)
    elif isinstance(node, yaml.MappingNode):
        names: set[str] = set()
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            sub = (*at, str(key_node.value))
            if sub[-1] in names:
                doc.duplicates.append((sub, _p(key_node.start_mark, offset)))
            names.add(str(sub[-1]))
            doc.keys.setdefault(sub, _p(key_node.start_mark, offset))
            _walk(value_node, sub, doc, offset, seen)
    seen.discard(id(node))


# --------------------------------------------------------------------------- JSON

_WS = " \t\r\n"


class _JsonReader:
    """A small recursive-descent JSON reader that records the position of every key and value.

    Scalars are decoded by :mod:`json` itself (``raw_decode``), so string escapes and numbers
    follow the standard exactly; only the structure is walked here.
    """

    def __init__(self, text: str) -> None:
        from evallint.source import LineIndex

        self.text = text
        self.index = LineIndex(text)
        self.decoder = json.JSONDecoder()
        self.doc = Doc(None)

    def pos(self, offset: int) -> Pos:
        line, col = self.index.pos(offset)
        return Pos(line, col)

    def fail(self, message: str, offset: int) -> ParseError:
        p = self.pos(min(offset, len(self.text)))
        return ParseError(f"invalid JSON: {message}", p.line, p.column)

    def skip(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in _WS:
            i += 1
        return i

    def value(self, i: int, at: PathT, depth: int = 0) -> tuple[Any, int]:
        if depth > 200:  # two frames a level: stays well inside the default recursion limit
            raise self.fail("nested too deeply", i)
        i = self.skip(i)
        if i >= len(self.text):
            raise self.fail("unexpected end of file", i)
        self.doc.values.setdefault(at, self.pos(i))
        ch = self.text[i]
        if ch == "{":
            return self.obj(i + 1, at, depth)
        if ch == "[":
            return self.arr(i + 1, at, depth)
        try:
            return self.decoder.raw_decode(self.text, i)
        except json.JSONDecodeError as exc:
            raise self.fail(exc.msg, exc.pos) from None

    def obj(self, i: int, at: PathT, depth: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        i = self.skip(i)
        if i < len(self.text) and self.text[i] == "}":
            return out, i + 1
        while True:
            i = self.skip(i)
            if i >= len(self.text) or self.text[i] != '"':
                raise self.fail("expected a string key", i)
            key_pos = self.pos(i)
            try:
                key, i = self.decoder.raw_decode(self.text, i)
            except json.JSONDecodeError as exc:
                raise self.fail(exc.msg, exc.pos) from None
            i = self.skip(i)
            if i >= len(self.text) or self.text[i] != ":":
                raise self.fail("expected ':'", i)
            sub = (*at, str(key))
            self.doc.keys.setdefault(sub, key_pos)
            out[str(key)], i = self.value(i + 1, sub, depth + 1)
            i = self.skip(i)
            if i < len(self.text) and self.text[i] == ",":
                i += 1
                continue
            if i < len(self.text) and self.text[i] == "}":
                return out, i + 1
            raise self.fail("expected ',' or '}'", i)

    def arr(self, i: int, at: PathT, depth: int) -> tuple[list[Any], int]:
        out: list[Any] = []
        i = self.skip(i)
        if i < len(self.text) and self.text[i] == "]":
            return out, i + 1
        while True:
            item, i = self.value(i, (*at, len(out)), depth + 1)
            out.append(item)
            i = self.skip(i)
            if i < len(self.text) and self.text[i] == ",":
                i += 1
                continue
            if i < len(self.text) and self.text[i] == "]":
                return out, i + 1
            raise self.fail("expected ',' or ']'", i)


def load_json(text: str) -> Doc:
    """Parse a JSON document with positions; an empty file is ``None``."""
    reader = _JsonReader(text)
    start = reader.skip(0)
    if start >= len(text):
        return Doc(None)
    data, end = reader.value(start, ())
    end = reader.skip(end)
    if end < len(text):
        raise reader.fail("extra data after the document", end)
    reader.doc.data = data
    return reader.doc


# --------------------------------------------------------------------------- front matter


def split_front_matter(text: str) -> tuple[str, int, int] | None:
    """``(yaml_text, first_yaml_line, body_start_line)`` of a ``---`` front matter block.

    Lines are 1-based; None when the text does not open with ``---`` or the block never closes.
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        return None
    for idx in range(1, len(lines)):
        if lines[idx].rstrip("\r\n").rstrip() in ("---", "..."):
            return "".join(lines[1:idx]), 2, idx + 2
    return None


# --------------------------------------------------------------------------- lenient reading

_LENIENT_KEY = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+|$)")
# The dash and its blanks are read whole (a look-ahead, never backtracked into), the item up to
# its last non-blank (what the lazy (.*?)\s*$ kept, without reading the rest of the line again
# after each character).
_LIST_ITEM = re.compile(r"^(?=([ \t]*-[ \t]+))\1((?:[^\n]*\S)?)\s*$")


def lenient_front_matter(text: str, first_line: int, keys: frozenset[str] | None,
                         need_name: bool = True) -> Doc | None:
    """Read front matter as ``key: value`` lines when strict YAML refuses it.

    The tools that load agent and prompt files read their headers this way: Claude Code
    loads an agent whose description holds an unquoted ``: `` (``Use this agent when:
    ...``), VS Code a prompt file headed ``name: OpenSpec: Apply``; YAML rejects both.
    Reading them leniently lets evallint analyse what the tool really runs. A line opens an
    entry when it starts with one of ``keys`` (any key at the start of a line when None) and
    a colon; other lines continue the value above. Returns None (keep the strict error) when
    ``need_name`` and the block has no ``name``, or a value uses YAML syntax this reading
    cannot follow (an unclosed flow list or quote).
    """
    data: dict[str, Any] = {}
    doc = Doc(data)
    key: str | None = None
    for i, raw in enumerate(text.splitlines()):
        line = first_line + i
        m = _LENIENT_KEY.match(raw)
        if m and (keys is None or m.group(1) in keys) and m.group(1) not in data:
            key = m.group(1)
            col = m.end() + 1
            value = _lenient_scalar(raw[m.end():].rstrip(), (key,), Pos(line, col), doc)
            if value is _BAD:
                return None
            data[key] = value
            doc.keys[(key,)] = Pos(line, 1)
            doc.values[(key,)] = Pos(line, col)
            continue
        if key is None or not raw.strip():
            continue
        if not _continue(data, key, raw, line, doc):
            return None
    if not need_name:
        return doc if data else None
    name = data.get("name")
    return doc if isinstance(name, str) and name.strip() else None


_BAD = object()


def _lenient_scalar(value: str, at: PathT, pos: Pos, doc: Doc) -> Any:
    """One value on a key's line: quoted, a flow list/map, a block marker, or plain text."""
    if not value or value[0] in "|>":
        return None if not value else ""
    if value.startswith(("{{", "{%")):
        return value  # a template of prompt files: the value is filled in when it is rendered
    if value[0] in "[{":
        try:
            loaded = load_yaml(value, line_offset=pos.line - 1)
        except ParseError:
            return _BAD
        if isinstance(loaded.data, list):
            for j, _item in enumerate(loaded.data):
                item_pos = loaded.values.get((j,))
                if item_pos is not None:
                    item_at: PathT = (*at, j)
                    doc.values[item_at] = Pos(pos.line, pos.column + item_pos.column - 1)
        return loaded.data
    if value[0] in "\"'":
        if len(value) < 2 or value[-1] != value[0]:
            return _BAD
        doc.quoted.add(at)
        return value[1:-1]
    if value[0] in "&*!%@`":
        return _BAD
    return value


def _continue(data: dict[str, Any], key: str, raw: str, line: int, doc: Doc) -> bool:
    """Add a line that is no key to the value above: a ``- item`` of a list, else more text."""
    current = data[key]
    item = _LIST_ITEM.match(raw)
    if item and (current is None or isinstance(current, list)):
        items = current if isinstance(current, list) else []
        doc.values[(key, len(items))] = Pos(line, len(item.group(1)) + 1)
        text = item.group(2)
        if len(text) >= 2 and text[0] in "\"'" and text[-1] == text[0]:
            text = text[1:-1]
        items.append(text)
        data[key] = items
        return True
    if isinstance(current, list):
        return False
    text = raw.strip()
    data[key] = text if not current else f"{current}\n{text}"
    return True
