"""``evallint run``: the executor that runs an eval loop only once the lint passes.

Public names: :data:`evallint.executor.cli.run` (the click command), :func:`run_spec` (the same
without click), :func:`load_spec`, :func:`make_plan` and :func:`execute` for programmatic use.

They are imported when first used: importing a submodule (``evallint report`` needs only
``report_html``) must not import the ``anthropic`` SDK, which takes over a second.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "run": "cli", "run_spec": "cli",
    "ApiFailure": "errors", "CostCapReached": "errors", "RunError": "errors",
    "SpecError": "errors",
    "Plan": "plan", "make_plan": "plan",
    "RunOptions": "runner", "RunOutcome": "runner", "execute": "runner",
    "LoopSpec": "spec", "load_spec": "spec",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
