"""The shape of the code base: modules do not import each other in a circle."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _import_graph() -> dict[str, set[str]]:
    """Module -> the evallint modules it imports, counting imports inside functions (they run
    too) but not ``if TYPE_CHECKING:`` blocks (they never run)."""
    names: dict[str, Path] = {}
    for path in (SRC / "evallint").rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        names[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
        deps: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            deps |= {t for t in targets if t in names and t != name
                     and not name.startswith(t + ".")}  # a package's own __init__
        graph[name] = deps
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, or None."""
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_no_import_cycles() -> None:
    cycle = _cycle(_import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_one_check_per_rule_modules_read_facts_not_front_ends() -> None:
    """EL301/EL302, EL401 and EL205 are decided once for every kind of file from the facts
    each kind's source lists: the deciding modules reach no front-end and no other check (a
    front-end's parse or another rule's logic would make the decision differ by kind)."""
    graph = _import_graph()
    for module in ("evallint.checks.models", "evallint.checks.tools", "evallint.checks.graders"):
        seen: set[str] = set()
        stack = [module]
        while stack:
            for dep in graph[stack.pop()]:
                if dep not in seen:
                    seen.add(dep)
                    stack.append(dep)
        assert not {m for m in seen if m.startswith(("evallint.frontends", "evallint.checks."))}, (
            module, sorted(m for m in seen if m.startswith(("evallint.frontends",
                                                           "evallint.checks."))))


def test_no_check_imports_a_front_end() -> None:
    """Checks read facts (``evallint.facts``) and shared readers, never a front-end: a check
    that called a parser would parse at check time what the front-end already read, in the
    parent and on every run."""
    graph = _import_graph()
    offenders = {m: sorted(d for d in deps if d.startswith("evallint.frontends"))
                 for m, deps in graph.items() if m.startswith("evallint.checks.")}
    assert {m: d for m, d in offenders.items() if d} == {}


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


# Reading a file: each of these calls opens, reads or tests the file system.
_FS_CALLS = frozenset({"read_bounded", "read_source", "open", "read_text", "read_bytes",
                       "exists", "isfile", "is_file", "isdir", "is_dir", "listdir", "scandir",
                       "glob", "rglob", "stat"})
# Where a front-end or a check may touch the file system itself: the recorder, and the one
# reader of named files, which records each read and each place it looked (see reads.py).
_FS_ALLOWED = {"frontends/config_refs.py": {"read_bounded", "isfile", "exists"}}


def _fs_calls(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = getattr(func.value, "id", "") if isinstance(func, ast.Attribute) else ""
            if (name in _FS_CALLS and owner != "reads") or (name == "walk" and owner == "os"):
                found.add(name)
    return found


def test_checks_and_front_ends_read_other_files_only_through_the_recorder() -> None:
    """Cached results stay right only if every file they rest on is recorded
    (:mod:`evallint.reads`): a check or a front-end that opened a file itself would make a
    warm run keep findings about a file that has since changed."""
    pkg = SRC / "evallint"
    files = [*sorted((pkg / "checks").glob("*.py")), *sorted((pkg / "frontends").glob("*.py")),
             pkg / "lockfile.py"]
    offenders = {}
    for path in files:
        rel = path.relative_to(pkg).as_posix()
        extra = _fs_calls(path) - _FS_ALLOWED.get(rel, set())
        if extra:
            offenders[rel] = sorted(extra)
    # lockfile.py writes and reads the lock file for `evallint lock`, outside any check run
    assert offenders == {"lockfile.py": ["read_bounded"]}


def test_the_recorder_rule_sees_a_direct_read(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text("import os\nfrom evallint import reads\n"
                      "def f(p):\n    reads.exists(p)\n    return os.path.exists(p)\n")
    assert _fs_calls(sample) == {"exists"}


def test_fact_types_live_outside_the_front_ends() -> None:
    """A cached entry names the classes of its facts, and reading it imports their modules:
    a fact type in a front-end would import that front-end (and its word lists and patterns)
    into a run that parses nothing of that kind."""
    import dataclasses
    import importlib

    from evallint.facts import FileFacts, PromptFacts
    from evallint.registry import registering_modules

    found = []
    for name in registering_modules():
        if not name.startswith("evallint.frontends."):
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (isinstance(value, type) and value.__module__ == name
                    and dataclasses.is_dataclass(value)
                    and issubclass(value, (FileFacts, PromptFacts))):
                found.append(f"{name}.{value.__name__}")
    assert found == []
