"""Engine behaviour: cache, process pool, internal errors isolated per file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from evallint import frontend
from evallint.cli import main
from evallint.config import parse_config
from evallint.engine import run_check
from evallint.registry import load_checks, load_rules
from tests.conftest import write_files

BAD = {"hex": "ff0a"}


def _run(root: Path, **kw: Any) -> Any:
    load_checks()
    old = Path.cwd()
    os.chdir(root)
    try:
        cfg = parse_config({}, source=None, root=root)
        cfg.respect_gitignore = False
        return run_check(["."], cfg, set(load_rules()), **kw)
    finally:
        os.chdir(old)


def test_cache_hit_gives_same_findings(tmp_path: Path) -> None:
    write_files(tmp_path, {f"prompts/p{i}.j2": BAD for i in range(3)})
    cold = _run(tmp_path, jobs=1, use_cache=True)
    warm = _run(tmp_path, jobs=1, use_cache=True)
    assert cold.cached_files == 0 and warm.cached_files == 3
    assert [f.to_dict() for f in cold.findings] == [f.to_dict() for f in warm.findings]
    # A changed file is re-analysed, the others still come from the cache.
    (tmp_path / "prompts/p0.j2").write_bytes(b"ok\n\xff\n")
    again = _run(tmp_path, jobs=1, use_cache=True)
    assert again.cached_files == 2
    assert any(f.path == "prompts/p0.j2" and f.line == 2 for f in again.findings)


def test_process_pool_matches_serial(tmp_path: Path) -> None:
    write_files(tmp_path, {f"prompts/p{i:03d}.j2": BAD for i in range(60)})
    serial = _run(tmp_path, jobs=1, use_cache=False)
    pooled = _run(tmp_path, jobs=2, use_cache=False)
    assert len(serial.findings) == 60
    assert [f.to_dict() for f in serial.findings] == [f.to_dict() for f in pooled.findings]


def test_internal_error_in_front_end_is_isolated(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    load_checks()

    def explode(source: Any, config: Any) -> Any:
        if source.rel.endswith("boom.j2"):
            raise ValueError("front-end bug")
        return real(source, config)

    real = frontend.FRONTENDS.get("jinja", lambda s, c: None)
    monkeypatch.setitem(frontend.FRONTENDS, "jinja", explode)
    write_files(tmp_path, {"prompts/boom.j2": "x", "prompts/bad.j2": BAD})
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["check", "--no-cache"])
    assert res.exit_code == 2
    assert "prompts/boom.j2: internal error: ValueError: front-end bug" in res.stderr
    assert "prompts/bad.j2:1:1: EL901" in res.stdout  # the other file is still covered
    assert "Traceback" not in res.output


def test_a_default_severity_yields_to_the_users_severity() -> None:
    """``default=`` lowers a finding on weaker evidence, but a severity configured for the
    code still wins, and ``severity=`` (a declared legitimate use) wins over both."""
    from evallint.config import parse_config
    from evallint.facts import Pos
    from evallint.findings import Severity
    from evallint.registry import Context

    metas = load_rules()
    plain = Context(parse_config({}, source=None, root=Path(".")), metas, set(metas))
    told = Context(parse_config({"severity": {"EL303": "error"}}, source=None, root=Path(".")),
                   metas, set(metas))
    at = Pos(1, 1)
    assert plain.finding("EL303", "a", at, "m").severity is metas["EL303"].severity
    assert plain.finding("EL303", "a", at, "m", default=Severity.NOTE).severity is Severity.NOTE
    assert told.finding("EL303", "a", at, "m", default=Severity.NOTE).severity is Severity.ERROR
    assert told.finding("EL303", "a", at, "m", severity=Severity.NOTE,
                        default=Severity.WARNING).severity is Severity.NOTE


def test_output_is_the_same_under_any_string_hash_seed() -> None:
    """Findings, their order and their evidence do not depend on set iteration order (string
    hashes change from one process to the next): two processes with different seeds print the
    same report on the broken fixtures."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        proc = subprocess.run(
            [sys.executable, "-m", "evallint", "check", "--no-cache", "--output-format", "json",
             "fixtures/broken"], cwd=root, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 1, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1]
    assert '"code": "EL301"' in outs[0]
