"""Rubric pinning: ``evallint lock`` records what the judge is; EL610 reports when it moved.

The lock holds the SHA-256 of every evaluator prompt, evaluator agent and rubric file, and the
judge model each names, in ``evallint.lock`` (config ``lock-file``) at the config root. A
measurement harness that changes silently makes scores before and after incomparable; with a
lock, a change is either re-approved (``evallint lock``) or reported.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from evallint import reads
from evallint.config import Config
from evallint.confine import escapes
from evallint.facts import FileFacts
from evallint.kinds import TEMPLATE_KINDS, FileKind
from evallint.registry import Project
from evallint.safefs import write_output
from evallint.source import read_bounded

LOCK_VERSION = 1
_KINDS = {k.value for k in TEMPLATE_KINDS} | {FileKind.AGENT.value}


@dataclass(frozen=True)
class Pin:
    path: str  # relative to the config root, '/'-separated
    sha256: str
    kind: str  # evaluator-prompt | evaluator-agent | rubric
    judge_model: str | None = None


def sha256_of(path: Path, roots: tuple[str, ...]) -> str | None:
    """The digest of a whole file inside ``roots`` (recorded as a read: the lock check
    depends on it); None when it is missing, unreadable, over ``reads.MAX_PINNED`` bytes or
    outside the project (the lock check says which, without a digest)."""
    try:
        data = reads.read_file(path, reads.MAX_PINNED, roots)
    except OSError:
        return None
    return hashlib.sha256(data).hexdigest() if len(data) <= reads.MAX_PINNED else None


def _rel(config: Config, display: str) -> str:
    return config.root_relative(display)


def current_pins(project: Project, config: Config) -> dict[str, Pin]:
    """What would be pinned now: evaluator prompts and agents, and rubrics named by specs."""
    from evallint.facts.loopspec import LoopSpecFacts

    pins: dict[str, Pin] = {}

    def add(display: str, kind: str, model: str | None) -> None:
        digest = sha256_of(Path(display), config.roots)
        if digest is None:
            return
        rel = _rel(config, display)
        old = pins.get(rel)
        pins[rel] = Pin(rel, digest, old.kind if old else kind,
                        model or (old.judge_model if old else None))

    for facts in project.files.values():
        if facts.kind in _KINDS and facts.role.is_evaluator:
            kind = "evaluator-agent" if facts.kind == FileKind.AGENT.value else "evaluator-prompt"
            add(facts.path, kind, _model_of(facts))
    for facts in project.of_kind(FileKind.LOOP_SPEC):
        if not isinstance(facts, LoopSpecFacts) or not facts.is_loop:
            continue
        ev_model = facts.role_ref("evaluator", "model")
        model = ev_model.value if ev_model is not None else None
        ev = facts.role_ref("evaluator", "prompt")
        refs = [("evaluator-prompt", ev)] if ev is not None else []
        refs += [("rubric", r) for r in facts.rubric_refs()]
        for kind, ref in refs:
            if ref is not None and isinstance(ref.value, str):
                add(facts.resolve(ref.value), kind, model)
    return pins


def _model_of(facts: FileFacts) -> str | None:
    model = getattr(facts, "model", None)
    return model if isinstance(model, str) and model else None


def lock_path(config: Config) -> Path:
    return config.root / config.lock_file


def render(pins: dict[str, Pin], calibrations: dict[str, Any] | None = None) -> str:
    """Stable, sorted YAML: one block per file, so a re-approval is a readable diff.

    ``calibrations`` (records written by ``evallint calibrate``, keyed by loop spec) follow the
    pins unchanged, so re-pinning never drops an approved calibration."""
    lines = ["# evallint.lock: the approved evaluator prompts and rubrics (SHA-256) and their",
             "# judge models. Re-approve a deliberate change with `evallint lock`.",
             f"version: {LOCK_VERSION}", "files:"]
    if not pins:
        lines[-1] = "files: {}"
    for rel in sorted(pins):
        p = pins[rel]
        lines.append(f"  {_q(rel)}:")
        lines.append(f"    sha256: {p.sha256}")
        lines.append(f"    kind: {p.kind}")
        if p.judge_model:
            lines.append(f"    judge_model: {_q(p.judge_model)}")
    text = "\n".join(lines) + "\n"
    if calibrations:
        import yaml

        text += yaml.safe_dump({"calibrations": calibrations}, sort_keys=True,
                               default_flow_style=False, allow_unicode=True, width=100)
    return text


def read_lock(target: Path) -> dict[str, Any]:
    """The lock file as data; a missing or unreadable file is empty (EL610 reports a broken
    one). It is read bounded, never through a symlink out of its folder's project."""
    import yaml

    from evallint.source import DEFAULT_MAX_BYTES

    try:
        if escapes(target, target.parent):
            return {}
        raw = read_bounded(target, DEFAULT_MAX_BYTES)
        if len(raw) > DEFAULT_MAX_BYTES:
            return {}
        data = yaml.safe_load(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def calibration_records(target: Path) -> dict[str, Any]:
    """Calibration records in the lock file, keyed by loop spec (relative to the config root)."""
    found = read_lock(target).get("calibrations")
    return {str(k): v for k, v in found.items() if isinstance(v, dict)} \
        if isinstance(found, dict) else {}


def locked_pins(target: Path) -> dict[str, Pin]:
    """The pins already in the lock file, kept as they are when a calibration is recorded."""
    files = read_lock(target).get("files")
    pins: dict[str, Pin] = {}
    if isinstance(files, dict):
        for rel, entry in files.items():
            if isinstance(entry, dict) and isinstance(entry.get("sha256"), str):
                model = entry.get("judge_model")
                pins[str(rel)] = Pin(str(rel), entry["sha256"], str(entry.get("kind", "")),
                                     model if isinstance(model, str) else None)
    return pins


def write_calibration(target: Path, spec_key: str, record: dict[str, Any]) -> None:
    """Record one spec's calibration, keeping every pin and every other record as it was."""
    records = calibration_records(target)
    records[spec_key] = record
    text = render(locked_pins(target), records)
    write_output(target, text.encode("utf-8"), target.parent)


def _q(text: str) -> str:
    import json

    return json.dumps(text)


@click.command("lock")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Use this evallint.toml or pyproject.toml.")
@click.option("--check", "check_only", is_flag=True,
              help="Do not write; exit 1 if the lock file is missing or out of date.")
def lock(paths: tuple[str, ...], config_path: str | None, check_only: bool) -> None:
    """Pin the SHA-256 of every evaluator prompt and rubric under PATHS in evallint.lock."""
    from evallint.engine import run_check
    from evallint.policy import load_config_with_policies

    cfg = load_config_with_policies(Path.cwd(), Path(config_path) if config_path else None)
    result = run_check(list(paths) or ["."], cfg, {"EL901"}, jobs=1, use_cache=False)
    if result.project is None:
        click.echo("evallint: error: nothing to lock", err=True)
        sys.exit(2)
    pins = current_pins(result.project, cfg)
    target = lock_path(cfg)
    text = render(pins, calibration_records(target))
    shown = os.path.relpath(target)
    if check_only:
        try:
            old: str | None = read_bounded(target, len(text.encode()) + 1).decode(
                "utf-8", "replace") if not escapes(target, cfg.root) else None
        except OSError:
            old = None
        if old != text:
            click.echo(f"{shown} is missing or out of date; run `evallint lock`", err=True)
            sys.exit(1)
        click.echo(f"{shown} is up to date ({len(pins)} pinned files)", err=True)
        return
    try:
        write_output(target, text.encode("utf-8"), cfg.root)
    except OSError as exc:
        click.echo(f"evallint: error: cannot write {shown}: {exc.strerror or exc}", err=True)
        sys.exit(2)
    for rel in sorted(pins):
        p = pins[rel]
        model = f" (judge model {p.judge_model})" if p.judge_model else ""
        click.echo(f"pinned {rel} {p.sha256[:12]}{model}", err=True)
    click.echo(f"wrote {shown}: {len(pins)} pinned file{'s' if len(pins) != 1 else ''}",
               err=True)
