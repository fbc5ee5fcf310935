"""pydantic-evals dataset files (YAML): the ``LLMJudge`` evaluators they hold, read with
positions. The judge-config front-end reads them from dataset files it meets; the dataset
check reads those that Python code loads (``Dataset.from_file``)."""

from __future__ import annotations

from typing import Any

from evallint.facts import Pos
from evallint.facts.configs import DatasetJudge
from evallint.marks import PathT, load_yaml
from evallint.marks import value_at as _at


def dataset_judges(text: str) -> list[DatasetJudge]:
    """The LLMJudge evaluators of a dataset file that Python code loads
    (``Dataset.from_file``), whatever its head looks like: a long cases list may push them
    past the classifier's sniff. Invalid YAML raises ParseError."""
    doc = load_yaml(text)
    out: list[DatasetJudge] = []
    for at, judge, spec in llm_judges(doc.data):
        if isinstance(spec, dict) and not isinstance(spec.get("rubric"), str):
            continue
        model = spec.get("model") if isinstance(spec, dict) else None
        if isinstance(model, str) and model.strip():
            out.append(DatasetJudge(judge, model.strip(), doc.values.get((*at, "model"))
                                    or doc.pos(*at) or Pos(1, 1)))
        elif isinstance(spec, str) or model is None:
            out.append(DatasetJudge(judge, None, doc.pos(*at) or Pos(1, 1)))
    return out


def llm_judges(data: Any) -> list[tuple[PathT, str, Any]]:
    """Each ``LLMJudge`` entry of a pydantic-evals dataset (dataset-level and per-case
    ``evaluators``): its key path, a name for messages and its spec (rubric or mapping)."""
    if not isinstance(data, dict):
        return []
    places: list[PathT] = [("evaluators",)]
    cases = data.get("cases")
    if isinstance(cases, list):
        places += [("cases", i, "evaluators") for i in range(len(cases))]
    out: list[tuple[PathT, str, Any]] = []
    for place in places:
        evs = _at(data, place)
        if not isinstance(evs, list):
            continue
        for j, ev in enumerate(evs):
            if isinstance(ev, dict) and "LLMJudge" in ev:
                out.append(((*place, j, "LLMJudge"),
                            f"LLMJudge {'.'.join(str(p) for p in place)}[{j}]", ev["LLMJudge"]))
    return out
