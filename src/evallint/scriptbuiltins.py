"""What JavaScript's and TypeScript's own functions mean: ``rules/data/script-builtins.yaml``.

Shipped rule data like the catalogue, read once per process; the TypeScript/JavaScript
lowering (:mod:`evallint.frontends.scriptlower`) turns each use into its Python equivalent.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Builtins:
    """The table of ``rules/data/script-builtins.yaml``."""

    functions: dict[str, str]
    methods: dict[str, str]
    properties: dict[str, str]
    writers: dict[str, str]
    transparent: frozenset[str]
    environment: frozenset[str]
    operators: dict[str, str]
    receiver_is_argument: frozenset[str]
    assert_function: str = ""  # a test's ``expect(value)``, and its comparison methods
    assertions: dict[str, str] | None = None
    http_clients: dict[str, str] | None = None  # ``fetch`` -> where its JSON body is


@lru_cache(maxsize=1)
def builtins() -> Builtins:
    import yaml

    from evallint.rulemeta import rules_dir

    data = yaml.safe_load((rules_dir() / "data" / "script-builtins.yaml").read_text("utf-8"))
    return Builtins(dict(data.get("functions") or {}), dict(data.get("methods") or {}),
                    dict(data.get("properties") or {}), dict(data.get("writers") or {}),
                    frozenset(data.get("transparent") or ()),
                    frozenset(data.get("environment") or ()),
                    dict(data.get("operators") or {}),
                    frozenset(data.get("receiver_is_argument") or ()),
                    str((data.get("assertions") or {}).get("function", "")),
                    dict((data.get("assertions") or {}).get("methods") or {}),
                    dict(data.get("http_clients") or {}))


def script_name(python: str) -> str:
    """The script's own name of a function the lowering wrote in Python terms (``json.loads``
    -> ``JSON.parse``), for a message about a script; the name itself when it has none."""
    return next((js for js, py in builtins().functions.items() if py == python), python)
