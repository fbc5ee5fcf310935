"""Every regular expression evallint runs on file text takes time linear in its input.

The checked tree is untrusted (evallint runs in CI on pull requests from forks): a pattern that
backtracks catastrophically on a crafted file stalls discovery or that file's analysis. Every
compiled pattern of the package is collected (module-level objects, also inside module-level
tuples, lists, sets and dicts, and the literal patterns passed to ``re`` functions in its
sources) and timed with ``finditer`` on 20,000 characters of hostile runs: a linear pattern
takes about a millisecond, a quadratic one seconds. (Each input is first tried at a quarter of
that length: only a run that takes more than 1/64 of the bound there, as one that fails at
full length must unless it grows faster than the cube of the length, is timed again at full
length.)
"""

from __future__ import annotations

import ast
import functools
import gc
import importlib
import pkgutil
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import evallint
from evallint.executor.rulechecks import strip_fence
from evallint.executor.verdict import _fenced
from evallint.frontends import format_front, mustache_front, pystrings, template_text
from tests.conftest import lint_tree, write_files

SIZE = 20_000
BOUND = 0.25  # seconds for one input of SIZE characters (a linear pattern: ~1 ms)
SCREEN = BOUND / 64  # seconds on SIZE // 4 characters past which an input is timed at SIZE
BACKSTOP = 2.0  # a run this long is interrupted (CPython's re checks signals) and fails

# Long runs of one unit: blanks and line ends (spans of lines, ^\s* retried at every line),
# the openers of tags and brackets without their closers, quotes, escapes, words.
UNITS = ("\n", " ", "\t", "\r\n", "  \n", "\r", "{", "{{", "{%", "{#", "{{a", "{a", "[", "[[",
         "]", "(", '"', "'", "\\", "-", "#", ": ", "x: ", "a", "a ", "a.", "a=", "a[", "a_", "a-",
         "%", "!", "<", "`", "$", "1", "=", "|", "*", "- ", "# ")
# A run after a start that a pattern needs first (a word, a heading, a list item, a tag, a
# key) and before an end it does not accept there.
MIXTURES = (
    *((start, unit, "x") for start in ("a", "# a", "- a", '{{ "')
      for unit in (" ", "\t", "\r", "\n", "_")),
    ("{{", " ", "=}}"),  # blanks before a character that starts no token
    ("{{ '", "[  '", "}}"),  # unclosed segments and quotes inside a mustache tag
    ("from", "\t", "-import"),
    ("[the start of x", " ", "y"),
    ("```\n", "\n", "x"),
    ("- type:", " ", "x"),
    ("Response: ", "{{a}}", ""),
)

# Patterns only ever used in one way, timed that way on each input instead of with finditer:
# pattern text -> (why, what runs it as evallint does).
USED_AS: dict[str | bytes, tuple[str, Callable[[str], Any]]] = {}


def _words(text: str) -> list[mustache_front._Word]:
    return mustache_front._Parser(text).words(0, len(text))


def _format_parts(text: str) -> None:
    for field in (f"{{a{text}}}", f"{{a[{text}]}}"):
        for m in format_front._FIELD.finditer(field):
            format_front._PART.findall(m.group("rest") or "")


def _assigned(text: str) -> None:
    pystrings._assigned(text)
    pystrings._assigned("prompt" + text)
    pystrings._assigned(("prompt" + text[:64]) * (len(text) // 70))


def _control(text: str) -> None:
    for tag in (text, "{%" + text + "%}", "{{#" + text + "}}"):
        template_text._CONTROL_TAG.fullmatch(tag)


USED_AS[mustache_front._EXPR_TOKEN.pattern] = (
    "a tokenizer: matched by _Parser.words only where the last token ended, and only up to "
    "the tag's last ']' (after it _EXPR_TOKEN_FLAT reads the tokens)", _words)
USED_AS[format_front._PART.pattern] = (
    "run on the 'rest' group of a _FIELD match: a chain of .name and closed [..] items",
    _format_parts)
USED_AS[pystrings._ASSIGNED_TAIL.pattern] = (
    "matched only where 'prompt', 'template' or 'instructions' ends (pystrings._assigned)",
    _assigned)
USED_AS[template_text._CONTROL_TAG.pattern] = (
    "fullmatch against one tag's text; lines are read by template_text._strip_control",
    _control)

# ----------------------------------------------------------------------------- collection

_FLAGS_AT = {"compile": 1, "search": 2, "match": 2, "fullmatch": 2, "finditer": 2,
             "findall": 2, "split": 3, "sub": 4, "subn": 4}


def _flags(node: ast.expr | None) -> int | None:
    """The value of a flags argument made of ``re.X`` constants, or None."""
    if node is None:
        return 0
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == "re" and isinstance(getattr(re, node.attr, None), int):
        return int(getattr(re, node.attr))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _flags(node.left), _flags(node.right)
        return None if left is None or right is None else left | right
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    return None


def _literal_patterns(root: Path) -> Iterator[tuple[re.Pattern[Any], str]]:
    """The constant patterns passed to ``re.compile``/``re.search``/... in the sources."""
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("server/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.func.attr in _FLAGS_AT and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, (str, bytes))):
                continue
            at = _FLAGS_AT[node.func.attr]
            given = node.args[at] if len(node.args) > at else next(
                (k.value for k in node.keywords if k.arg == "flags"), None)
            flags = _flags(given)
            assert flags is not None, f"{rel}:{node.lineno}: flags that are not re constants"
            yield re.compile(node.args[0].value, flags), f"{rel}:{node.lineno}"


def _module_patterns() -> Iterator[tuple[re.Pattern[Any], str]]:
    """Module-level compiled patterns of every module but the optional language server."""
    for info in pkgutil.walk_packages(evallint.__path__, "evallint."):
        if info.name == "evallint.server" or info.name.startswith("evallint.server."):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            yield from _patterns_in(value, f"{info.name}.{name}", 2)


def _patterns_in(value: object, where: str, depth: int) -> Iterator[tuple[re.Pattern[Any], str]]:
    if isinstance(value, re.Pattern):
        yield value, where
    elif depth and isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            yield from _patterns_in(item, where + "[]", depth - 1)
    elif depth and isinstance(value, dict):
        for item in (*value.keys(), *value.values()):
            yield from _patterns_in(item, where + "{}", depth - 1)


@functools.cache
def all_patterns() -> dict[tuple[str | bytes, int], str]:
    """(pattern, flags) -> where it was found first."""
    found: dict[tuple[str | bytes, int], str] = {}
    for pattern, where in (*_module_patterns(),
                           *_literal_patterns(Path(evallint.__file__).parent)):
        found.setdefault((pattern.pattern, pattern.flags), where)
    return found


# ----------------------------------------------------------------------------- timing


def hostile_inputs(size: int = SIZE) -> list[tuple[str, str]]:
    """(label, text) pairs of about ``size`` characters."""
    out = [(repr(unit), unit * (size // len(unit))) for unit in UNITS]
    for start, unit, end in MIXTURES:
        run = unit * ((size - len(start) - len(end)) // len(unit))
        out.append((f"{start!r} + {unit!r}*n + {end!r}", start + run + end))
    return out


class _TooSlow(Exception):
    pass


_TIMERS = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _interrupt(signum: int, frame: object) -> None:
    raise _TooSlow


@contextmanager
def _backstop() -> Iterator[None]:
    """Interrupt a run after BACKSTOP seconds (where the platform has interval timers and the
    tests run in the main thread)."""
    if not _TIMERS:
        yield
        return
    old = signal.signal(signal.SIGALRM, _interrupt)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _timed(run: Callable[[str], object], text: str) -> float:
    """Seconds ``run(text)`` takes (inf past BACKSTOP), with the cyclic collector off: late
    in a full test run the heap is large, and a collection that a tokenizer's allocations
    set off would be timed as the pattern's (0.03 s alone, 0.29 s there)."""
    enabled = gc.isenabled()
    gc.disable()
    if _TIMERS:
        signal.setitimer(signal.ITIMER_REAL, BACKSTOP)
    start = time.perf_counter()
    try:
        run(text)
    except _TooSlow:
        return float("inf")
    finally:
        if _TIMERS:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if enabled:
            gc.enable()
    return time.perf_counter() - start


def _drain(pattern: re.Pattern[Any], text: str | bytes) -> None:
    for _ in pattern.finditer(text):
        pass


def test_the_collection_finds_every_pattern() -> None:
    patterns = all_patterns()
    assert len(patterns) >= 120, f"only {len(patterns)} patterns found: the collection broke"
    literal = list(_literal_patterns(Path(evallint.__file__).parent))
    module = list(_module_patterns())
    assert len(literal) >= 100 and len(module) >= 100, (len(literal), len(module))
    from evallint import classify

    assert (classify._PYDANTIC_EVALS.pattern, classify._PYDANTIC_EVALS.flags) in patterns
    assert any(where.startswith("executor/") for where in patterns.values())  # re.search(...)
    texts = {p for p, _ in patterns}
    for used in USED_AS:  # a declared pattern that no longer exists is a stale declaration
        assert used in texts, f"USED_AS names a pattern evallint no longer has: {used!r}"


def _pattern_run(source: str | bytes, flags: int) -> Callable[[str], object]:
    """How a pattern is timed: its declared use, or finditer over the whole input."""
    if source in USED_AS:
        return USED_AS[source][1]
    pattern = re.compile(source, flags)
    if isinstance(source, bytes):
        return lambda text: _drain(pattern, text.encode())
    return lambda text: _drain(pattern, text)


def _screened(run: Callable[[str], object], short: str, full: str) -> float:
    """The time ``run`` takes on ``full``, when its time on ``short`` says it may be slow."""
    took = _timed(run, short)
    return _timed(run, full) if took > SCREEN else took


def test_every_pattern_is_linear_on_hostile_input() -> None:
    inputs = list(zip(hostile_inputs(SIZE // 4), hostile_inputs(), strict=True))
    slow: list[tuple[float, str, str, str]] = []
    with _backstop():
        for (source, flags), where in all_patterns().items():
            run = _pattern_run(source, flags)
            for (_, short), (label, full) in inputs:
                took = _screened(run, short, full)
                if took > BOUND:
                    shown = source if isinstance(source, str) else source.decode("latin-1")
                    slow.append((took, where, label, shown))
                    break  # one slow input tells (and keeps a failing run short)
    slow.sort(reverse=True)
    assert not slow, f"{len(slow)} slow patterns on {SIZE} characters (bound {BOUND} s):\n" + (
        "\n".join(f"  {took:.2f} s  {where} on {label}: {shown[:100]!r}"
                  for took, where, label, shown in slow[:20]))


def _labelled_everywhere(text: str) -> None:
    tmap = template_text.TextMap.of(text)
    for at in range(0, len(text), 7):
        tmap.labelled(at)


# Hand-written scans that replaced patterns (tag closers, control tags, fences are found with
# str.find): name -> what runs it on a hostile input.
SCANS: dict[str, Callable[[str], object]] = {
    "template_text._template_tags": lambda text: template_text._template_tags(
        text.replace("\n", " ")),
    "template_text._strip_control": lambda text: template_text._strip_control(
        text.replace("\n", " ")),
    "TextMap.labelled": _labelled_everywhere,
    "rulechecks.strip_fence": lambda text: strip_fence("```\n" + text + "\n```"),
    "verdict._fenced": lambda text: _fenced("```json\n" + text),
}


def test_the_scans_that_replaced_patterns_are_linear() -> None:
    slow: list[str] = []
    with _backstop():
        for label, text in hostile_inputs():
            for name, scan in SCANS.items():
                took = _timed(scan, text)
                if took > BOUND:
                    slow.append(f"  {took:.2f} s  {name} on {label}")
    assert not slow, "slow scans:\n" + "\n".join(slow)


# ----------------------------------------------------------------------------- end to end

HOSTILE_TREE = {
    # YAML is sniffed for its kind in discovery: blank lines once stalled it for minutes
    "evals/blank.yaml": "\n" * 4096,
    "evals/metric.yml": "metric: x\n" + "\n" * 4086,
    "prompts/blanks.hbs": "{{" + " " * 100_000 + "=}}\n",
    "prompts/quote.hbs": "Answer: {{ '" + "[  '" * 25_000 + "}}\n",
    "prompts/brackets.j2": "Output format:\n" + "[[" * 50_000 + "\n",
    "prompts/braces.md": "Response: " + "{{" * 100_000,
    "prompts/values.hbs": "Answer: " + "{{a}}" * 10_000 + "\n",
    "prompts/open.md": "Rate the answer.\n" + "{%" * 100_000 + "\n",
    "prompts/tags.md": "Evaluate the answer.\nReply: {{ output }} " + "{#" * 50_000 + "\n",
    "prompts/heading.md": "# Judge\nEvaluate the answer.\n## a" + " " * 100_000 + "b\n"
                          "Reply: {{ output }}\n",
    "prompts/label.md": "Evaluate the answer.\na" + "_" * 100_000 + "x\n{{ output }}\n",
    # (not patterns, but walks that were once per heading or variable over the whole text)
    "prompts/sections.md": "Evaluate the answer.\n" + "```\n```\n# h\n" * 12_000,
    "prompts/history.md": "# Conversation between User and AI\nEvaluate the answer.\n"
                          + "{{ history }}\n" * 10_000,
    "pkg/mod.py": "import os\nfrom" + "\t" * 100_000 + "-import x\n",
    ".claude/agents/lister.md": "---\nname: lister\ndescription: grades answers\ntools:\n"
                                "  - Bash" + " " * 100_000 + "x\n---\nGrade the answer.\n",
}


def test_a_hostile_tree_is_checked_well_inside_the_time_budget(tmp_path: Path) -> None:
    write_files(tmp_path, HOSTILE_TREE)
    budget = 5.0
    start = time.perf_counter()
    result = lint_tree(tmp_path, config={"time-budget": budget})
    took = time.perf_counter() - start
    unparsable = [f for f in result.findings if f.code == "EL901"]
    # (EL901 is reported in this run: the 200 KB of "{{" is an unclosed raw block)
    assert any(f.path.endswith("braces.md") for f in unparsable), unparsable
    timed_out = [f for f in unparsable if "time budget" in f.message]
    assert not timed_out, "\n".join(f"{f.path}: {f.message}" for f in timed_out)
    assert took < budget, f"checking the hostile tree took {took:.1f} s"
