"""A small, stable Python API over the engine (used by ``evallint run`` and by tests)."""

from __future__ import annotations

from pathlib import Path

from evallint.config import Config
from evallint.engine import RunResult, enabled_codes, run_check
from evallint.policy import load_config_with_policies, with_policies
from evallint.registry import load_checks, load_rules


def lint(
    paths: list[str],
    *,
    config: Config | None = None,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    use_cache: bool = False,
    jobs: int | None = 1,
) -> RunResult:
    """Lint ``paths`` with the configuration found from the working directory (or ``config``).

    Raises ConfigError, DiscoveryError or SelectionError on tool errors; never exits.
    """
    load_checks()
    cfg = with_policies(config) if config is not None else load_config_with_policies(Path.cwd())
    enabled = enabled_codes(cfg, load_rules(), select=select, ignore=ignore)
    return run_check(paths, cfg, enabled, jobs=jobs, use_cache=use_cache)
