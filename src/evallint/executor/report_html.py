"""``evallint report RESULTS``: one self-contained HTML page about a run, viewable offline.

The page has no external asset and no script: inline CSS, inline SVG charts, and a Content
Security Policy that forbids scripts, so a hostile results file cannot run code in the viewer.
Every string taken from the results file is escaped on the way out (text and attributes).

The results file is read in one streaming pass; what is kept is bounded (counters, the worst
cases, the per-case attempt scores of the first ``MAX_CASE_ROWS`` cases), so a 50,000-case
file makes a report of bounded size.
"""

from __future__ import annotations

import heapq
import html
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from evallint.executor.errors import SpecError
from evallint.executor.results import iter_records

MAX_CASE_ROWS = 200
MAX_WORST = 25
FEEDBACK_CHARS = 600
OUTPUT_CHARS = 400
EXIT_OK, EXIT_ERROR = 0, 2


def esc(value: Any) -> str:
    """Text from the results file, safe in element content and in quoted attributes."""
    return html.escape(str(value), quote=True)


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


@dataclass
class ReportData:
    """Everything the page shows, gathered in one pass over the results file."""

    cases: int = 0
    passed: int = 0
    cost: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    categories: dict[str, int] = field(default_factory=dict)
    cost_by_model: dict[str, float] = field(default_factory=dict)
    attempt_sum: dict[int, float] = field(default_factory=dict)
    attempt_n: dict[int, int] = field(default_factory=dict)
    case_rows: list[tuple[str, list[float | None], bool]] = field(default_factory=list)
    worst: list[tuple[float, int, dict[str, Any]]] = field(default_factory=list)
    run_ids: set[str] = field(default_factory=set)
    mock: int = 0  # records the mock provider answered (evallint run --mock)

    def add(self, r: dict[str, Any]) -> None:
        self.cases += 1
        ok = r.get("pass") is True
        self.passed += ok
        self.mock += r.get("provider") == "mock"
        self.cost += _num(r.get("total_cost_usd")) or 0.0
        status = str(r.get("status") or "unknown")
        self.statuses[status] = self.statuses.get(status, 0) + 1
        if r.get("run_id") and len(self.run_ids) < 50:
            self.run_ids.add(str(r["run_id"]))
        breakdown = r.get("cost_breakdown")
        if isinstance(breakdown, dict):
            for line in breakdown.values():
                if isinstance(line, dict):
                    model = str(line.get("model") or "unknown")
                    self.cost_by_model[model] = (self.cost_by_model.get(model, 0.0)
                                                 + (_num(line.get("cost_usd")) or 0.0))
        scores = self._attempt_scores(r.get("attempt_history"))
        if len(self.case_rows) < MAX_CASE_ROWS:
            self.case_rows.append((str(r.get("case_id")), scores, ok))
        if not ok:
            category = str(r.get("failure_category") or "uncategorised")
            self.categories[category] = self.categories.get(category, 0) + 1
            score = _num(r.get("score"))
            key = -(score if score is not None else -1.0)  # max-heap on "badness"
            item = (key, -self.cases, {
                "case_id": r.get("case_id"), "score": score, "category": category,
                "attempts": r.get("attempts"), "status": status,
                "feedback": str(r.get("feedback") or "")[:FEEDBACK_CHARS],
                "output": str(r.get("output") or "")[:OUTPUT_CHARS]})
            if len(self.worst) < MAX_WORST:
                heapq.heappush(self.worst, item)
            elif item[:2] > self.worst[0][:2]:
                heapq.heapreplace(self.worst, item)

    def _attempt_scores(self, history: Any) -> list[float | None]:
        out: list[float | None] = []
        if not isinstance(history, list):
            return out
        for n, attempt in enumerate(history, start=1):
            score = _num(attempt.get("score")) if isinstance(attempt, dict) else None
            out.append(score)
            if score is not None:
                self.attempt_sum[n] = self.attempt_sum.get(n, 0.0) + score
                self.attempt_n[n] = self.attempt_n.get(n, 0) + 1
        return out

    def worst_first(self) -> list[dict[str, Any]]:
        return [w[2] for w in sorted(self.worst, key=lambda w: (-w[0], -w[1]))]


def collect(path: Path) -> ReportData:
    """Read the results file (SpecError names a bad line; OSError for an unreadable file)."""
    data = ReportData()
    for _, record in iter_records(path):
        data.add(record)
    return data


# ---------------------------------------------------------------------------- charts

PALETTE = ("#3b6fb6", "#d9822b", "#3a9d5d", "#c0392b", "#8e6bbf", "#6d7a86")


def bar_chart(items: list[tuple[str, float]], fmt: str = "{:g}", width: int = 560) -> str:
    """Horizontal bars, labels left, values right; an empty list is a short note."""
    if not items:
        return '<p class="muted">nothing to show</p>'
    top = max(v for _, v in items) or 1.0
    row, label_w, value_w = 24, 190, 90
    bar_w = width - label_w - value_w
    parts = [f'<svg class="chart" role="img" width="{width}" height="{row * len(items) + 4}" '
             f'viewBox="0 0 {width} {row * len(items) + 4}" xmlns="http://www.w3.org/2000/svg">']
    for i, (label, value) in enumerate(items):
        y = i * row + 2
        w = max(bar_w * value / top, 1.0)
        shown = label if len(label) <= 28 else label[:27] + "…"
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 16}" text-anchor="end">{esc(shown)}'
            f"<title>{esc(label)}</title></text>"
            f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row - 8}" '
            f'fill="{PALETTE[i % len(PALETTE)]}"/>'
            f'<text x="{label_w + w + 6:.1f}" y="{y + 16}">{esc(fmt.format(value))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def line_chart(points: list[tuple[int, float]], width: int = 560, height: int = 200) -> str:
    """Mean score (0–1) by attempt number."""
    if not points:
        return '<p class="muted">no scored attempts</p>'
    left, bottom, top_pad, right = 40, 30, 10, 20
    inner_w, inner_h = width - left - right, height - bottom - top_pad
    last = max(n for n, _ in points)
    span = max(last - 1, 1)

    def xy(n: int, v: float) -> tuple[float, float]:
        return left + inner_w * (n - 1) / span, top_pad + inner_h * (1 - v)

    parts = [f'<svg class="chart" role="img" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        _, y = xy(1, tick)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" '
                     f'class="grid"/><text x="{left - 6}" y="{y + 4:.1f}" '
                     f'text-anchor="end">{tick:g}</text>')
    coords = [xy(n, v) for n, v in points]
    parts.append('<polyline fill="none" stroke="#3b6fb6" stroke-width="2" points="'
                 + " ".join(f"{x:.1f},{y:.1f}" for x, y in coords) + '"/>')
    for (n, v), (x, y) in zip(points, coords, strict=True):
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="#3b6fb6">'
                     f"<title>attempt {n}: {v:.3f}</title></circle>"
                     f'<text x="{x:.1f}" y="{height - 10}" text-anchor="middle">#{n}</text>')
    parts.append("</svg>")
    return "".join(parts)


def sparkline(scores: list[float | None], width: int = 120, height: int = 24) -> str:
    """One case's score by attempt; an unscored attempt is a gap marked with a cross."""
    if not scores:
        return '<span class="muted">–</span>'
    step = width / max(len(scores), 1)
    parts = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             'xmlns="http://www.w3.org/2000/svg">']
    for i, s in enumerate(scores):
        x = i * step + 2
        if s is None:
            parts.append(f'<text x="{x:.1f}" y="{height - 6}" class="err">×</text>')
            continue
        h = max((height - 4) * s, 1.0)
        parts.append(f'<rect x="{x:.1f}" y="{height - 2 - h:.1f}" width="{max(step - 4, 2):.1f}" '
                     f'height="{h:.1f}" fill="#3b6fb6"><title>#{i + 1}: {s:.3f}</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


# ---------------------------------------------------------------------------- page

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1000px;
color:#1d2330;padding:0 1rem}h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;
border-bottom:1px solid #dde2ea;padding-bottom:.3rem}.kpis{display:flex;gap:1rem;flex-wrap:wrap}
.kpi{border:1px solid #dde2ea;border-radius:6px;padding:.6rem 1rem;min-width:120px}
.kpi b{display:block;font-size:1.4rem}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #eceff4;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#f5f7fa}.muted{color:#6d7a86}.err{fill:#c0392b;color:#c0392b}
.chart text{font-size:12px;fill:#1d2330}.grid{stroke:#eceff4}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font:12px/1.4 ui-monospace,monospace}
.pass{color:#3a9d5d}.fail{color:#c0392b}
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def score_list(scores: list[float | None]) -> str:
    return ", ".join("×" if s is None else f"{s:.2f}" for s in scores)


def render(data: ReportData, source: str) -> str:
    """The whole page as one string."""
    rate = data.passed / data.cases if data.cases else 0.0
    means = [(n, data.attempt_sum[n] / data.attempt_n[n]) for n in sorted(data.attempt_n)]
    kpis = [("cases", f"{data.cases}"), ("passed", f"{data.passed}"),
            ("pass rate", f"{rate:.1%}"), ("total cost", f"${data.cost:.4f}")]
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        f"<title>evallint run report: {esc(source)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>evallint run report</h1><p class=\"muted\">{esc(source)}"
        f" · runs: {esc(', '.join(sorted(data.run_ids)) or 'n/a')}</p>",
        *([f'<p class="fail"><b>Mock provider:</b> {data.mock} of {data.cases} records were '
           "answered by evallint's mock provider (<code>evallint run --mock</code>): no model "
           "was called, the scores come from its answer key and every cost is $0.</p>"]
          if data.mock else []),
        '<div class="kpis">' + "".join(f'<div class="kpi"><span class="muted">{esc(k)}</span>'
                                       f"<b>{esc(v)}</b></div>" for k, v in kpis) + "</div>",
        "<h2>Pass rate</h2>",
        bar_chart([("passed", data.passed), ("not passed", data.cases - data.passed)]),
        "<h3>Status</h3>",
        bar_chart(sorted(data.statuses.items(), key=lambda kv: -kv[1])),
        "<h2>Score by attempt</h2><p class=\"muted\">Mean score of the attempts made at each "
        "attempt number (cases stop early when they pass).</p>",
        line_chart(means),
        f"<h3>Per case</h3><p class=\"muted\">Score of each attempt; the first "
        f"{min(data.cases, MAX_CASE_ROWS)} of {data.cases} cases.</p>",
        "<table><tr><th>case</th><th>attempts</th><th>scores</th><th>pass</th></tr>",
        *(f"<tr><td>{esc(cid)}</td><td>{len(scores)}</td><td>{sparkline(scores)} "
          f"<span class=\"muted\">{esc(score_list(scores))}</span></td>"
          f"<td class=\"{'pass' if ok else 'fail'}\">{'yes' if ok else 'no'}</td></tr>"
          for cid, scores, ok in data.case_rows),
        "</table>",
        "<h2>Failure categories</h2>",
        bar_chart(sorted(data.categories.items(), key=lambda kv: -kv[1])),
        "<h2>Cost by model</h2>",
        bar_chart(sorted(data.cost_by_model.items(), key=lambda kv: -kv[1]), fmt="${:.4f}"),
        f"<h2>Worst cases</h2><p class=\"muted\">The {len(data.worst)} lowest-scoring cases "
        "that did not pass, with the evaluator's feedback.</p>",
        "<table><tr><th>case</th><th>score</th><th>category</th><th>status</th>"
        "<th>feedback</th><th>output</th></tr>",
        *(f"<tr><td>{esc(w['case_id'])}</td><td>"
          f"{'n/a' if w['score'] is None else format(w['score'], '.3f')}</td>"
          f"<td>{esc(w['category'])}</td><td>{esc(w['status'])} ({esc(w['attempts'])})</td>"
          f"<td><pre>{esc(w['feedback'])}</pre></td><td><pre>{esc(w['output'])}</pre></td></tr>"
          for w in data.worst_first()),
        "</table>",
        "<p class=\"muted\">Made by evallint report. Self-contained: no external assets.</p>",
        "</body></html>",
    ]
    return "\n".join(out) + "\n"


def write_report(results: Path, output: Path) -> ReportData:
    """Read ``results`` and write the page to ``output`` (SpecError/OSError on bad input)."""
    data = collect(results)
    if data.cases == 0:
        raise SpecError("the results file has no records", str(results))
    output.write_text(render(data, str(results)), encoding="utf-8")
    return data


@click.command("report")
@click.argument("results", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="HTML file to write (default: RESULTS with .html).")
def report(results: Path, output: Path | None) -> None:
    """Write one self-contained HTML report (no external assets) for a run's results.jsonl."""
    target = output or results.with_suffix(".html")
    try:
        if not results.is_file():
            raise SpecError("no such results file (run `evallint run SPEC` first)", str(results))
        if target.resolve() == results.resolve():
            raise SpecError("the report would overwrite the results file; name it with -o",
                            str(results))
        data = write_report(results, target)
    except SpecError as exc:
        click.echo(f"evallint report: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    except (OSError, UnicodeDecodeError) as exc:
        click.echo(f"evallint report: error: {results}: cannot read or write: "
                   f"{getattr(exc, 'strerror', None) or exc}", err=True)
        sys.exit(EXIT_ERROR)
    mock = f"; {data.mock} from the mock provider" if data.mock else ""
    click.echo(f"evallint report: {target} ({data.cases} cases, pass rate "
               f"{data.passed / data.cases:.1%}{mock})", err=True)
    sys.exit(EXIT_OK)
