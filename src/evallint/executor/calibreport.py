"""How a calibration is shown: a text table, JSON, and one self-contained HTML page.

The page has no script, font or stylesheet from elsewhere (it must open offline, from a CI
artifact): inline CSS, inline SVG histograms, and every value from the cases HTML-escaped.
"""

from __future__ import annotations

import html
import json
from typing import Any

from evallint.executor.calibrate import GATES
from evallint.executor.spec import Calibration

# (section, label, metric key)
ROWS = (
    ("agreement", "accuracy", "accuracy"),
    ("agreement", "balanced accuracy", "balanced_accuracy"),
    ("agreement", "Cohen's kappa", "kappa"),
    ("agreement", "label MAE (score labels)", "label_mae"),
    ("ranking", "ROC AUC (good above bad)", "auc"),
    ("pairs", "preference accuracy", "preference_accuracy"),
    ("pairs", "side-by-side accuracy", "side_by_side_accuracy"),
    ("pairs", "first position wins", "first_position_wins"),
    ("pairs", "position bias", "position_bias"),
    ("length", "score gain from padding", "length_gain"),
    ("length", "padded scored higher", "length_wins"),
    ("stability", "flip rate", "flip_rate"),
    ("stability", "score spread (mean)", "score_spread"),
    ("stability", "score spread (largest)", "max_score_spread"),
)
_BOUND = {metric: (attr, direction) for metric, attr, direction, _ in GATES}


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _bound(metric: str, cal: Calibration) -> tuple[float, str] | None:
    """The calibration's bound on ``metric`` and its direction, when it sets one."""
    if metric not in _BOUND:
        return None
    attr, direction = _BOUND[metric]
    bound = getattr(cal, attr)
    return None if bound is None else (bound, direction)


def threshold_cell(metric: str, cal: Calibration) -> str:
    found = _bound(metric, cal)
    if found is None:
        return ""
    bound, direction = found
    return (">= " if direction == "min" else "<= ") + f"{bound:g}"


def verdict_cell(metric: str, value: Any, cal: Calibration) -> str:
    found = _bound(metric, cal)
    if found is None:
        return ""
    bound, direction = found
    if value is None:
        return "MISSED" if metric in ("auc", "kappa", "balanced_accuracy") else "not measured"
    ok = value >= bound if direction == "min" else value <= bound
    return "ok" if ok else "MISSED"


def report_dict(result: Any, head: dict[str, Any]) -> dict[str, Any]:
    """Everything the JSON output and the HTML page show."""
    return {**head, "passed": result.passed, "failures": result.failures,
            "metrics": result.metrics, "requests": result.requests,
            "cost_usd": round(result.cost_usd, 6), "date": result.date, "cases": result.rows}


def text_report(data: dict[str, Any], cal: Calibration) -> str:
    m = data["metrics"]
    judge_name = data["judge_model"]
    if data.get("provider") == "mock":
        judge_name = f"{judge_name} (the mock provider's answer-key judge)"
    lines = [f"calibration of {data['spec']}: judge {judge_name}, pass threshold "
             f"{data['pass_threshold']:g}, {m['repeats']} repeat(s)",
             f"cases: {m['good_cases']} good, {m['bad_cases']} bad, {m['pairs']} pair(s); "
             f"{data['requests']} requests, ${data['cost_usd']:.4f}, "
             f"{m['parse_errors']} parse error(s)", ""]
    width = max(len(label) for _, label, _ in ROWS) + 2
    lines.append(f"{'metric':<{width}}{'value':>8}  {'threshold':<12}result")
    section = ""
    for sec, label, key in ROWS:
        if sec != section:
            lines.append(sec)
            section = sec
        value = m.get(key)
        lines.append(f"  {label:<{width - 2}}{_fmt(value):>8}  "
                     f"{threshold_cell(key, cal):<12}{verdict_cell(key, value, cal)}".rstrip())
    lines += disagreements(data["cases"])
    lines.append("")
    if data["passed"]:
        lines.append("PASSED: the judge meets every threshold")
    else:
        lines.append("FAILED: " + "; ".join(data["failures"]))
    if data.get("provider") == "mock":
        lines.append("(mock provider: this shows how calibration reads a judge; it proves "
                     "nothing about yours and is not recorded)")
    return "\n".join(lines) + "\n"


def disagreements(rows: list[dict[str, Any]], limit: int = 10) -> list[str]:
    """The cases where the judge and the person parted ways, worst first (at most ``limit``)."""
    found: list[tuple[float, str]] = []
    for row in rows:
        if row["kind"] == "labelled" and row["agreement"] is not None and row["agreement"] < 1:
            found.append((row["agreement"], f"  {row['id']} (line {row['line']}, "
                          f"{'good' if row['good'] else 'bad'}): scores "
                          f"{', '.join(_fmt(s) for s in row['scores'])}"))
        elif row["kind"] == "pair" and row["preference"] is not None and row["preference"] < 1:
            found.append((row["preference"], f"  {row['id']} (line {row['line']}, pair): "
                          f"preferred {', '.join(_fmt(s) for s in row['preferred_scores'])} vs "
                          f"rejected {', '.join(_fmt(s) for s in row['rejected_scores'])}"))
    if not found:
        return []
    found.sort(key=lambda x: x[0])
    head = f"\ndisagreements with the person ({len(found)}"
    head += f", worst {limit} shown):" if len(found) > limit else "):"
    return [head, *(text for _, text in found[:limit])]


def json_report(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------- HTML

_CSS = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#222;max-width:72rem}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}
table{border-collapse:collapse;font-size:.9rem}td,th{border:1px solid #ccc;padding:.25rem .5rem;
text-align:left;vertical-align:top}th{background:#f3f3f3}.ok{color:#17662c}
.bad{color:#a1141b;font-weight:bold}.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{font-size:1.2rem;padding:.5rem;border:2px solid}.pass{border-color:#17662c}
.fail{border-color:#a1141b}small{color:#666}
"""


def _bins(scores: list[float], n: int = 10) -> list[int]:
    counts = [0] * n
    for s in scores:
        counts[min(int(s * n), n - 1)] += 1
    return counts


def histogram_svg(good: list[float], bad: list[float], threshold: float) -> str:
    """Two overlaid histograms of per-call scores (good green, bad red) and the threshold."""
    w, h, pad = 520, 200, 30
    g, b = _bins(good), _bins(bad)
    top = max([*g, *b, 1])
    bar = (w - 2 * pad) / 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h + 40}" '
             f'role="img" aria-label="score distributions">']
    for i in range(10):
        for j, (counts, colour) in enumerate(((g, "#2e8b57"), (b, "#c0392b"))):
            height = (h - pad) * counts[i] / top
            x = pad + i * bar + j * bar / 2
            parts.append(f'<rect x="{x:.1f}" y="{h - height:.1f}" width="{bar / 2 - 1:.1f}" '
                         f'height="{height:.1f}" fill="{colour}"><title>'
                         f'{"good" if j == 0 else "bad"} {i / 10:.1f}-{(i + 1) / 10:.1f}: '
                         f'{counts[i]}</title></rect>')
        parts.append(f'<text x="{pad + i * bar:.1f}" y="{h + 15}" font-size="10">'
                     f'{i / 10:.1f}</text>')
    x = pad + threshold * (w - 2 * pad)
    parts.append(f'<line x1="{x:.1f}" y1="{pad / 2}" x2="{x:.1f}" y2="{h}" stroke="#333" '
                 'stroke-dasharray="4 3"/>')
    parts.append(f'<text x="{x + 3:.1f}" y="{pad / 2 + 8}" font-size="10">threshold '
                 f'{threshold:g}</text>')
    parts.append(f'<text x="{pad}" y="{h + 32}" font-size="11"><tspan fill="#2e8b57">'
                 f'good ({len(good)} grades)</tspan>  <tspan fill="#c0392b">bad ({len(bad)} '
                 'grades)</tspan></text></svg>')
    return "".join(parts)


def _e(value: Any) -> str:
    return html.escape(_fmt(value) if not isinstance(value, str) else value)


def _scores(values: list[Any]) -> str:
    return html.escape(", ".join(_fmt(v) for v in values))


def html_report(data: dict[str, Any], cal: Calibration) -> str:
    m = data["metrics"]
    out = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
           f"<title>evallint calibration: {_e(data['spec'])}</title>",
           f"<style>{_CSS}</style></head><body>",
           f"<h1>Calibration of {_e(data['spec'])}</h1>",
           f"<p>Judge <b>{_e(data['judge_model'])}</b>, pass threshold "
           f"{_e(data['pass_threshold'])}, {_e(m['repeats'])} repeat(s), {_e(data['date'])}. "
           f"{_e(data['requests'])} requests, ${data['cost_usd']:.4f}, "
           f"{_e(m['parse_errors'])} parse error(s).</p>"]
    if data["passed"]:
        out.append('<p class="verdict pass">PASSED: the judge meets every threshold.</p>')
    else:
        out.append('<p class="verdict fail">FAILED: ' + "; ".join(html.escape(f) for f in
                                                             data["failures"]) + "</p>")
    out.append("<h2>Score distributions</h2>")
    out.append(histogram_svg(m["good_scores"], m["bad_scores"], data["pass_threshold"]))
    out.append("<h2>Metrics</h2><table><tr><th>section</th><th>metric</th><th>value</th>"
               "<th>threshold</th><th>result</th></tr>")
    for sec, label, key in ROWS:
        verdict = verdict_cell(key, m.get(key), cal)
        cls = "bad" if verdict == "MISSED" else "ok"
        out.append(f"<tr><td>{_e(sec)}</td><td>{_e(label)}</td><td class=\"num\">"
                   f"{_e(m.get(key))}</td><td>{_e(threshold_cell(key, cal))}</td>"
                   f"<td class=\"{cls}\">{_e(verdict)}</td></tr>")
    out.append("</table>")
    out.append("<h2>Labelled cases</h2><table><tr><th>id</th><th>line</th><th>label</th>"
               "<th>scores</th><th>agreement</th><th>flip</th><th>spread</th>"
               "<th>padded scores</th><th>gain</th></tr>")
    for row in data["cases"]:
        if row["kind"] != "labelled":
            continue
        agree = row["agreement"]
        cls = "bad" if agree is not None and agree < 1 else ""
        out.append(f"<tr><td>{_e(row['id'])}</td><td class=\"num\">{_e(row['line'])}</td>"
                   f"<td>{_e('good' if row['good'] else 'bad')} ({_e(row['label'])})</td>"
                   f"<td class=\"num\">{_scores(row['scores'])}</td>"
                   f"<td class=\"num {cls}\">{_e(agree)}</td>"
                   f"<td>{'yes' if row['flip'] else ''}</td><td class=\"num\">"
                   f"{_e(row['spread'])}</td><td class=\"num\">{_scores(row['padded_scores'])}"
                   f"</td><td class=\"num\">{_e(row['length_gain'])}</td></tr>")
    out.append("</table>")
    pairs = [r for r in data["cases"] if r["kind"] == "pair"]
    if pairs:
        out.append("<h2>Pairs</h2><table><tr><th>id</th><th>line</th><th>preferred scores</th>"
                   "<th>rejected scores</th><th>preference</th><th>side by side "
                   "(preferred first?, first, second)</th><th>position-driven</th>"
                   "<th>gain</th></tr>")
        for row in pairs:
            sides = "; ".join(f"{'P-R' if s[0] else 'R-P'}: {_fmt(s[1])}/{_fmt(s[2])}"
                              for s in row["side_by_side"])
            out.append(f"<tr><td>{_e(row['id'])}</td><td class=\"num\">{_e(row['line'])}</td>"
                       f"<td class=\"num\">{_scores(row['preferred_scores'])}</td>"
                       f"<td class=\"num\">{_scores(row['rejected_scores'])}</td>"
                       f"<td class=\"num\">{_e(row['preference'])}</td>"
                       f"<td>{html.escape(sides)}</td><td class=\"num\">"
                       f"{_e(row['position_driven'])}</td><td class=\"num\">"
                       f"{_e(row['length_gain'])}</td></tr>")
        out.append("</table>")
    out.append("<p><small>Generated by evallint calibrate. Scores are computed in code from "
               "the judge's rubric scores; pass = score &gt;= threshold.</small></p>")
    out.append("</body></html>\n")
    return "\n".join(out)
