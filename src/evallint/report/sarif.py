"""SARIF 2.1.0, with rule metadata and help text, for code-scanning dashboards.

Each result carries ``partialFingerprints`` (``evallint/v1``: :mod:`evallint.fingerprint`, the
same fingerprint a baseline records), so that code scanning follows an alert across edits that
move it. ``primaryLocationLineHash`` is left to GitHub's upload action, which computes it from
the source file when it is missing: its recipe is documented only as that action's code, and a
value that differs from the one the action computes is reported as inconsistent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import evallint
from evallint.findings import Finding, Severity
from evallint.fingerprint import SCHEME, Sources, fingerprints
from evallint.registry import RuleMeta
from evallint.report.clean import json_safe

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _rule(meta: RuleMeta) -> dict[str, Any]:
    help_text = f"{meta.what.strip()}\n\nWhy: {meta.why.strip()}\n\nFix:\n{meta.fix.strip()}"
    help_md = (
        f"## What it does\n{meta.what.strip()}\n\n## Why is this bad\n{meta.why.strip()}\n\n"
        f"## Example\n```\n{meta.example.strip()}\n```\n\n"
        f"## Use instead\n```\n{meta.fix.strip()}\n```"
    )
    from evallint.rulemeta import rule_doc_url

    url = rule_doc_url(meta.code)  # the docs page, however evallint was installed
    return {
        "id": meta.code,
        "name": meta.name,
        "shortDescription": {"text": meta.summary},
        "fullDescription": {"text": meta.what.strip()},
        "help": {"text": help_text, "markdown": help_md},
        **({"helpUri": url} if url else {}),
        "defaultConfiguration": {"level": _LEVEL[meta.severity]},
        "properties": {"invariant": meta.invariant, "tags": ["llm-eval", meta.code[:3]]},
    }


def artifact(path: str) -> dict[str, str]:
    """A SARIF artifact location: a relative URI under ``%SRCROOT%`` with every character but
    letters, digits, ``/`` and ``-._~`` percent-encoded, so that a file named
    ``javascript:alert(1)`` or holding a newline is still only a path; a path outside the
    working folder is a ``file://`` URI, encoded likewise."""
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path.replace(os.sep, "/"), safe="/"), "uriBaseId": "%SRCROOT%"}


def render_sarif(findings: list[Finding], metas: dict[str, RuleMeta], verbose: bool, *,
                 sources: Sources | None = None) -> str:
    """The SARIF log. ``sources`` reads the findings' files for their fingerprints (default:
    files under the working folder, up to the default ``max-file-size``)."""
    prints = fingerprints(findings, sources)
    codes = sorted({f.code for f in findings} | set(metas))
    index = {c: i for i, c in enumerate(c for c in codes if c in metas)}
    rules = [_rule(metas[c]) for c in codes if c in metas]
    results = []
    for f, fp in zip(findings, prints, strict=True):
        region: dict[str, Any] = {"startLine": f.line, "startColumn": f.column}
        if f.end_line:
            region["endLine"] = f.end_line
        if f.end_column:
            region["endColumn"] = f.end_column
        result: dict[str, Any] = {
            "ruleId": f.code,
            "level": _LEVEL[f.severity],
            "message": {"text": f.message if f.cell is None else f"cell {f.cell}: {f.message}"},
            "locations": [{"physicalLocation": {
                "artifactLocation": artifact(f.path),
                "region": region,
            }}],
            "partialFingerprints": {SCHEME: fp.value},
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        if f.cell is not None:
            result["properties"] = {"cell": f.cell}
        if f.related:
            result["relatedLocations"] = [
                {"id": i, "message": {"text": r.message if r.cell is None
                                      else f"cell {r.cell}: {r.message}"}, "physicalLocation": {
                    "artifactLocation": artifact(r.path),
                    "region": {"startLine": r.line, "startColumn": r.column}}}
                for i, r in enumerate(f.related)
            ]
        results.append(result)
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "evallint",
                "version": evallint.__version__,
                "informationUri": "https://pypi.org/project/evallint-policy/",
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json_safe(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"
