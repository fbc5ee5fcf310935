"""Run evallint on the labelled dev set of real public files and score it against the labels.

The dev set (``shared/corpus/dev-set.yaml``) names a repository, a commit and a path per entry,
with the invariants (I1–I7) a finding should match and whether evallint should flag, stay
silent, or at most leave a note. This script reads each file from a local mirror of the
repository (fetched beforehand; nothing is downloaded here), writes it to a scratch folder
(outside the repository — nothing fetched is ever committed), runs ``evallint check`` there and
prints expected against found.

    python bench/devset.py [--corpus ../shared/corpus/dev-set.yaml] [--mirrors /work/.mirror]
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from evallint.registry import load_rules

HERE = Path(__file__).resolve().parents[1]


def _extract(mirror: Path, commit: str, path: str, dest: Path) -> bool:
    proc = subprocess.run(["git", "--git-dir", str(mirror), "show", f"{commit}:{path}"],
                          capture_output=True)
    if proc.returncode != 0:
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(proc.stdout)
    return True


def _related_paths(entry: dict[str, Any]) -> list[str]:
    rel = entry.get("related")
    if not rel:
        return []
    return [m.group(1) for m in re.finditer(r"([\w./-]+\.\w+)", str(rel))]


_NAMED = re.compile(r"[\"']((?:file://)?[\w.-]+(?:/[\w.-]+)*\.(?:txt|md|j2|jinja2?|ya?ml|jsonl?|"
                    r"prompt|tmpl))[\"']")


def _named_paths(mirror: Path, commit: str, path: str, text: str) -> list[str]:
    """Files the entry's file names in quotes (a config's templates, ``file://`` targets) that
    exist at that commit, resolved from its folder and up to three folders above: the real
    tree has them beside the config, so the scratch copy must too."""
    out: list[str] = []
    folder = posixpath.dirname(path)
    for m in _NAMED.finditer(text):
        name = m.group(1).removeprefix("file://")
        for up in range(4):
            base = posixpath.join(folder, *([".."] * up)) if up else folder
            cand = posixpath.normpath(posixpath.join(base, name))
            if cand.startswith("..") or cand == path:
                continue
            ok = subprocess.run(["git", "--git-dir", str(mirror), "cat-file", "-e",
                                 f"{commit}:{cand}"], capture_output=True).returncode == 0
            if ok:
                out.append(cand)
                break
    return out


def _verdict(entry: dict[str, Any], findings: list[dict[str, Any]], invariants: dict[str, str]
             ) -> tuple[bool, str]:
    labels = set(entry.get("labels") or [])
    expect = entry.get("expect")
    serious = [f for f in findings if f["severity"] in ("error", "warning")]
    if expect == "flag":
        hits = [f for f in serious if invariants.get(f["code"]) in labels]
        return bool(hits), ("ok" if hits else "MISSED " + ",".join(sorted(labels)))
    if serious:
        return False, "FALSE ALARM " + ",".join(sorted({f["code"] for f in serious}))
    return True, "ok"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(HERE.parent / "shared" / "corpus" / "dev-set.yaml"))
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = ap.parse_args()
    corpus = yaml.safe_load(Path(args.corpus).read_text(encoding="utf-8"))
    invariants = {c: m.invariant for c, m in load_rules().items()}
    scratch = Path(tempfile.mkdtemp(prefix="evallint-devset-"))
    passed = total = 0
    try:
        for i, entry in enumerate(corpus["entries"]):
            repo = entry["repo"]
            mirror = Path(args.mirrors) / repo.replace("/", "+") / "repo"
            root = scratch / f"{i:02d}-{repo.replace('/', '+')}"
            if not mirror.exists() or not _extract(mirror, entry["commit"], entry["path"],
                                                   root / entry["path"]):
                print(f"{i:2d} SKIP   {repo}:{entry['path']} (no local mirror at that commit)")
                continue
            text = (root / entry["path"]).read_text(encoding="utf-8", errors="replace")
            named = _named_paths(mirror, entry["commit"], entry["path"], text)
            for extra in [*_related_paths(entry), *named]:
                _extract(mirror, entry["commit"], extra, root / extra)
            # (PYTHONSAFEPATH: ``-m`` would put the scratch tree first on sys.path, where a
            # fetched ``types.py`` shadows the standard library)
            proc = subprocess.run(
                [sys.executable, "-m", "evallint", "check", ".", "--no-cache",
                 "--output-format", "json"], cwd=root, capture_output=True, text=True,
                env={**os.environ, "PYTHONSAFEPATH": "1"})
            try:
                found = json.loads(proc.stdout or "[]")
            except json.JSONDecodeError:
                found = None
            if not isinstance(found, list):  # no report at all: a failure, never "silent"
                total += 1
                tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                print(f"{i:2d} FAIL   {repo}:{entry['path']}\n          no report "
                      f"(exit {proc.returncode}): {tail[:100]}")
                continue
            mine = [f for f in found if f["path"] == entry["path"]]
            ok, why = _verdict(entry, mine, invariants)
            codes = " ".join(f"{f['code']}@{f['line']}({f['severity'][0]})" for f in mine) or "-"
            if proc.returncode == 2:
                ok = False
                why = "NOT READ / tool error: " + proc.stderr.strip().splitlines()[-1][:100]
            total += 1
            passed += ok
            print(f"{i:2d} {'PASS' if ok else 'FAIL'}   {entry['expect']:<7} "
                  f"{','.join(entry.get('labels') or []) or '-':<6} {repo}:{entry['path']}\n"
                  f"          found: {codes}  [{why}]")
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print(f"scratch kept at {scratch}")
    print(f"\n{passed}/{total} entries as labelled")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
