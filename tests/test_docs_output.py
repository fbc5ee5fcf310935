"""Every command output quoted in README.md and docs/*.md is the output of a real run.

A quoted output is a fenced block right after a marker comment:

    <!-- docs-output: KEY: VALUE; KEY: VALUE -->

with the keys (all optional):

* ``run: COMMAND`` -- the command the block quotes the output of. Without it, the block is a
  transcript: each line that starts with ``$ `` is a command and the lines below it, up to the
  next command, are its output.
* ``in: repo`` (the default: the repository root, for commands that write nothing) or
  ``in: copy of PATH, PATH...`` -- a fresh temporary folder holding copies of those paths at
  the same relative places (``results/`` folders left out), for commands that write.
* ``exit: N, N...`` -- the exit code of each command, in order (default 0 for each).
* ``setup: NAME`` -- a step from ``SETUPS`` below, run in the folder before the commands.

Each block's commands run once (blocks with the same commands, folder and setup share the
run) as ``python -m evallint ...``, with no Anthropic key in the environment, a fresh cache
folder, and standard output and error read as one stream in the order they were written.

A quoted line must equal its output line (trailing blanks aside), except that ``…`` in a line
stands for any text there, and a line that is only ``…`` stands for any number of output lines
(none included). A quote covers the whole output of its command: what it leaves out it marks
with ``…``. A stale quote fails with a diff of the quote (its elisions filled in from the
output) against the output.

Text outside marked blocks that reads like command output (``evallint run: ...``, ``Found 3
findings``, ``Fixed 4 findings (78 remaining)``, ``12 files checked``, ``pass rate 72.0%``) fails
too, prose included: such a claim must be a checked quote.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"^<!--\s*docs-output:(?P<body>.*?)-->\s*$")
FENCE = re.compile(r"^(```+|~~~+)")
ELLIPSIS = "…"
LOOKS_LIKE_OUTPUT = re.compile(
    r"\bevallint (?:run|calibrate|report|check|lock|rule|server): "
    r"|\b(?:Found|Fixed) \d+ findings?\b|\b\d+ files checked\b|\bpass rate \d"
    r"|\brequests answered\b|\b\d+/\d+ cases done\b")


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int  # of the opening fence
    end: int  # of the closing fence
    where: tuple[str, ...]  # () for the repository, else the paths copied
    setup: str | None
    commands: tuple[tuple[str, tuple[str, ...]], ...]  # (command, its quoted lines)
    exits: tuple[int, ...]

    @property
    def name(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def _options(body: str, where: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for part in body.split(";"):
        if not part.strip():
            continue
        key, sep, value = part.partition(":")
        key = key.strip()
        if not sep or key not in ("run", "in", "exit", "setup"):
            raise AssertionError(f"{where}: cannot read docs-output option {part.strip()!r} "
                                 "(known: run, in, exit, setup)")
        options[key] = value.strip()
    return options


def blocks() -> list[Block]:
    found = []
    for doc in DOCS:
        lines = doc.read_text(encoding="utf-8").splitlines()
        for n, text in enumerate(lines):
            m = MARKER.match(text.strip())
            if not m:
                continue
            where = f"{doc.relative_to(ROOT)}:{n + 1}"
            opts = _options(m["body"], where)
            start = n + 1
            while start < len(lines) and not lines[start].strip():
                start += 1
            fence = FENCE.match(lines[start]) if start < len(lines) else None
            assert fence, f"{where}: a docs-output marker must be followed by a fenced block"
            end = next((i for i in range(start + 1, len(lines))
                        if lines[i].startswith(fence.group(1))), None)
            assert end is not None, f"{where}: the fenced block is not closed"
            body = [ln.rstrip() for ln in lines[start + 1:end]]
            if "run" in opts:
                commands = ((opts["run"], tuple(body)),)
            else:
                assert body and body[0].startswith("$ "), \
                    f"{where}: a transcript starts with a '$ command' line (or give run: ...)"
                parts: list[tuple[str, list[str]]] = []
                for ln in body:
                    if ln.startswith("$ "):
                        parts.append((ln[2:].strip(), []))
                    else:
                        parts[-1][1].append(ln)
                commands = tuple((c, tuple(out)) for c, out in parts)
            place = opts.get("in", "repo")
            if place == "repo":
                copied: tuple[str, ...] = ()
            else:
                assert place.startswith("copy of "), f"{where}: in: repo | copy of PATH, ..."
                copied = tuple(p.strip() for p in place[len("copy of "):].split(","))
            exits = tuple(int(x) for x in opts["exit"].split(",")) if "exit" in opts \
                else (0,) * len(commands)
            assert len(exits) == len(commands), f"{where}: one exit code per command"
            found.append(Block(doc, start + 1, end + 1, copied, opts.get("setup"), commands,
                               exits))
    return found


# ---------------------------------------------------------------------------- setups


def _judge_moved(root: Path) -> None:
    """The demo loop's judge calibrated (a passing record, dated), then its rubric changed."""
    from evallint.executor.calibcli import lock_target, record_of
    from evallint.executor.calibrate import CalibrationResult, fingerprint
    from evallint.executor.plan import make_plan
    from evallint.executor.spec import load_spec
    from evallint.lockfile import write_calibration

    path = root / "fixtures" / "loop" / "evallint.loop.yaml"
    spec = load_spec(path)
    assert spec.calibration is not None
    target, config_root, key = lock_target(spec)
    metrics = {"auc": 0.97, "kappa": 0.83, "flip_rate": 0.0, "preference_accuracy": 1.0,
               "position_bias": 0.0, "length_gain": 0.0}
    result = CalibrationResult(True, metrics, [], [], 168, 0.0, date="2026-11-23T10:11:00Z")
    write_calibration(target, key, record_of(result, fingerprint(make_plan(spec),
                                                                  spec.calibration,
                                                                  config_root)))
    text = path.read_text(encoding="utf-8")
    assert "  accuracy: 0.5\n  completeness: 0.3\n" in text
    path.write_text(text.replace("  accuracy: 0.5\n  completeness: 0.3\n",
                                 "  accuracy: 0.6\n  completeness: 0.2\n"), encoding="utf-8")


SETUPS: dict[str, Callable[[Path], None]] = {"judge-moved": _judge_moved}


# ---------------------------------------------------------------------------- running


_RUNS: dict[tuple[object, ...], list[tuple[int, list[str]]]] = {}


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="evallint-docs-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_block(block: Block, scratch: Path) -> list[tuple[int, list[str]]]:
    """Each command's exit code and output lines (one run per distinct block)."""
    key = (block.where, block.setup, tuple(c for c, _ in block.commands))
    if key in _RUNS:
        return _RUNS[key]
    home = scratch / f"run{len(_RUNS)}"
    home.mkdir()
    cwd = ROOT
    if block.where:
        cwd = home / "tree"
        for rel in block.where:
            shutil.copytree(ROOT / rel, cwd / rel, ignore=shutil.ignore_patterns(
                "results", "__pycache__", ".evallint_cache"))
    if block.setup is not None:
        assert block.setup in SETUPS, f"{block.name}: no setup named {block.setup!r}"
        SETUPS[block.setup](cwd)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "EVALLINT_"))}
    env.update(EVALLINT_CACHE_DIR=str(home / "cache"), PYTHONUNBUFFERED="1", NO_COLOR="1",
               TERM="dumb")
    out = []
    for command, _ in block.commands:
        argv = shlex.split(command)
        assert argv[0] == "evallint", f"{block.name}: only evallint commands run here"
        proc = subprocess.run([sys.executable, "-m", "evallint", *argv[1:]], cwd=cwd, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300,
                              check=False)
        text = proc.stdout.decode("utf-8", errors="replace")
        out.append((proc.returncode, [ln.rstrip() for ln in text.splitlines()]))
    _RUNS[key] = out
    return out


# ---------------------------------------------------------------------------- matching


def _pattern(line: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(p) for p in line.split(ELLIPSIS)))


def compare(quote: list[str], output: list[str]) -> str | None:
    """None when the quote matches the output; else a diff of the quote, its elisions filled
    from the output as far as it matched, against the output."""
    pats = [None if ln.strip() == ELLIPSIS else _pattern(ln) for ln in quote]
    # reach[i]: output positions where quote line i can start, with how each got there
    reach: list[dict[int, int | None]] = [{0: None}]
    failed_at = None
    for i, pat in enumerate(pats):
        here = reach[-1]
        nxt: dict[int, int | None] = {}
        if pat is None:
            for j in range(min(here), len(output) + 1):
                nxt.setdefault(j, min(here))
        else:
            for j in sorted(here):
                if j < len(output) and pat.fullmatch(output[j]):
                    nxt.setdefault(j + 1, j)
        if not nxt:
            failed_at = i
            break
        reach.append(nxt)
    if failed_at is None and len(output) in reach[-1]:
        return None
    # the quote as far as it matched, elisions filled in, then the rest of it as written
    done = len(reach) - 1
    if failed_at is None:
        end = max(reach[-1])
    elif done and pats[done - 1] is None:  # after "…": line up with the likeliest line
        def likeness(j: int) -> float:
            if j >= len(output):
                return -1.0
            return difflib.SequenceMatcher(None, quote[done], output[j]).ratio()
        end = max(sorted(reach[-1]), key=likeness)
    else:
        end = min(reach[-1])
    filled: list[str] = []
    j = end
    for i in range(done, 0, -1):
        start = reach[i][j]
        assert start is not None
        filled[:0] = output[start:j]  # what quote line i - 1 matched (none, one or more)
        j = start
    expected = filled + quote[done:]
    diff = difflib.unified_diff(expected, output, "quoted", "printed", lineterm="", n=3)
    return "\n".join(diff)


def test_compare_elisions() -> None:
    out = ["a", "b", "c 12 d", "e"]
    assert compare(["a", "…", "c … d", "e"], out) is None
    assert compare(["…", "e"], out) is None
    assert compare(["a", "b", "c 12 d", "e", "…"], out) is None
    assert compare(["a", "…", "c 13 d", "e"], out) is not None
    assert compare(["a", "b"], out) is not None  # the rest of the output is not marked
    diff = compare(["a", "…", "c 12 d", "f"], out)
    assert diff is not None and "-f" in diff and "+e" in diff and "-b" not in diff


BLOCKS = blocks()


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_quoted_output_is_what_the_command_prints(block: Block, scratch: Path) -> None:
    results = run_block(block, scratch)
    problems = []
    for (command, quote), want, (code, output) in zip(block.commands, block.exits, results,
                                                      strict=True):
        if code != want:
            problems.append(f"`{command}` exited {code}, the docs say {want}:\n"
                            + "\n".join(output[-20:]))
            continue
        diff = compare(list(quote), output)
        if diff is not None:
            problems.append(f"the quoted output of `{command}` is stale:\n{diff}")
    assert not problems, f"{block.name}: " + "\n\n".join(problems)


def test_every_output_in_the_docs_is_checked() -> None:
    """Nothing that reads like command output lives outside a docs-output block."""
    quoted = {(b.doc, n) for b in BLOCKS for n in range(b.line, b.end + 1)}
    loose = []
    for doc in DOCS:
        for n, text in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
            if (doc, n) not in quoted and LOOKS_LIKE_OUTPUT.search(text):
                loose.append(f"{doc.relative_to(ROOT)}:{n}: {text.strip()}")
    assert not loose, ("command output quoted outside a docs-output block (mark the block, "
                       "see tests/test_docs_output.py):\n" + "\n".join(loose))


def test_the_markers_were_found() -> None:
    names = {b.doc.name for b in BLOCKS}
    assert {"README.md", "run.md"} <= names
