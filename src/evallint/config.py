"""Configuration: ``[tool.evallint]`` in pyproject.toml or a top-level ``evallint.toml``.

Unknown keys are an error that names the key (exit 2), as ruff does: a typo must never turn
a rule off silently.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


class ConfigError(Exception):
    """Bad configuration: the message names the file and the key."""


DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", "node_modules", "__pycache__",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", ".tox", ".nox", "build", "dist",
    "site-packages", ".evallint_cache", ".ipynb_checkpoints",
    ".virtual_documents",  # JupyterLab's shadow copies: plain Python under a notebook name
)


@dataclass
class Legitimate:
    """A declared, reasoned exception: an evaluator that must see an extra input."""

    paths: tuple[str, ...]
    inputs: tuple[str, ...]
    reason: str


@dataclass
class Config:
    """The effective configuration of one run."""

    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None
    select: list[str] = field(default_factory=lambda: ["ALL"])
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    extend_exclude: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)  # glob -> generator|evaluator
    evaluator_inputs: list[str] = field(default_factory=lambda: ["input", "output"])
    aliases: dict[str, list[str]] = field(default_factory=dict)  # input|output -> names
    legitimate: list[Legitimate] = field(default_factory=list)
    severity: dict[str, str] = field(default_factory=dict)  # code -> error|warning|note
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)  # code -> param overrides
    policy: list[str] = field(default_factory=list)  # policy pack YAML files
    fail_on: str = "warning"
    output_format: str = "text"
    cache_dir: str = ".evallint_cache"
    max_file_size: int = 2_000_000
    # Wall-clock seconds one file may take in a worker, and the project analysis as a whole;
    # past them the file is EL901 ("not analysed") and the run goes on.
    time_budget: float = 5.0
    project_time_budget: float = 60.0
    respect_gitignore: bool = True
    extract_functions: list[str] = field(default_factory=list)
    evaluator_functions: list[str] = field(default_factory=list)
    generator_functions: list[str] = field(default_factory=list)
    lock_file: str = "evallint.lock"
    # the project's own catalogue files (an in-house client wrapper), read and validated
    # when the configuration is loaded: (path, parsed document) pairs
    models: list[str] = field(default_factory=list)
    model_docs: tuple[tuple[str, Any], ...] = ()
    raw: dict[str, Any] = field(default_factory=dict)
    policy_rules: list[Any] = field(default_factory=list)  # evallint.policy.PolicyRule
    # The real folders this run may read under (evallint.confine.run_roots): set for each run
    # from the project root and the path arguments; empty means the project root alone.
    read_roots: tuple[str, ...] = ()
    # Given on the command line (--config): the person running the check chose it, so the
    # policy packs it names may lie anywhere. Found in the tree, it is the tree's own.
    explicit: bool = False
    warnings: list[str] = field(default_factory=list)  # shown on stderr; the run goes on

    @property
    def roots(self) -> tuple[str, ...]:
        """The real folders the checked tree may make evallint read under."""
        import os

        return self.read_roots or (os.path.realpath(self.root),)

    @property
    def allowed_evaluator_inputs(self) -> set[str]:
        names = set(self.evaluator_inputs)
        for values in self.aliases.values():
            names.update(values)
        return names

    def root_relative(self, display_path: str) -> str:
        """The '/'-separated path of a file relative to the config root, for glob matching."""
        import os

        absolute = os.path.abspath(display_path)
        try:
            rel = os.path.relpath(absolute, self.root)
        except ValueError:  # another drive on Windows
            return display_path
        return display_path if rel.startswith("..") else rel.replace(os.sep, "/")

    def fingerprint(self) -> str:
        """A stable hash of every setting that can change a file's findings (cache key)."""
        blob = json.dumps([self.raw, [repr(r) for r in self.policy_rules],
                           list(self.model_docs)], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


_LIST_KEYS = {
    "select", "extend-select", "ignore", "include", "exclude", "extend-exclude", "templates",
    "evaluator-inputs", "policy", "extract-functions", "evaluator-functions",
    "generator-functions", "models",
}
_SCALAR_KEYS = {
    "fail-on": str, "output-format": str, "cache-dir": str, "max-file-size": int,
    "respect-gitignore": bool, "lock-file": str, "time-budget": float,
    "project-time-budget": float,
}
# What a configuration file may set at most: the tree is untrusted (CI runs it on pull
# requests from forks), and its pyproject.toml must not let one hostile file run for an hour
# or take gigabytes. Only the command line lifts these (--time-budget, --project-time-budget,
# --max-file-size); a value above is used at the ceiling, with a warning.
CEILINGS: dict[str, float] = {"time-budget": 30.0, "project-time-budget": 300.0,
                              "max-file-size": 8_000_000}
_TABLE_KEYS = {"per-file-ignores", "roles", "aliases", "severity", "rules"}
_ARRAY_TABLE_KEYS = {"legitimate"}
KNOWN_KEYS = _LIST_KEYS | set(_SCALAR_KEYS) | _TABLE_KEYS | _ARRAY_TABLE_KEYS
_SEVERITIES = {"error", "warning", "note"}
_FAIL_ON = {"error", "warning", "note", "never"}


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """Walk up from ``start`` to the first evallint.toml or pyproject.toml with our table."""
    here = start.resolve()
    for folder in (here, *here.parents):
        for name in ("evallint.toml", ".evallint.toml"):
            candidate = folder / name
            if candidate.is_file():
                data = _load_toml(candidate)
                return candidate, _table_of(data)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            data = _load_toml(pyproject)
            table = data.get("tool", {}).get("evallint")
            if table is not None:
                return pyproject, table
        if (folder / ".git").exists():
            break
    return None


def _table_of(data: dict[str, Any]) -> Any:
    """evallint's table of a TOML file: ``[tool.evallint]`` of a pyproject-shaped file (an
    empty one when it has none: a base branch's pyproject.toml may predate evallint), else
    the file's top level (evallint.toml)."""
    tool = data.get("tool")
    if isinstance(tool, dict) or "project" in data or "build-system" in data:
        return tool.get("evallint", {}) if isinstance(tool, dict) else {}
    return data


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def load_config(start: Path, explicit: Path | None = None, *, isolated: bool = False) -> Config:
    """Find and validate the configuration that applies to ``start`` (a folder).

    ``isolated`` (``--isolated``): no configuration file at all, every default. ``explicit``
    (``--config``): that file and no other; a file outside ``start`` (the base branch's
    config kept outside a pull request's checkout) leaves the project root at ``start``."""
    if isolated:
        return parse_config({}, source=None, root=start.resolve())
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"{explicit}: config file not found")
        data = _load_toml(explicit)
        table = _table_of(data)
        here = start.resolve()
        folder = explicit.resolve().parent
        root = folder if folder == here or here in folder.parents else here
        cfg = parse_config(table, source=explicit, root=root)
        cfg.explicit = True
        return cfg
    found = find_config(start)
    if found is None:
        return parse_config({}, source=None, root=start.resolve())
    path, table = found
    return parse_config(table, source=path, root=path.parent.resolve())


def parse_config(table: dict[str, Any], *, source: Path | None, root: Path) -> Config:
    """Validate a raw ``[tool.evallint]`` table into a :class:`Config`."""
    where = str(source) if source else "configuration"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.evallint] must be a table")
    cfg = Config(root=root, source=source, raw=table)
    for raw_key, value in table.items():
        key = raw_key.replace("_", "-")
        attr = key.replace("-", "_")
        if key not in KNOWN_KEYS:
            raise ConfigError(
                f"{where}: unknown key '{raw_key}' in [tool.evallint] "
                f"(known: {', '.join(sorted(KNOWN_KEYS))})"
            )
        if key in _LIST_KEYS:
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: '{raw_key}' must be a list of strings")
            setattr(cfg, attr, list(value))
        elif key in _SCALAR_KEYS:
            want = _SCALAR_KEYS[key]
            if want is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, want) or (want is int and isinstance(value, bool)):
                raise ConfigError(f"{where}: '{raw_key}' must be a "
                                  f"{'number' if want is float else want.__name__}")
            if isinstance(value, float) and not 0 < value <= 3600:
                raise ConfigError(f"{where}: '{raw_key}' must be a number of seconds, "
                                  "more than 0 and at most 3600")
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = _under_ceiling(cfg, where, raw_key, key, value)
            setattr(cfg, attr, value)
        elif key in _TABLE_KEYS:
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: '{raw_key}' must be a table")
            setattr(cfg, attr, _table(where, key, value))
        elif key == "legitimate":
            cfg.legitimate = _legitimate(where, value)
    _check_cache_dir(where, cfg.cache_dir)
    _check_inside(where, "lock-file", cfg.lock_file)
    if cfg.models:
        cfg.model_docs = _model_files(where, cfg)
    if cfg.fail_on not in _FAIL_ON:
        raise ConfigError(f"{where}: 'fail-on' must be one of {', '.join(sorted(_FAIL_ON))}")
    for code, sev in cfg.severity.items():
        if sev not in _SEVERITIES:
            raise ConfigError(f"{where}: severity of {code} must be error, warning or note")
    for glob, role in cfg.roles.items():
        if role not in ("generator", "evaluator"):
            raise ConfigError(f"{where}: roles.{glob!r} must be 'generator' or 'evaluator'")
    return cfg


def _model_files(where: str, cfg: Config) -> tuple[tuple[str, Any], ...]:
    """The project's own catalogue files (``models = ["evallint/models/*.yaml"]``): inside
    the project, each a valid catalogue document (the error names the file and the key)."""
    from evallint import catalogue, reads

    out: list[tuple[str, Any]] = []
    for pattern in cfg.models:
        _check_inside(where, "models", pattern)
        paths = sorted(p for p in cfg.root.glob(pattern) if p.is_file())
        if not paths:
            raise ConfigError(f"{where}: 'models' names {pattern!r}, which matches no file")
        for path in paths:
            rel = path.relative_to(cfg.root).as_posix()
            try:
                text = reads.read_file(path, cfg.max_file_size, cfg.roots).decode("utf-8")
                doc = catalogue.parse_yaml(text, rel)
            except (OSError, UnicodeDecodeError, catalogue.CatalogueError) as exc:
                raise ConfigError(f"{where}: 'models': {exc}") from None
            out.append((rel, doc))
    return tuple(out)


def _check_cache_dir(where: str, value: str) -> None:
    """The project's config may only put the cache inside the project: the checked tree is
    untrusted, and a cache-dir of ``/`` or ``~/.ssh`` would aim evallint's writes there."""
    import posixpath

    norm = posixpath.normpath(value.replace("\\", "/"))
    if not value or posixpath.isabs(norm) or Path(value).is_absolute() or norm == ".." \
            or norm.startswith("../") or norm == ".":
        raise ConfigError(
            f"{where}: 'cache-dir' must be a folder inside the project, given relative to it "
            f"(got {value!r}); a folder elsewhere is taken only from --cache-dir or "
            "EVALLINT_CACHE_DIR")


def _under_ceiling(cfg: Config, where: str, raw_key: str, key: str,
                   value: float) -> float:
    """``value``, or the key's ceiling (:data:`CEILINGS`) with a warning when it is above."""
    if key == "max-file-size" and value <= 0:
        raise ConfigError(f"{where}: 'max-file-size' must be a number of bytes above 0")
    ceiling = CEILINGS.get(key)
    if ceiling is None or value <= ceiling:
        return value
    shown = f"{ceiling:,.0f} bytes" if key == "max-file-size" else f"{ceiling:g} s"
    given = f"{value:,}" if isinstance(value, int) else f"{value:g}"
    cfg.warnings.append(f"{where}: {raw_key} = {given} is above the {shown} a configuration "
                        f"file may set; using {shown} (only the command line lifts it: "
                        f"--{key})")
    return type(value)(ceiling)


def _check_inside(where: str, key: str, value: str) -> None:
    """A file the project's config names for evallint to read and write (the lock file)
    stays inside the project: relative, and not above the project root."""
    import posixpath

    norm = posixpath.normpath(value.replace("\\", "/"))
    if not value or posixpath.isabs(norm) or Path(value).is_absolute() or norm in (".", "..") \
            or norm.startswith("../"):
        raise ConfigError(f"{where}: '{key}' must be a file inside the project, given relative "
                          f"to it (got {value!r})")


def _table(where: str, key: str, value: dict[str, Any]) -> dict[str, Any]:
    if key in ("per-file-ignores", "aliases"):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if isinstance(v, str):
                v = [v]
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise ConfigError(f"{where}: '{key}.{k}' must be a list of strings")
            out[k] = list(v)
        return out
    if key in ("roles", "severity"):
        for k, v in value.items():
            if not isinstance(v, str):
                raise ConfigError(f"{where}: '{key}.{k}' must be a string")
        return dict(value)
    for k, v in value.items():  # rules: code -> table of parameters
        if not isinstance(v, dict):
            raise ConfigError(f"{where}: 'rules.{k}' must be a table of parameters")
    return dict(value)


def _legitimate(where: str, value: Any) -> list[Legitimate]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: 'legitimate' must be an array of tables ([[...]])")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise ConfigError(f"{where}: legitimate[{i}] must be a table")
        unknown = set(item) - {"path", "paths", "inputs", "input", "reason"}
        if unknown:
            raise ConfigError(f"{where}: unknown key '{sorted(unknown)[0]}' in legitimate[{i}]")
        paths = _str_list(item.get("paths", item.get("path", "**")))
        inputs = _str_list(item.get("inputs", item.get("input", [])))
        if paths is None or inputs is None:
            raise ConfigError(f"{where}: legitimate[{i}] paths and inputs must be strings")
        reason = item.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ConfigError(f"{where}: legitimate[{i}] needs a 'reason'")
        if not inputs:
            raise ConfigError(f"{where}: legitimate[{i}] needs 'inputs'")
        out.append(Legitimate(paths=tuple(paths), inputs=tuple(inputs), reason=reason.strip()))
    return out


def _str_list(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None
