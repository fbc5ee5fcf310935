"""Shared test helpers: write a small project into a temp folder and lint it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evallint.config import parse_config
from evallint.engine import RunResult, run_check
from evallint.registry import load_checks, load_rules


def write_files(root: Path, files: dict[str, Any]) -> None:
    """Write ``{relpath: text | {"hex": "..."}}`` under ``root``."""
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, dict) and "hex" in content:
            target.write_bytes(bytes.fromhex(content["hex"]))
        else:
            target.write_text(content, encoding="utf-8")


def lint_tree(root: Path, codes: set[str] | None = None, config: dict[str, Any] | None = None,
              paths: list[str] | None = None) -> RunResult:
    """Lint ``root`` as if ``evallint check`` ran there, with only ``codes`` enabled."""
    load_checks()
    metas = load_rules()
    old = Path.cwd()
    os.chdir(root)
    try:
        cfg = parse_config(config or {}, source=None, root=root)
        cfg.respect_gitignore = False
        enabled = set(codes) if codes is not None else {c for c, m in metas.items() if m.default}
        return run_check(paths or ["."], cfg, enabled, jobs=1, use_cache=False)
    finally:
        os.chdir(old)


@pytest.fixture(autouse=True, scope="session")
def _cache_key_outside_the_projects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests never touch the real user's cache key; it lives outside every test project."""
    key = tmp_path_factory.mktemp("user-cache") / "cache.key"
    old = os.environ.get("EVALLINT_CACHE_KEY")
    os.environ["EVALLINT_CACHE_KEY"] = str(key)
    yield
    if old is None:
        os.environ.pop("EVALLINT_CACHE_KEY", None)
    else:
        os.environ["EVALLINT_CACHE_KEY"] = old


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
