"""pydantic-evals datasets that Python code reads from a file and evaluates on a task.

``Dataset.from_file("cases.yaml")`` (also ``Dataset[In, Out].from_file(...)``) loads the cases
and the evaluators a YAML/JSON file declares; ``dataset.evaluate(task)`` (or
``evaluate_sync``) then runs those evaluators on the task's outputs. An ``LLMJudge`` declared in
the file therefore grades the task's model, though the file never names that model. This
module reads the link off the syntax tree the Python front-end already holds: which file
(a constant path, relative to the module's folder), where it is loaded, where it is
evaluated and on which task. The file itself is read later, by the check that compares the
models (``checks/pydantic_datasets.py``), so a change to it is never hidden by a cache of the
Python facts.

A path is followed only through constants: a string, ``Path(...)``/``pathlib.Path(...)``,
``Path(__file__).parent`` (``.resolve()``, ``.absolute()``, ``.with_name()``), ``/``,
``os.path.join``/``dirname``/``abspath`` and module-level names bound once to such a value.
Anything else (an f-string, a parameter, a call result) gives no target.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from evallint.facts import Pos
from evallint.pyast import dotted

PosMap = Callable[[int, int], Pos]  # (line, 0-based column) -> Pos, as the IR builder's

# The methods that run the dataset's evaluators on a task's outputs.
RUN_METHODS = frozenset({"evaluate", "evaluate_sync"})
_PATH_CLASSES = frozenset({"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath",
                           "pathlib.PurePosixPath"})
_SAME_PATH = frozenset({"resolve", "absolute", "expanduser"})
_MAX_DEPTH = 8  # names followed through constants before giving up
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@dataclass(frozen=True)
class DatasetRun:
    """A dataset read from ``target`` at ``load`` and evaluated at ``run`` on ``task``.

    ``target`` is relative to the module's folder ('' when the path is not a constant);
    ``task`` is the task as written (``answer``, ``helpers.answer``), '' when not a name."""

    target: str
    load: Pos
    run: Pos
    task: str


@dataclass(frozen=True)
class JudgeDefault:
    """``set_default_judge_model(...)``: the model every LLMJudge without ``model`` runs on
    (``model`` '' when the call's argument is not a constant)."""

    model: str
    pos: Pos


# A path value: ("file",) the module file itself, ("dir", p) a path relative to its folder.
_PathVal = tuple[str, ...]


class _Scanner:
    """One module's dataset loads and runs; ``imports`` maps local names to qualified ones."""

    def __init__(self, tree: ast.Module, imports: dict[str, str], pos: PosMap) -> None:
        self.tree = tree
        self.imports = imports
        self.pos = pos
        self.consts: dict[str, ast.expr] = {}
        bound: dict[str, int] = {}
        for node in tree.body:
            for name, value in _bindings(node):
                bound[name] = bound.get(name, 0) + 1
                self.consts[name] = value
        for name, n in bound.items():
            if n > 1:  # rebound: not one constant
                self.consts.pop(name, None)

    def qualified(self, node: ast.expr) -> str:
        """The dotted name of ``node`` with its first part resolved through the imports."""
        name = dotted(node) or ""
        head, dot, rest = name.partition(".")
        root = self.imports.get(head, "")
        return f"{root}{dot}{rest}" if root else ""

    def is_dataset(self, node: ast.expr) -> bool:
        """``Dataset``, ``pydantic_evals.Dataset``, ``Dataset[str, str]``."""
        if isinstance(node, ast.Subscript):
            node = node.value
        q = self.qualified(node)
        return q.split(".")[0] == "pydantic_evals" and q.rsplit(".", 1)[-1] == "Dataset"

    def load_target(self, node: ast.expr) -> str | None:
        """The file of a ``Dataset.from_file(path)`` call ('' when the path is not a
        constant); None when ``node`` is no such call."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "from_file" and self.is_dataset(node.func.value)):
            return None
        arg = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "path"), None)
        found = self.path(arg, 0) if arg is not None else None
        if found is None or found[0] != "dir" or found[1] in (".", ""):
            return ""
        return found[1]

    def path(self, node: ast.expr, depth: int) -> _PathVal | None:
        """A constant path value, or None."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.replace("\\", "/")
            if not text or text.startswith("/") or "\0" in text or ":" in text:
                return None  # absolute, a drive or a URL: never a project file
            return ("dir", posixpath.normpath(text))
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return ("file",)
            value = self.consts.get(node.id)
            return self.path(value, depth + 1) if value is not None else None
        if isinstance(node, ast.Attribute):
            base = self.path(node.value, depth + 1)
            if base is None or node.attr != "parent":
                return None
            return ("dir", ".") if base[0] == "file" else _join(base, "..")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = self.path(node.left, depth + 1), self.path(node.right, depth + 1)
            if left is None or right is None or right[0] != "dir":
                return None
            return _join(left, right[1])
        if isinstance(node, ast.Call):
            return self.call_path(node, depth)
        return None

    def call_path(self, node: ast.Call, depth: int) -> _PathVal | None:
        """``Path(a, b)``, ``p.resolve()``, ``p.with_name(x)``, ``os.path.join(a, b)``,
        ``os.path.dirname(p)``, ``os.path.abspath(p)``."""
        if node.keywords:
            return None
        q = self.qualified(node.func)
        if q in _PATH_CLASSES or q == "os.path.join":
            if not node.args:
                return None
            parts = [self.path(a, depth + 1) for a in node.args]
            first = parts[0]
            if first is None or any(p is None or p[0] != "dir" for p in parts[1:]):
                return None
            for p in parts[1:]:
                assert p is not None
                first = _join(first, p[1])
                if first is None:
                    return None
            return first
        if q in ("os.path.abspath", "os.path.realpath", "os.path.normpath") and \
                len(node.args) == 1:
            return self.path(node.args[0], depth + 1)
        if q == "os.path.dirname" and len(node.args) == 1:
            base = self.path(node.args[0], depth + 1)
            if base is None:
                return None
            return ("dir", ".") if base[0] == "file" else _join(base, "..")
        if isinstance(node.func, ast.Attribute):
            base = self.path(node.func.value, depth + 1)
            if base is None:
                return None
            if node.func.attr in _SAME_PATH and not node.args:
                return base
            if node.func.attr == "with_name" and len(node.args) == 1:
                name = node.args[0]
                if not (isinstance(name, ast.Constant) and isinstance(name.value, str)
                        and name.value and "/" not in name.value):
                    return None
                parent = ("dir", ".") if base[0] == "file" else _join(base, "..")
                return _join(parent, name.value) if parent is not None else None
        return None

    def runs(self) -> Iterator[DatasetRun]:
        """Each ``evaluate``/``evaluate_sync`` on a dataset loaded from a file: in the same
        function, on a module-level dataset, or chained on the load itself."""
        module_loads = self.loads_in(self.tree.body)
        yield from self.runs_in(self.tree.body, module_loads, {})
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                local = self.loads_in(node.body)
                assigned = {n for st in ast.walk(node) for n in _targets(st)}
                yield from self.runs_in(node.body, local, {
                    k: v for k, v in module_loads.items() if k not in assigned})

    def loads_in(self, body: list[ast.stmt]) -> dict[str, tuple[str, Pos]]:
        """Names bound to a ``from_file`` load in this body (not in nested functions)."""
        out: dict[str, tuple[str, Pos]] = {}
        for node in _own_nodes(body):
            for name, value in _bindings(node):
                target = self.load_target(value)
                if target is not None:
                    out[name] = (target, self.pos(value.lineno, value.col_offset))
        return out

    def runs_in(self, body: list[ast.stmt], local: dict[str, tuple[str, Pos]],
                outer: dict[str, tuple[str, Pos]]) -> Iterator[DatasetRun]:
        for node in _own_nodes(body):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in RUN_METHODS):
                continue
            recv = node.func.value
            load: tuple[str, Pos] | None = None
            if isinstance(recv, ast.Name):
                load = local.get(recv.id) or outer.get(recv.id)
            else:
                target = self.load_target(recv)
                if target is not None:
                    load = (target, self.pos(recv.lineno, recv.col_offset))
            if load is None:
                continue
            task = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg == "task"), None)
            yield DatasetRun(load[0], load[1], self.pos(node.lineno, node.col_offset),
                             (dotted(task) or "") if task is not None else "")

    def defaults(self) -> Iterator[JudgeDefault]:
        """``set_default_judge_model(model)`` calls anywhere in the module."""
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Call) and self.qualified(node.func).endswith(
                    ".set_default_judge_model") and self.qualified(node.func).startswith(
                    "pydantic_evals.")):
                continue
            arg = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg == "model"), None)
            if isinstance(arg, ast.Name) and arg.id in self.consts:
                arg = self.consts[arg.id]
            model = arg.value if isinstance(arg, ast.Constant) and isinstance(
                arg.value, str) else ""
            yield JudgeDefault(model.strip(), self.pos(node.lineno, node.col_offset))


def _join(base: _PathVal, rel: str) -> _PathVal | None:
    """``base / rel``; None when ``base`` is the module file itself (``__file__ / x``)."""
    if base[0] != "dir":
        return None
    return ("dir", posixpath.normpath(posixpath.join(base[1], rel)))


def _bindings(node: ast.AST) -> Iterator[tuple[str, ast.expr]]:
    """``name = value`` and ``name: T = value`` (one plain name target)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
            node.targets[0], ast.Name):
        yield node.targets[0].id, node.value
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and \
            node.value is not None:
        yield node.target.id, node.value


def _targets(node: ast.AST) -> Iterator[str]:
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    yield n.id


def _own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of ``body`` outside nested function and class definitions."""
    stack: list[ast.AST] = [n for n in reversed(body) if not isinstance(n, _SCOPES)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in reversed(list(ast.iter_child_nodes(node)))
                     if not isinstance(c, _SCOPES))


def dataset_facts(tree: ast.Module, imports: dict[str, str], pos: PosMap
                  ) -> tuple[tuple[DatasetRun, ...], tuple[JudgeDefault, ...]]:
    """The dataset runs and default-judge settings of a module that uses pydantic-evals."""
    scanner = _Scanner(tree, imports, pos)
    return tuple(dict.fromkeys(scanner.runs())), tuple(scanner.defaults())
