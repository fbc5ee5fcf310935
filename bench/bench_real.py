"""Benchmark ``evallint check`` on real public trees, beside read + ``ast.parse`` of the same files.

A synthetic corpus flatters the figure when the prefilter drops most of it; real evaluation code
mostly passes the prefilter. This script exports pinned commits of public repositories from git
mirrors (``fetch``-ed copies; nothing is downloaded here) into a scratch folder outside this
repository, and prints for each tree:

* files and bytes that evallint reads (Python and notebooks by its own discovery),
* read + ``ast.parse`` of the Python files in one process (the baseline; notebooks' code cells),
  and the same in a fresh interpreter, its start-up counted as ``check``'s is,
* ``evallint check --no-cache`` (cold), a first run with an empty cache (what CI meets: it
  also writes every entry), a warm run with nothing changed, a
  warm run after a one-line edit to one analysed Python file, and one after an edit to a
  prompt, template, agent or config file (the first the tree has), each a fresh process,
* peak RSS of each run,
* with ``--peers PYTHON`` (an interpreter with ``aiproof`` and ``agentguard-lint`` installed, in a
  virtual environment of their own), the same tree through agentguard's CLI and through
  aiproof's Python API over the files evallint reads, each a fresh process, side by side.

    python bench/bench_real.py [--mirrors /work/.mirror] [--only ragas,dspy] [--runs 3]

Trees and commits are listed in TREES; a tree whose mirror is missing is skipped with a note.
Figures are medians of ``--runs`` runs. The baseline, the cold run and the peers' cold runs
take turns, round by round, and ``x ast`` is the median of each round's ratio, so that a
drift in the machine's speed between spells does not skew it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from parse_all import parse_all  # a sibling script

ROOT = Path(__file__).resolve().parents[1]

# name -> (mirror folder name, pinned commit)
TREES: dict[str, tuple[str, str]] = {
    "ragas": ("explodinggradients+ragas", "3e28e9dec93897f47a98065be4c62f6d072a45a7"),
    "deepeval": ("confident-ai+deepeval", "a2e0d4cfd3118352d321c1c84bdeba17d4a201bc"),
    "openai-evals": ("openai+evals", "4bfc1f58a821685acb40bb28ba54131740535046"),
    "anthropic-cookbook": ("anthropics+anthropic-cookbook",
                           "4b36a1e1f64361397f4cbe4fbc7cdace338f16f8"),
    "dspy": ("stanfordnlp+dspy", "4ed377ee9110e912d4f5e1be43b317b87455053c"),
}

_WRAPPER = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
tail = (p.stderr.strip().splitlines() or [''])[-1]
print(json.dumps([wall, rss, p.returncode, tail]))
"""


def export(mirror: Path, commit: str, dest: Path) -> None:
    """The files of ``commit`` that evallint could read (by suffix) written under ``dest``, made
    a git repo so that evallint's git-aware discovery behaves as in a checkout. Blobs a mirror
    lacks (large files are left out of snapshots) are skipped."""
    sys.path.insert(0, str(ROOT / "src"))
    from evallint.discovery import CANDIDATE_SUFFIXES

    listing = subprocess.run(["git", "--git-dir", str(mirror), "ls-tree", "-r", "-z", commit],
                             capture_output=True, check=True).stdout
    wanted: list[tuple[str, str]] = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, kind, sha = meta.split()
        path = name.decode("utf-8", "surrogateescape")
        if kind == b"blob" and mode != b"120000" and Path(path).suffix.lower() in \
                CANDIDATE_SUFFIXES:
            wanted.append((sha.decode(), path))
    batch = subprocess.run(["git", "--git-dir", str(mirror), "cat-file", "--batch"],
                           input=b"".join(f"{sha}\n".encode() for sha, _ in wanted),
                           capture_output=True, check=True).stdout
    at = 0
    for _sha, path in wanted:
        end = batch.index(b"\n", at)
        header = batch[at:end].split()
        at = end + 1
        if len(header) < 3 or header[1] != b"blob":  # "<sha> missing"
            continue
        size = int(header[2])
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[at:at + size])
        at += size + 1
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "tree")


def git(tree: Path, *args: str) -> None:
    """``git`` in ``tree`` as a bench user (no identity of the machine's needed)."""
    subprocess.run(["git", "-C", str(tree), "-c", "user.email=b@example.com", "-c",
                    "user.name=bench", *args], check=True, capture_output=True)


def listed(tree: Path) -> list[tuple[str, str]]:
    """``(path, kind)`` of every file evallint checks in ``tree`` (``check --show-files``)."""
    out = subprocess.run([sys.executable, "-m", "evallint", "check", "--show-files"], cwd=tree,
                         capture_output=True, text=True, check=False, env=_env())
    return [(path, kind) for path, _, kind in (line.partition("\t")
                                               for line in out.stdout.splitlines())]


def evallint_files(tree: Path) -> list[Path]:
    return [tree / path for path, kind in listed(tree) if kind in ("python", "notebook")]


def baseline(files: list[Path]) -> float:
    """Read + ``ast.parse`` of every file (a notebook: its code cells joined)."""
    start = time.perf_counter()
    parse_all(map(str, files))
    return time.perf_counter() - start


def baseline_fresh(files: list[Path]) -> float:
    """:func:`baseline` in a fresh interpreter, as ``check`` runs: its start-up counted too
    (on a small tree the start-up is most of what any command-line tool pays)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, str(Path(__file__).with_name("parse_all.py"))],
                   input="\n".join(map(str, files)), capture_output=True, text=True, check=False)
    return time.perf_counter() - start


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode compiled once, not per run
    # ``-m`` puts the tree first on sys.path, where a ``types.py`` of its own (openai's
    # simple-evals has one) shadows the standard library before evallint starts; the installed
    # ``evallint`` command has no such entry (Python 3.11+ reads this; 3.10 ignores it)
    env["PYTHONSAFEPATH"] = "1"
    return env


def run(tree: Path, *args: str) -> tuple[float, float, int, str]:
    cmd = [sys.executable, "-c", _WRAPPER, sys.executable, "-m", "evallint", "check", *args]
    out = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, check=True, env=_env())
    wall, rss, code, tail = json.loads(out.stdout.strip())
    return float(wall), float(rss), int(code), str(tail)


_AIPROOF = """
import sys, aiproof
for path in sys.stdin.read().splitlines():
    try:
        text = open(path, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError):
        continue
    aiproof.check(text, path)
"""


def run_peer(tree: Path, cmd: list[str], stdin: str = "") -> float:
    """Wall time of a peer's run on ``tree`` (its exit status is its own business)."""
    start = time.perf_counter()
    subprocess.run(cmd, cwd=tree, input=stdin, capture_output=True, text=True, check=False)
    return time.perf_counter() - start


def peer_runs(tree: Path, python: Path | None) -> dict[str, Callable[[], float]]:
    """One cold run of each peer installed beside ``python`` (none without it)."""
    if python is None:
        return {}
    paths = "\n".join(path for path, _ in listed(tree))
    agentguard = python.parent / "agentguard"
    out: dict[str, Callable[[], float]] = {}
    if agentguard.exists():
        out["agentguard"] = lambda: run_peer(tree, [str(agentguard), "."])
    out["aiproof"] = lambda: run_peer(tree, [str(python), "-c", _AIPROOF], paths)
    return out


def python_to_edit(files: list[Path]) -> Path | None:
    """The first Python file that calls an SDK (an analysed file)."""
    for p in files:
        if p.suffix == ".py":
            text = p.read_text(encoding="utf-8", errors="replace")
            if "messages.create" in text or "completions.create" in text:
                return p
    return None


# What a prompt engineer edits between runs, and text to append that keeps each kind valid.
_OTHER_KINDS = ("prompt", "jinja", "mustache", "prompty", "dotprompt", "agent", "promptfoo",
                "openai-evals", "loop-spec", "judge-config", "prompt-collection")


def other_to_edit(tree: Path) -> tuple[Path, str] | None:
    """The first file of a prompt, template, agent or config kind, and its kind."""
    return next(((tree / path, kind) for path, kind in listed(tree) if kind in _OTHER_KINDS),
                None)


def append_edit(path: Path, n: int) -> None:
    """Change ``path`` as an edit does: a statement for Python (a comment would leave the
    module's analysis input as it was), a comment for YAML, blank space for JSON, a sentence
    for prompt text."""
    if path.suffix == ".py":
        extra = f"\n_bench_edit = {n}\n"
    elif path.suffix in (".yaml", ".yml"):
        extra = f"\n# bench edit {n}\n"
    elif path.suffix in (".json", ".jsonl"):
        extra = "\n"
    else:
        extra = f"\nKeep the answer short ({n}).\n"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(extra)


def bench_tree(name: str, tree: Path, runs: int, peers: Path | None = None) -> dict[str, Any]:
    files = evallint_files(tree)
    size = sum(p.stat().st_size for p in files)
    # The baseline, the cold run and the peers' cold runs take turns, so that the ratios
    # compare runs of one spell (the machine's speed drifts between spells).
    others = peer_runs(tree, peers)
    bases: list[float] = []
    fresh: list[float] = []
    cold: list[tuple[float, float, int, str]] = []
    peer_times: dict[str, list[float]] = {k: [] for k in others}
    for _ in range(runs):
        bases.append(baseline(files))
        fresh.append(baseline_fresh(files))
        cold.append(run(tree, "--no-cache"))
        for k, one in others.items():
            peer_times[k].append(one())
    firsts: list[float] = []
    for _ in range(runs):  # each with an empty cache
        shutil.rmtree(tree / ".evallint_cache", ignore_errors=True)
        firsts.append(run(tree)[0])
    warm = [run(tree) for _ in range(runs)]
    edits: list[float] = []
    target = python_to_edit(files)
    if target is not None:
        for n in range(runs):  # each run after one more edit
            append_edit(target, n)
            edits.append(run(tree)[0])
    other = other_to_edit(tree)
    other_edits: list[float] = []
    if other is not None:
        for n in range(runs):
            append_edit(other[0], n)
            other_edits.append(run(tree)[0])
    cold_s = statistics.median(c[0] for c in cold)
    warm_s = statistics.median(w[0] for w in warm)
    return {
        "tree": name, "files": len(files), "mb": size / 1e6, "base": statistics.median(bases),
        "x_ast": statistics.median(c[0] / b for c, b in zip(cold, bases, strict=True)),
        "fresh": statistics.median(fresh),
        "x_fresh": statistics.median(c[0] / b for c, b in zip(cold, fresh, strict=True)),
        "peers": {k: statistics.median(v) for k, v in peer_times.items()}, "cold": cold_s,
        "cold_rss": max(c[1] for c in cold), "first_cached": statistics.median(firsts),
        "warm": warm_s,
        "edit": statistics.median(edits) if edits else None, "summary": cold[0][3],
        "other": (other[1], statistics.median(other_edits)) if other else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--only", default="", help="comma-separated tree names")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--peers", type=Path, help="python of a venv with aiproof, agentguard-lint")
    args = ap.parse_args()
    names = [n for n in TREES if not args.only or n in args.only.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="evallint-real-"))
    print(f"scratch: {scratch} (cpu cores: {os.cpu_count()}, runs: {args.runs}, medians)")
    print(f"{'tree':<20}{'files':>6}{'MB':>6}{'ast s':>7}{'cold s':>8}{'x ast':>7}{'RSS MB':>8}"
          f"{'warm s':>8}{'x cold':>7}{'edit s':>8}{'x warm':>7}")
    try:
        for name in names:
            folder, commit = TREES[name]
            mirror = args.mirrors / folder / "repo"
            if not mirror.exists():
                print(f"{name:<20} skipped: no mirror at {mirror}")
                continue
            tree = scratch / name
            export(mirror, commit, tree)
            r = bench_tree(name, tree, args.runs, args.peers)
            edit = r["edit"]
            print(f"{name:<20}{r['files']:>6}{r['mb']:>6.1f}{r['base']:>7.2f}{r['cold']:>8.2f}"
                  f"{r['x_ast']:>7.2f}{r['cold_rss']:>8.0f}{r['warm']:>8.2f}"
                  f"{r['warm'] / r['cold']:>7.2f}"
                  + (f"{edit:>8.2f}{edit / r['warm']:>7.2f}" if edit else "       -      -"),
                  flush=True)
            print(f"{'':<20}{r['summary']}", flush=True)
            print(f"{'':<20}read + ast.parse in a fresh interpreter: {r['fresh']:.2f} s, "
                  f"cold is {r['x_fresh']:.2f}x that", flush=True)
            print(f"{'':<20}first run with an empty cache (as CI meets it): "
                  f"{r['first_cached']:.2f} s, {r['first_cached'] / r['cold']:.2f}x cold "
                  "(--no-cache)", flush=True)
            if r["other"]:
                kind, secs = r["other"]
                print(f"{'':<20}after editing one {kind} file: {secs:.2f} s, "
                      f"{secs / r['warm']:.2f}x warm", flush=True)
            if r["peers"]:
                print(f"{'':<20}peers, same tree, cold, run in turn: evallint {r['cold']:.2f} s; "
                      + "; ".join(f"{k} {v:.2f} s" for k, v in r["peers"].items()), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
