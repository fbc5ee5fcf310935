"""Token prices and cost accounting.

The shipped table (``rules/data/prices.yaml``) holds placeholders a spec can override; a model
matches the longest key it starts with, so dated model ids use their family's price.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from evallint.executor.errors import RunError
from evallint.registry import rules_dir

CACHE_WRITE = 1.25
CACHE_READ = 0.10
# The Message Batches API bills every token at half the standard price.
BATCH_DISCOUNT = 0.50


def shipped_prices() -> dict[str, dict[str, float]]:
    path = rules_dir() / "data" / "prices.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise RunError(f"{path}: cannot read the price table: {exc}") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise RunError(f"{path}: the price table needs a 'models' mapping")
    return {str(k): {"input": float(v["input"]), "output": float(v["output"])}
            for k, v in models.items()}


@dataclass
class PriceTable:
    rows: dict[str, dict[str, float]]

    @classmethod
    def load(cls, overrides: dict[str, dict[str, float]]) -> PriceTable:
        rows = shipped_prices()
        rows.update(overrides)
        return cls(rows)

    @classmethod
    def free(cls) -> PriceTable:
        """Every model at $0 (the mock provider): calls are counted and costed, at nothing."""
        return cls({"": {"input": 0.0, "output": 0.0}})

    def row(self, model: str) -> dict[str, float] | None:
        name = model.lower().removeprefix("anthropic/")
        best = max((k for k in self.rows if name.startswith(k.lower())), key=len, default=None)
        return self.rows[best] if best is not None else None

    def cost(self, model: str, usage: dict[str, int], *, batch: bool = False) -> float | None:
        """USD for one call (a Message Batches result at the batch price), or None for a
        model with no price."""
        row = self.row(model)
        if row is None:
            return None
        scale = BATCH_DISCOUNT if batch else 1.0
        per_in, per_out = row["input"] / 1e6 * scale, row["output"] / 1e6 * scale
        return round(
            usage.get("input_tokens", 0) * per_in
            + usage.get("cache_creation_input_tokens", 0) * per_in * CACHE_WRITE
            + usage.get("cache_read_input_tokens", 0) * per_in * CACHE_READ
            + usage.get("output_tokens", 0) * per_out,
            8,
        )


@dataclass
class CostLine:
    """Running totals for one role within one case."""

    model: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0

    def add(self, usage: dict[str, int], cost: float | None) -> None:
        self.calls += 1
        self.input_tokens += usage.get("input_tokens", 0) + usage.get(
            "cache_creation_input_tokens", 0) + usage.get("cache_read_input_tokens", 0)
        self.output_tokens += usage.get("output_tokens", 0)
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost_usd = round(self.cost_usd + cost, 8)

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "calls": self.calls, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "cost_usd": self.cost_usd,
                "unpriced_calls": self.unpriced_calls}


@dataclass
class CostBook:
    """A case's cost per role."""

    lines: dict[str, CostLine] = field(default_factory=dict)

    def add(self, role: str, model: str, usage: dict[str, int], cost: float | None) -> None:
        self.lines.setdefault(role, CostLine(model)).add(usage, cost)

    @property
    def total(self) -> float:
        return round(sum(line.cost_usd for line in self.lines.values()), 8)

    def as_dict(self) -> dict[str, Any]:
        return {role: line.as_dict() for role, line in self.lines.items()}
