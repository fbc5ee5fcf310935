"""A JSON array of findings, one object each, stable keys."""

from __future__ import annotations

import json

from evallint.findings import Finding
from evallint.registry import RuleMeta
from evallint.report.clean import json_safe


def render_json(findings: list[Finding], metas: dict[str, RuleMeta], verbose: bool) -> str:
    return json_safe(json.dumps([f.to_dict() for f in findings], indent=2,
                                ensure_ascii=False)) + "\n"
