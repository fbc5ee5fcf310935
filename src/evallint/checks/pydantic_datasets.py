"""EL301/EL302 for the LLMJudge evaluators of a pydantic-evals dataset file that Python code
loads (``Dataset.from_file``) and evaluates on a task (``dataset.evaluate_sync(task)``).

The dataset file names the judge's model (or leaves it to pydantic-evals' default) but never
the model under test; the Python code that runs it does. Each judge of the file is paired
with the model calls of the task (the task function's own calls, else the generator calls of
the module that evaluates), and the one models check decides: the finding is on the judge's
line in the dataset file, with the task's call and the evaluating call as related places (as
promptfoo's Python graders are reported where the grader's model is named).

The file is read here, on each run, and only when such a call was seen: the Python facts say
which file (:mod:`evallint.pyflow.datasets`), so a changed dataset is never hidden by a cache.
Files outside the evaluating module's project are never read; a missing or unparsable file
gives nothing.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator
from typing import TYPE_CHECKING

from evallint import reads
from evallint.classify import project_root_of
from evallint.confine import inside_any
from evallint.facts.modelpairs import ModelEnd, ModelPair, pair_source
from evallint.frontend import ParseError
from evallint.models import without_provider
from evallint.pyflow.ir import PythonFacts
from evallint.pyflow.project import rel, result_for
from evallint.pyflow.providers import default_model
from evallint.pyflow.results import SYMBOLIC, LLMCall, where
from evallint.registry import Context, Project
from evallint.roles import Role
from evallint.source import SourceError, decode

if TYPE_CHECKING:
    from evallint.facts.configs import DatasetJudge


@pair_source
def dataset_pairs(project: Project, ctx: Context) -> Iterator[ModelPair]:
    """Each LLMJudge of a dataset file with each model call of the task it is evaluated on."""
    mods = [f for f in project.files.values() if isinstance(f, PythonFacts)]
    runs = [(f, r) for f in mods for r in f.datasets if r.target]
    if not runs:
        return
    calls = result_for(project, ctx).calls
    default = _default_judge(mods)
    read: dict[str, list[DatasetJudge] | None] = {}
    for facts, run in runs:
        display = posixpath.normpath(posixpath.join(posixpath.dirname(facts.path), run.target))
        if display not in read:
            read[display] = _judges(facts.path, display, ctx)
        judges = read[display]
        if not judges:
            continue
        gens = _task_calls(mods, facts, run.task, calls)
        task = f"`{run.task}`" if run.task else "the task"
        runs_at = rel(facts.path, run.run, f"the call that evaluates this dataset on {task}")
        for judge in judges:
            model, shown = (judge.model, f"`{judge.model}`") if judge.model else default
            if model is None:
                continue
            who = (f"the {judge.name} of {posixpath.basename(display)} (evaluated on {task} at "
                   f"{where(facts.path, run.run)})")
            end = ModelEnd(who, display, judge.pos, without_provider(model), shown)
            for g in gens:
                assert g.model is not None
                yield ModelPair(
                    end, ModelEnd(f"the task's model call at {where(g.path, g.pos)}", g.path,
                                  g.pos, without_provider(g.model), _shown(g)),
                    key=(display, judge.pos.line, judge.pos.column),
                    related=(rel(g.path, g.pos, f"the task's model call ({_shown(g)})"),
                             runs_at),
                    evidence=(f"evaluator: a pydantic-evals `LLMJudge` declared in {display}",
                              f"generator: the task {task} evaluated at "
                              f"{where(facts.path, run.run)}",
                              *(f"generator: {x}" for x in g.evidence)),
                    hint="give the LLMJudge a `model:` of another family")


def _judges(py_path: str, display: str, ctx: Context) -> list[DatasetJudge] | None:
    """The LLMJudges of the dataset file ``display`` (a path like the module's own, relative
    to where evallint runs); None when it is outside the module's project, missing,
    unreadable or not valid YAML. (The YAML reader is imported here: few projects have a
    dataset file, and a run over Python files alone needs none.)"""
    from evallint.datasetfiles import dataset_judges

    home = project_root_of(py_path)
    if not inside_any(display, (os.path.realpath(home),) if home else ctx.config.roots):
        return None  # never read outside the project: the tree is untrusted
    try:
        text = decode(reads.read_file(display, ctx.config.max_file_size, ctx.config.roots),
                      ctx.config.max_file_size)
        return dataset_judges(text)
    except (OSError, SourceError, ParseError, RecursionError):
        return None


def _default_judge(mods: list[PythonFacts]) -> tuple[str | None, str]:
    """The model an LLMJudge without ``model`` runs on: pydantic-evals' default, or the one
    ``set_default_judge_model`` sets; (None, "") when that call's model is not a constant
    or calls set different ones (the judge's model is then unknown)."""
    sets = [(f.path, d) for f in mods for d in f.judge_defaults]
    if not sets:
        default = default_model("pydantic_evals.LLMJudge")
        if default is None:
            return None, ""
        model, why = default
        return model, f"`{model}` ({why.replace('`model=`', '`model:`')})"
    models = {d.model for _, d in sets}
    if len(models) != 1 or "" in models:
        return None, ""
    path, d = sets[0]
    return d.model, f"`{d.model}` (no `model:` on the LLMJudge: the default judge model set " \
                    f"at {where(path, d.pos)})"


def _task_calls(mods: list[PythonFacts], facts: PythonFacts, task: str,
                calls: list[LLMCall]) -> list[LLMCall]:
    """The model calls of ``task``: the calls with a known model made in the task function
    (followed through an import); when it has none, the generator calls of the module that
    evaluates the dataset (as an LLMJudge built in Python is paired)."""
    path: str | None = facts.path
    fn = task
    head, _, rest = task.partition(".")
    target = facts.imports.get(head, "")
    if target:
        mod, _, fn = f"{target}.{rest}".rstrip(".").rpartition(".")
        path = next((m.path for m in mods if mod and (m.module == mod or m.module.endswith(
            f".{mod}"))), None)
    own = [c for c in calls if task and c.path == path and c.function == fn
           and c.role is not Role.EVALUATOR and _known(c)]
    if own:
        return own
    return [c for c in calls if c.path == facts.path and c.role is Role.GENERATOR
            and not c.own_role and _known(c)]


def _known(c: LLMCall) -> bool:
    return c.model is not None and not c.model.startswith(SYMBOLIC)


def _shown(c: LLMCall) -> str:
    how = f", {c.model_where}" if c.model_where else ""
    return f"`{c.model}`{how}"

