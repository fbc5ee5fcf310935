"""Reporters: the same findings in different clothes (text, json, sarif, github)."""

from __future__ import annotations

from collections.abc import Callable

from evallint.findings import Finding
from evallint.registry import RuleMeta
from evallint.report.github import render_github
from evallint.report.json import render_json
from evallint.report.sarif import render_sarif
from evallint.report.text import render_text

Renderer = Callable[[list[Finding], dict[str, RuleMeta], bool], str]

FORMATS: dict[str, Renderer] = {
    "text": render_text,
    "json": render_json,
    "sarif": render_sarif,
    "github": render_github,
}
