"""YAML loading that remembers where each value came from, so spec errors can name a line.

``yaml.safe_load`` forgets positions; composing the node graph keeps them. We build plain Python
values from the nodes ourselves and keep a line for every key path.
"""

from __future__ import annotations

from typing import Any

import yaml

from evallint.executor.errors import SpecError

KeyPath = tuple[str | int, ...]


class Located:
    """A loaded document plus the 1-based line of every key path in it."""

    def __init__(self, value: Any, lines: dict[KeyPath, int], path: str) -> None:
        self.value = value
        self.lines = lines
        self.path = path

    def line(self, *keys: str | int) -> int | None:
        """The line of the deepest known prefix of ``keys`` (a missing key points at its parent)."""
        probe: KeyPath = tuple(keys)
        while probe:
            if probe in self.lines:
                return self.lines[probe]
            probe = probe[:-1]
        return self.lines.get((), None)

    def error(self, message: str, *keys: str | int) -> SpecError:
        return SpecError(message, self.path, self.line(*keys))


def load_located(text: str, path: str) -> Located:
    """Parse one YAML document with positions; YAML syntax errors become SpecError with a line."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark is not None else None
        raise SpecError(f"invalid YAML: {exc.problem or exc}", path, line) from None
    except yaml.YAMLError as exc:
        raise SpecError(f"invalid YAML: {exc}", path) from None
    lines: dict[KeyPath, int] = {}
    if node is None:
        return Located(None, lines, path)
    value = _build(node, (), lines, path)
    return Located(value, lines, path)


def _build(node: yaml.Node, at: KeyPath, lines: dict[KeyPath, int], path: str) -> Any:
    lines.setdefault(at, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node, path)
            if not isinstance(key, str | int | float | bool):
                raise SpecError("mapping keys must be plain scalars", path,
                                key_node.start_mark.line + 1)
            skey = str(key)
            if skey in out:
                raise SpecError(f"duplicate key '{skey}'", path, key_node.start_mark.line + 1)
            child: KeyPath = (*at, skey)
            lines[child] = key_node.start_mark.line + 1
            out[skey] = _build(value_node, child, lines, path)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, (*at, i), lines, path) for i, item in enumerate(node.value)]
    return _scalar(node, path)


def _scalar(node: yaml.Node, path: str) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise SpecError("complex mapping keys are not supported", path, node.start_mark.line + 1)
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError as exc:
        raise SpecError(f"invalid value: {exc.problem}", path, node.start_mark.line + 1) from None
    finally:
        loader.dispose()
