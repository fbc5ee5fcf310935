"""EL501-EL505 for Python: refinement loops that are unbounded, return the last attempt, trust
the judge's pass flag, parse judge output unchecked, or truncate their results file."""

from __future__ import annotations

from collections.abc import Iterator

from evallint.classify import is_script
from evallint.findings import Finding, Severity
from evallint.pyflow.project import rel, result_for
from evallint.pyflow.results import Event, Result, judge_named_only, where
from evallint.registry import Context, Project, project_check
from evallint.scriptbuiltins import script_name


@project_check("EL501", "EL502", "EL503", "EL504", "EL505")
def python_loops(project: Project, ctx: Context) -> Iterator[Finding]:
    result = result_for(project, ctx)
    if ctx.is_enabled("EL501"):
        for loop in result.loops:
            if not loop.refinement or loop.bounded:
                continue
            g, e = loop.gen[0], loop.ev[0]
            related = [rel(loop.path, g, "the generator is called here"),
                       rel(loop.path, e, "the evaluator is called here")]
            yield ctx.finding(
                "EL501", loop.path, loop.pos,
                f"refinement loop at {where(loop.path, loop.pos)} calls the generator "
                f"({where(loop.path, g)}) and the evaluator ({where(loop.path, e)}) with no "
                "bound on attempts: add a max_attempts counter", related=related)
    for ev in result.events:
        if ctx.is_enabled(ev.code):
            text, weaker = message(ev), None
            if ev.code == "EL503" and _judge_named_only(result, ev):
                text += " (role from names only: nothing but a name makes the evaluator one)"
                weaker = Severity.WARNING
            yield ctx.finding(ev.code, ev.path, ev.pos, text, default=weaker,
                              related=[rel(p, pos, m) for p, pos, m in ev.related])


def _judge_named_only(result: Result, ev: Event) -> bool:
    """The evaluator whose output the event reads is known by a name only (its function's,
    its model object's): its pass flag or stop word is a judge's only if the name is right."""
    return any(judge_named_only(result, path, pos) for path, pos, _ in ev.related[:1])


# What each kind of loop event says; ``{name}`` fields come from the event's facts.
MESSAGES = {
    ("EL502", "last-attempt"): "returns the last attempt (generated at {at} inside the "
                               "refinement loop), not the best-scoring one",
    ("EL503", "pass-field"): "pass/fail is taken from the evaluator's own `{field}` field "
                             "although the evaluator (at {at}) also gives a score; compute "
                             "pass in code as score >= threshold",
    ("EL503", "text-stop"): "the loop stops when the evaluator's text (from {at}) matches "
                            "`{word}`: the judge's own word decides, unchecked; ask for a score "
                            "or a structured verdict and decide the stop in code",
    ("EL504", "unchecked-parse"): "the evaluator's output (from {at}) is parsed with `{func}()` "
                                  "without error handling or validation",
    ("EL505", "refinement"): 'file opened with mode "{mode}" inside the refinement loop at '
                             "{loop}: every attempt truncates what the attempts before it wrote",
    ("EL505", "per-case"): 'results file opened with mode "{mode}" inside the per-case loop at '
                           "{loop}: every case truncates the records of the cases before it",
    ("EL505", "record-by-record"): 'results file opened with mode "{mode}" and written record '
                                   "by record in the loop at {loop}: a rerun truncates the "
                                   "records of the last run, and an interrupted run cannot "
                                   "resume",
}
_EL505_FIX = '; open it with "a", append each record and flush'


def message(ev: Event) -> str:
    """The finding's text for a loop event of the analysis (a function a script calls named
    as the script names it: ``JSON.parse``, not the ``json.loads`` it is read as)."""
    facts = dict(ev.facts)
    if "func" in facts and is_script(ev.path):
        facts["func"] = script_name(str(facts["func"]))
    text = MESSAGES[(ev.code, ev.kind)].format_map(facts)
    return text + _EL505_FIX if ev.code == "EL505" else text
