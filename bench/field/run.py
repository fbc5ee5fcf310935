"""Measure evallint's precision and recall on whole public repositories (the field corpus).

Synthetic fixtures say what a rule was built for; whole repositories say how often it is right
on code nobody wrote for it. Every ``bench/field/*.yaml`` manifest lists public repositories,
each pinned to a commit, with hand-judged findings (``verdicts``: path, line, code and whether
the finding is true, false or debatable, with a reason) and real violations evallint should
report (``misses``). This script exports each pinned commit from its git mirror (``fetch``-ed
copies under ``/work/.mirror``; nothing is downloaded here) into a scratch folder outside this
repository, runs this interpreter's evallint on it, matches the findings to the verdicts by
(path, line, code; a verdict's optional ``name`` picks, among several findings of a rule on one
line, the one whose message names that value), and prints:

* per repository: findings, judged true / false / debatable, not judged, misses found;
* per rule and severity: the same counts and precision, true / (true + false);
* verdicts whose finding is gone (a rule changed: a lost true positive or a fixed false one);
* the findings not judged yet (a count; ``--unjudged`` lists them for the next round);
* each miss, found or not (found: a finding with one of its codes on that path, at that line
  when the miss gives one).

    python bench/field/run.py [--only owner/name,...] [--mirrors DIR] [--keep] [--unjudged]

Run by hand, not by the tests. Exit 0, or 2 on a tool error (a malformed manifest, a failed
export, evallint exiting 2 or printing no JSON).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
VERDICTS = ("true", "false", "debatable")
SEVERITIES = ("error", "warning", "note")


class ManifestError(Exception):
    """A manifest that does not follow the format: judging on it would count wrong."""


@dataclass(frozen=True)
class Verdict:
    """One hand-judged finding, named by its coordinates (and cell, for notebooks)."""

    path: str
    line: int
    code: str
    verdict: str
    reason: str
    cell: int | None = None
    # what the finding names (a value in backticks in its message), when several findings
    # of one rule share a line: `trace.userMessage` and `trace.plan.stance` at one call
    name: str | None = None

    def key(self) -> tuple[str, int | None, int, str]:
        return (self.path, self.cell, self.line, self.code)


@dataclass(frozen=True)
class Miss:
    """A real violation that evallint should report, with the codes that would catch it."""

    path: str
    invariant: str
    codes: tuple[str, ...]
    reason: str
    line: int | None = None


@dataclass
class Repo:
    """One pinned repository of the corpus, merged over every manifest that names it."""

    repo: str
    commit: str
    why: str
    manifest: str
    verdicts: list[Verdict] = field(default_factory=list)
    misses: list[Miss] = field(default_factory=list)


@dataclass
class Outcome:
    """What one run on one repository gave, matched against its manifest entry."""

    repo: Repo
    findings: list[dict[str, Any]] = field(default_factory=list)
    judged: dict[int, Verdict] = field(default_factory=dict)  # finding index -> verdict
    stale: list[Verdict] = field(default_factory=list)  # verdicts that matched no finding
    found: list[bool] = field(default_factory=list)  # one per miss
    note: str = ""  # why the repository was skipped, when it was


def _field(entry: dict[str, Any], name: str, kind: type, where: str) -> Any:
    """A required field of a manifest entry, of the given type (a bool is not an int here)."""
    value = entry.get(name)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ManifestError(f"{where}: `{name}` must be a {kind.__name__}, got {value!r}")
    return value


def _verdict(entry: Any, where: str) -> Verdict:
    """Parse one verdict entry; a typo in `verdict` must not silently count as judged."""
    if not isinstance(entry, dict):
        raise ManifestError(f"{where}: a verdict must be a mapping")
    value = entry.get("verdict")
    # YAML reads a bare `true`/`false` as a bool: accept it as the word it spells.
    word = str(value).lower() if isinstance(value, bool) else value
    if word not in VERDICTS:
        raise ManifestError(f"{where}: verdict must be one of {VERDICTS}, got {value!r}")
    cell = entry.get("cell")
    if cell is not None and (not isinstance(cell, int) or isinstance(cell, bool)):
        raise ManifestError(f"{where}: `cell` must be an int")
    name = entry.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise ManifestError(f"{where}: `name` must be a non-empty string")
    return Verdict(
        path=_field(entry, "path", str, where),
        line=_field(entry, "line", int, where),
        code=_field(entry, "code", str, where),
        verdict=word,
        reason=_field(entry, "reason", str, where),
        cell=cell,
        name=name,
    )


def _miss(entry: Any, where: str) -> Miss:
    """Parse one miss entry: the codes say which findings would count as catching it."""
    if not isinstance(entry, dict):
        raise ManifestError(f"{where}: a miss must be a mapping")
    codes = entry.get("codes")
    if not isinstance(codes, list) or not codes or not all(isinstance(c, str) for c in codes):
        raise ManifestError(f"{where}: `codes` must be a non-empty list of rule codes")
    line = entry.get("line")
    if line is not None and (not isinstance(line, int) or isinstance(line, bool)):
        raise ManifestError(f"{where}: `line` must be an int when given")
    return Miss(
        path=_field(entry, "path", str, where),
        invariant=_field(entry, "invariant", str, where),
        codes=tuple(codes),
        reason=_field(entry, "reason", str, where),
        line=line,
    )


def load_manifests(folder: Path) -> list[Repo]:
    """Every repository of every manifest in the folder, in manifest then file order.

    A repository named by two manifests (two judges picked it) is merged: one run, both sets of
    verdicts; the second commit must agree with the first or the verdicts would not line up.
    """
    repos: dict[str, Repo] = {}
    for manifest in sorted(folder.glob("*.yaml")):
        data = yaml.safe_load(manifest.read_text(encoding="utf-8")) or {}
        entries = data.get("repos") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise ManifestError(f"{manifest.name}: top level must have a `repos:` list")
        for i, entry in enumerate(entries):
            where = f"{manifest.name} repos[{i}]"
            if not isinstance(entry, dict):
                raise ManifestError(f"{where}: must be a mapping")
            name = _field(entry, "repo", str, where)
            commit = _field(entry, "commit", str, where)
            if len(commit) != 40 or any(c not in "0123456789abcdef" for c in commit):
                raise ManifestError(f"{where}: commit must be 40 lowercase hex digits")
            verdicts = [_verdict(v, f"{where} ({name}) verdicts[{j}]")
                        for j, v in enumerate(entry.get("verdicts") or [])]
            misses = [_miss(m, f"{where} ({name}) misses[{j}]")
                      for j, m in enumerate(entry.get("misses") or [])]
            if name in repos:
                known = repos[name]
                if known.commit != commit:
                    raise ManifestError(f"{where}: {name} pinned to {commit[:12]} here and to "
                                        f"{known.commit[:12]} in {known.manifest}")
                known.verdicts.extend(verdicts)
                known.misses.extend(misses)
                continue
            repos[name] = Repo(name, commit, _field(entry, "why", str, where), manifest.name,
                               verdicts, misses)
    return list(repos.values())


def find_git_dir(mirrors: Path, repo: str) -> Path | None:
    """The bare git directory of a mirror (``owner+name/`` or one or two folders below it)."""
    top = mirrors / repo.replace("/", "+")
    if not top.is_dir():
        return None
    for candidate in [top, *sorted(top.glob("*")), *sorted(top.glob("*/*"))]:
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def export(git_dir: Path, commit: str, dest: Path) -> str:
    """Write the tree of the commit into dest; return a note (missing blobs) or raise.

    ``git archive`` first; snapshots leave large blobs out (a partial clone), and then archive
    fails, so the fallback writes every blob the mirror has, one by one, and says how many it
    lacked. Raises ExportError when the commit itself is not there.
    """
    probe = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "-e",
                            f"{commit}^{{commit}}"], capture_output=True, text=True)
    if probe.returncode != 0:
        raise ExportError(f"commit {commit[:12]} is not in the mirror {git_dir}")
    with tempfile.TemporaryFile() as tar:
        archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", commit],
                                 stdout=tar, stderr=subprocess.DEVNULL)
        if archive.returncode == 0:
            tar.seek(0)
            untar = subprocess.run(["tar", "-x", "-C", str(dest)], stdin=tar,
                                   capture_output=True)
            if untar.returncode != 0:
                raise ExportError(f"tar failed: {untar.stderr.decode(errors='replace')}")
            return ""
    missing = _export_blobs(git_dir, commit, dest)
    return f"{missing} blobs absent from the mirror, left out" if missing else ""


class ExportError(Exception):
    """The pinned tree could not be written out: the repository cannot be measured."""


def _export_blobs(git_dir: Path, commit: str, dest: Path) -> int:
    """Write each blob of the commit that the mirror holds; return how many it lacks."""
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", commit],
                             capture_output=True, check=True).stdout
    wanted: list[tuple[str, str, bytes]] = []  # sha, path, mode
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, kind, sha = meta.split()
        if kind == b"blob":
            wanted.append((sha.decode(), name.decode("utf-8", "surrogateescape"), mode))
    batch = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
                           input=b"".join(f"{sha}\n".encode() for sha, _, _ in wanted),
                           capture_output=True, check=True).stdout
    at, missing = 0, 0
    for _sha, path, mode in wanted:
        end = batch.index(b"\n", at)
        header = batch[at:end].split()
        at = end + 1
        if len(header) < 3 or header[1] != b"blob":  # "<sha> missing"
            missing += 1
            continue
        size = int(header[2])
        body = batch[at:at + size]
        at += size + 1
        target = dest / path
        if not target.resolve().is_relative_to(dest.resolve()):
            continue  # a hostile path: never write outside the scratch folder
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == b"120000":
            continue  # symlinks are left out: they could point anywhere
        target.write_bytes(body)
    return missing


_ENTRY = ("import sys\nif not getattr(sys.flags, 'safe_path', False): del sys.path[0]\n"
          "from evallint.cli import entry; entry()")


def run_evallint(tree: Path) -> list[dict[str, Any]]:
    """This interpreter's evallint on the tree root; raises RuntimeError on a tool error.

    A tree where evallint recognises no file at all is a result (nothing found), not an error.
    """
    # Not ``python -m``: that puts the tree first on sys.path, and a repository's own
    # ``types.py`` or ``json.py`` would then shadow the standard library (openai/simple-evals).
    # Under PYTHONSAFEPATH there is no such first entry to drop: PYTHONPATH's first stays.
    proc = subprocess.run([sys.executable, "-c", _ENTRY, "check", "--no-cache",
                           "--output-format", "json", "."],
                          cwd=tree, capture_output=True, text=True)
    if proc.returncode == 2 and "no files to check" in proc.stderr:
        return []
    if proc.returncode not in (0, 1):
        tail = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise RuntimeError(f"evallint exited {proc.returncode}: {tail}")
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        tail = (proc.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        raise RuntimeError(f"evallint printed no JSON ({exc}); stderr ends: {tail}") from exc
    if not isinstance(data, list):
        raise RuntimeError("evallint's JSON is not a list of findings")
    return data


def match(repo: Repo, findings: list[dict[str, Any]]) -> Outcome:
    """Pair findings with verdicts by (path, cell, line, code, and the name a verdict gives)
    and check each miss.

    A verdict without a cell matches any cell, so plain files need no cell and a notebook
    verdict only needs one when two cells have a finding on the same line.
    """
    out = Outcome(repo, findings)
    for v in repo.verdicts:
        hits = [i for i, f in enumerate(findings)
                if (f.get("path"), f.get("line"), f.get("code")) == (v.path, v.line, v.code)
                and (v.cell is None or f.get("cell") == v.cell)
                and (v.name is None or f"`{v.name}`" in str(f.get("message", "")))]
        if not hits:
            out.stale.append(v)
        for i in hits:
            out.judged.setdefault(i, v)
    for m in repo.misses:
        out.found.append(any(f.get("path") == m.path and f.get("code") in m.codes
                             and (m.line is None or f.get("line") == m.line)
                             for f in findings))
    return out


def precision(counts: Counter[str]) -> str:
    """true / (true + false) as a percentage, or a dash when nothing decisive was judged."""
    decided = counts["true"] + counts["false"]
    return f"{100 * counts['true'] / decided:5.1f}%" if decided else "    -"


def _where(f: dict[str, Any]) -> str:
    cell = f" cell {f['cell']}" if f.get("cell") else ""
    return f"{f.get('path')}:{f.get('line')}{cell}"


def report(outcomes: list[Outcome], show_unjudged: bool) -> None:
    """Print the tables: per repository, per rule and severity, stale verdicts, misses."""
    print("== per repository")
    print(f"{'repo':44} {'find':>5} {'err':>4} {'warn':>4} {'note':>4} {'true':>4} "
          f"{'false':>5} {'deb':>4} {'unj':>4} {'miss':>7}")
    for o in outcomes:
        if o.note:
            print(f"{o.repo.repo:44} skipped: {o.note}")
            continue
        sevs = Counter(str(f.get("severity")) for f in o.findings)
        ver = Counter(v.verdict for v in o.judged.values())
        unj = len(o.findings) - len(o.judged)
        print(f"{o.repo.repo:44} {len(o.findings):5} {sevs['error']:4} {sevs['warning']:4} "
              f"{sevs['note']:4} {ver['true']:4} {ver['false']:5} {ver['debatable']:4} {unj:4} "
              f"{sum(o.found):3}/{len(o.found):<3}")

    by_rule: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    by_sev: dict[str, Counter[str]] = defaultdict(Counter)
    for o in outcomes:
        for i, f in enumerate(o.findings):
            verdict = o.judged[i].verdict if i in o.judged else "unjudged"
            severity = str(f.get("severity"))
            for counts in (by_rule[(str(f.get("code")), severity)], by_sev[severity]):
                counts["findings"] += 1
                counts[verdict] += 1
    print("\n== per rule and severity (precision = true / (true + false))")
    header = (f"{'rule':7} {'severity':8} {'find':>5} {'true':>5} {'false':>5} {'deb':>4} "
              f"{'unj':>5} {'precision':>9}")
    print(header)
    for (code, sev), c in sorted(by_rule.items(), key=lambda kv: (
            -_rank(kv[0][1]), kv[0][0])):
        print(f"{code:7} {sev:8} {c['findings']:5} {c['true']:5} {c['false']:5} "
              f"{c['debatable']:4} {c['unjudged']:5} {precision(c):>9}")
    print("\n== per severity")
    print(header.replace("rule    ", ""))
    for sev in sorted(by_sev, key=lambda s: -_rank(s)):
        c = by_sev[sev]
        print(f"{sev:8} {c['findings']:5} {c['true']:5} {c['false']:5} {c['debatable']:4} "
              f"{c['unjudged']:5} {precision(c):>9}")

    stale = [(o.repo.repo, v) for o in outcomes if not o.note for v in o.stale]
    print(f"\n== verdicts with no finding now: {len(stale)}")
    for name, v in stale:
        print(f"  {name}: {v.path}:{v.line} {v.code} (judged {v.verdict})")

    unjudged = [(o.repo.repo, f) for o in outcomes
                for i, f in enumerate(o.findings) if i not in o.judged]
    print(f"\n== findings not judged: {len(unjudged)}"
          + ("" if show_unjudged or not unjudged else " (--unjudged lists them)"))
    if show_unjudged:
        for name, f in unjudged:
            print(f"  {name}: {_where(f)} {f.get('code')} {f.get('severity')} "
                  f"{f.get('message')}")

    misses = [(o.repo.repo, m, hit) for o in outcomes if not o.note
              for m, hit in zip(o.repo.misses, o.found, strict=True)]
    print(f"\n== misses: {sum(hit for _, _, hit in misses)} found of {len(misses)}")
    for name, m, hit in misses:
        at = f":{m.line}" if m.line is not None else ""
        print(f"  [{'found' if hit else 'MISSED'}] {name}: {m.path}{at} {m.invariant} "
              f"{','.join(m.codes)}")


def _rank(severity: str) -> int:
    return {"error": 3, "warning": 2, "note": 1}.get(severity, 0)


def main(argv: list[str] | None = None) -> int:
    """Run the corpus; 2 on a tool error, else 0 whatever the findings are."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--only", default="", help="owner/name,... to run (default: all)")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"),
                        help="folder of the git mirrors (owner+name/...)")
    parser.add_argument("--keep", action="store_true", help="keep the exported trees")
    parser.add_argument("--unjudged", action="store_true", help="list every unjudged finding")
    parser.add_argument("--manifests", type=Path, default=HERE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        repos = load_manifests(args.manifests)
    except (ManifestError, yaml.YAMLError, OSError) as exc:
        print(f"manifest error: {exc}", file=sys.stderr)
        return 2
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    unknown = only - {r.repo for r in repos}
    if unknown:
        print(f"not in any manifest: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    scratch = Path(tempfile.mkdtemp(prefix="evallint-field-"))
    outcomes: list[Outcome] = []
    failed = False
    try:
        for repo in repos:
            if only and repo.repo not in only:
                continue
            git_dir = find_git_dir(args.mirrors, repo.repo)
            if git_dir is None:
                outcomes.append(Outcome(repo, note=f"no mirror under {args.mirrors}"))
                continue
            tree = scratch / repo.repo.replace("/", "+")
            tree.mkdir(parents=True)
            try:
                gaps = export(git_dir, repo.commit, tree)
            except (ExportError, subprocess.CalledProcessError, OSError) as exc:
                outcomes.append(Outcome(repo, note=f"export failed: {exc}"))
                failed = True
                continue
            print(f"-- {repo.repo}@{repo.commit[:12]}" + (f" ({gaps})" if gaps else ""),
                  file=sys.stderr, flush=True)
            try:
                findings = run_evallint(tree)
            except RuntimeError as exc:
                outcomes.append(Outcome(repo, note=str(exc)))
                failed = True
                continue
            outcomes.append(match(repo, findings))
            if not args.keep:
                shutil.rmtree(tree, ignore_errors=True)
    finally:
        if args.keep:
            print(f"trees kept under {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    report(outcomes, args.unjudged)
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
