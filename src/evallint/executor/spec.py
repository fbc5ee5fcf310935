"""The loop spec: what to run, read from YAML and validated with file:line errors.

Two modes share one file format. The refine loop has ``generator`` and ``evaluator`` blocks;
batched judge mode has a ``judge`` block and grades outputs that already exist in ``cases``.
Unknown keys are errors (a typo must never switch a safeguard off silently).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evallint.executor.errors import read_text
from evallint.executor.rulechecks import Check, validate_check
from evallint.executor.yamlmarks import Located, load_located


@dataclass(frozen=True)
class RoleSpec:
    """One model call's settings: the generator's or the evaluator's (or the batch judge's)."""

    prompt: Path
    model: str | None
    temperature: float | None
    max_tokens: int


@dataclass(frozen=True)
class Extraction:
    """How the final answer is cut out of a generator reply."""

    strip_tags: tuple[str, ...] = ("thinking", "reasoning", "scratchpad")
    answer_tag: str | None = "answer"
    pattern: str | None = None  # a regex; group "answer" or group 1 is the answer


@dataclass(frozen=True)
class Convergence:
    window: int = 2
    min_gain: float = 0.02
    low_quality_below: float = 0.5


@dataclass(frozen=True)
class JudgeSpec:
    """Batched judge mode: grade existing outputs in batches, every item_id must come back."""

    role: RoleSpec
    batch_size: int = 10
    sample: int | None = None
    seed: int = 0
    stratify_by: str = "tags"
    max_reasks: int = 2


@dataclass(frozen=True)
class Calibration:
    """``calibration:``: prove the evaluator on human-judged answers before a run may start.

    A ``None`` threshold is not checked (the metric is still reported)."""

    cases: Path
    repeats: int = 3
    min_auc: float | None = 0.9
    min_kappa: float | None = 0.6
    min_balanced_accuracy: float | None = None
    max_flip_rate: float | None = 0.1
    max_score_spread: float | None = None
    min_preference_accuracy: float | None = 0.8
    max_position_bias: float | None = 0.1
    max_length_gain: float | None = 0.05
    position_probe: bool = True
    length_probe: bool = True
    require: bool = True  # `run` refuses without a passing, current calibration record


@dataclass(frozen=True)
class LoopSpec:
    path: Path
    cases: Path
    results: Path
    pass_threshold: float
    generator: RoleSpec | None = None
    evaluator: RoleSpec | None = None
    judge: JudgeSpec | None = None
    calibration: Calibration | None = None  # prove the evaluator before a run may start
    max_attempts: int = 3
    rubric: dict[str, float] = field(default_factory=dict)
    convergence: Convergence = Convergence()
    concurrency: int = 4
    max_cost_usd: float | None = None
    extract: Extraction = Extraction()
    checks: tuple[Check, ...] = ()
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    max_retries: int = 6
    timeout_s: float = 120.0
    fail_under: float | None = None  # CI gate: exit 1 when the final pass rate is below it
    mode: str = "direct"  # direct | batch (the Message Batches API)
    batch_cases: int = 1000  # batch mode: cases in flight, so requests per wave

    @property
    def batch_mode(self) -> bool:
        return self.judge is not None

    def prompt_files(self) -> list[Path]:
        """Every prompt file the spec names (the lint gate checks them all)."""
        roles = [self.generator, self.evaluator, self.judge.role if self.judge else None]
        return [r.prompt for r in roles if r is not None]


_TOP = {
    "version", "generator", "evaluator", "judge", "calibration", "pass_threshold",
    "max_attempts", "cases",
    "results", "rubric", "convergence", "concurrency", "max_cost_usd", "extract", "checks",
    "prices", "max_retries", "timeout_s",
    "fail_under", "mode", "batch_cases",
}
_ROLE = {"prompt", "model", "temperature", "max_tokens"}
_JUDGE = _ROLE | {"batch_size", "sample", "seed", "stratify_by", "max_reasks"}


def load_spec(path: str | Path) -> LoopSpec:
    """Read and validate a loop spec. Paths in it are relative to the spec's folder."""
    spec_path = Path(path)
    shown = str(path)
    text = read_text(spec_path, "loop spec")
    doc = load_located(text, shown)
    return _parse(doc, spec_path)


def _parse(doc: Located, spec_path: Path) -> LoopSpec:
    data = doc.value
    if not isinstance(data, dict):
        raise doc.error("a loop spec must be a mapping")
    _no_unknown(doc, data, _TOP, ())
    base = spec_path.parent

    judge = None
    generator = evaluator = None
    if "judge" in data:
        if "generator" in data or "evaluator" in data:
            raise doc.error("a spec has either a 'judge' block (batched judge mode) or "
                            "'generator' and 'evaluator' blocks, not both", "judge")
        judge = _judge(doc, data["judge"], base)
    else:
        for key in ("generator", "evaluator"):
            if key not in data:
                raise doc.error(f"missing '{key}' block")
        generator = _role(doc, data["generator"], base, "generator", _ROLE)
        evaluator = _role(doc, data["evaluator"], base, "evaluator", _ROLE)
        if generator.prompt.resolve() == evaluator.prompt.resolve():
            raise doc.error("the generator and the evaluator must have their own prompt files",
                            "evaluator", "prompt")

    for key in ("pass_threshold", "cases", "results"):
        if key not in data:
            raise doc.error(f"missing '{key}'")
    threshold = _number(doc, data["pass_threshold"], "pass_threshold")
    if not 0 < threshold <= 1:
        raise doc.error("pass_threshold must be in (0, 1]: scores are on a 0–1 scale",
                        "pass_threshold")

    spec = LoopSpec(
        path=spec_path,
        cases=_inside(doc, base, _string(doc, data["cases"], "cases"), "cases"),
        results=_inside(doc, base, _string(doc, data["results"], "results"), "results"),
        pass_threshold=threshold,
        generator=generator,
        evaluator=evaluator,
        judge=judge,
        calibration=_calibration(doc, data.get("calibration"), base, judge is not None),
        max_attempts=_int(doc, data.get("max_attempts", 3), "max_attempts", lo=1, hi=50),
        rubric=_rubric(doc, data.get("rubric")),
        convergence=_convergence(doc, data.get("convergence")),
        concurrency=_int(doc, data.get("concurrency", 4), "concurrency", lo=1, hi=512),
        max_cost_usd=_opt_number(doc, data.get("max_cost_usd"), "max_cost_usd", positive=True),
        extract=_extraction(doc, data.get("extract")),
        checks=_checks(doc, data.get("checks")),
        prices=_prices(doc, data.get("prices")),
        max_retries=_int(doc, data.get("max_retries", 6), "max_retries", lo=0, hi=20),
        timeout_s=_number(doc, data.get("timeout_s", 120.0), "timeout_s"),
        fail_under=_fail_under(doc, data.get("fail_under")),
        mode=_mode(doc, data.get("mode", "direct"), judge is not None),
        batch_cases=_int(doc, data.get("batch_cases", 1000), "batch_cases", lo=1, hi=100_000),
    )
    if spec.cases.resolve() == spec.results.resolve():
        raise doc.error("results must not be the cases file", "results")
    return spec


def _inside(doc: Located, base: Path, value: str, *keys: str) -> Path:
    """``base / value``, which must stay inside the spec's project (the nearest folder above
    the spec with a project marker, else the spec's folder) after symlinks are followed: a
    spec in a pull request must not aim ``run`` at ``~/.bashrc`` for its results or at a
    file outside for its prompts."""
    from evallint.classify import project_root_of
    from evallint.confine import inside_any

    target = base / value
    home = project_root_of(str(base / "_")) or str(base)
    if not inside_any(target, (os.path.realpath(home),)):
        raise doc.error(f"'{value}' lies outside the project ({home}): a spec names files "
                        "of its own project", *keys)
    return target


# ---------------------------------------------------------------------------- blocks


def _role(doc: Located, raw: Any, base: Path, name: str, allowed: set[str]) -> RoleSpec:
    if not isinstance(raw, dict):
        raise doc.error(f"'{name}' must be a mapping with prompt and model", name)
    _no_unknown(doc, raw, allowed, (name,))
    if "prompt" not in raw:
        raise doc.error(f"'{name}' needs a 'prompt' file", name)
    model = raw.get("model")
    if model is not None:
        model = _string(doc, model, name, "model")
    temperature = _opt_number(doc, raw.get("temperature"), name, "temperature")
    if temperature is not None and not 0 <= temperature <= 1:
        raise doc.error("temperature must be between 0 and 1", name, "temperature")
    return RoleSpec(
        prompt=_inside(doc, base, _string(doc, raw["prompt"], name, "prompt"), name, "prompt"),
        model=model,
        temperature=temperature,
        max_tokens=_int(doc, raw.get("max_tokens", 1024), name, "max_tokens", lo=1, hi=200_000),
    )


def _judge(doc: Located, raw: Any, base: Path) -> JudgeSpec:
    role = _role(doc, raw, base, "judge", _JUDGE)
    sample = raw.get("sample")
    return JudgeSpec(
        role=role,
        batch_size=_int(doc, raw.get("batch_size", 10), "judge", "batch_size", lo=1, hi=200),
        sample=None if sample is None else _int(doc, sample, "judge", "sample", lo=1,
                                                hi=10**9),
        seed=_int(doc, raw.get("seed", 0), "judge", "seed", lo=0, hi=2**63),
        stratify_by=_string(doc, raw.get("stratify_by", "tags"), "judge", "stratify_by"),
        max_reasks=_int(doc, raw.get("max_reasks", 2), "judge", "max_reasks", lo=0, hi=10),
    )


_RATES = ("min_auc", "min_kappa", "min_balanced_accuracy", "max_flip_rate", "max_score_spread",
          "min_preference_accuracy", "max_position_bias", "max_length_gain")
_SWITCHES = ("position_probe", "length_probe", "require")


def _calibration(doc: Located, raw: Any, base: Path, batch_mode: bool) -> Calibration | None:
    """The ``calibration`` block; thresholds are rates in [0, 1] (kappa in [-1, 1]) or null.
    ``calibration: false`` (or null) is no calibration."""
    if raw is None or raw is False:
        return None
    if not isinstance(raw, dict):
        raise doc.error("calibration must be a mapping with at least 'cases'", "calibration")
    _no_unknown(doc, raw, {"cases", "repeats", *_RATES, *_SWITCHES}, ("calibration",))
    if batch_mode:
        raise doc.error("calibration covers the refine loop's evaluator; batched judge mode "
                        "cannot be calibrated yet", "calibration")
    if "cases" not in raw:
        raise doc.error("calibration needs a 'cases' file of human-judged answers",
                        "calibration")
    values: dict[str, Any] = {}
    for key in _RATES:
        if key not in raw:
            continue
        value = _opt_number(doc, raw[key], "calibration", key)
        lo = -1.0 if key == "min_kappa" else 0.0
        if value is not None and not lo <= value <= 1:
            raise doc.error(f"calibration.{key} must be between {lo:g} and 1", "calibration",
                            key)
        values[key] = value
    for key in _SWITCHES:
        if key in raw:
            if not isinstance(raw[key], bool):
                raise doc.error(f"calibration.{key} must be true or false", "calibration", key)
            values[key] = raw[key]
    repeats = _int(doc, raw.get("repeats", 3), "calibration", "repeats", lo=1, hi=20)
    calibration = Calibration(cases=_inside(doc, base, _string(doc, raw["cases"], "calibration",
                                                                 "cases"), "calibration", "cases"),
                              repeats=repeats, **values)
    if repeats < 2 and (calibration.max_flip_rate is not None
                        or calibration.max_score_spread is not None):
        raise doc.error("stability needs repeats >= 2 (or set max_flip_rate and "
                        "max_score_spread to null)", "calibration", "repeats")
    return calibration


def _rubric(doc: Located, raw: Any) -> dict[str, float]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not raw:
        raise doc.error("rubric must map criterion names to weights", "rubric")
    weights = {str(k): _number(doc, v, "rubric", str(k)) for k, v in raw.items()}
    if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
        raise doc.error("rubric weights must be non-negative and not all zero", "rubric")
    return weights


def _convergence(doc: Located, raw: Any) -> Convergence:
    if raw is None:
        return Convergence()
    if not isinstance(raw, dict):
        raise doc.error("convergence must be a mapping (window, min_gain)", "convergence")
    _no_unknown(doc, raw, {"window", "min_gain", "low_quality_below"}, ("convergence",))
    return Convergence(
        window=_int(doc, raw.get("window", 2), "convergence", "window", lo=1, hi=50),
        min_gain=_number(doc, raw.get("min_gain", 0.02), "convergence", "min_gain"),
        low_quality_below=_number(doc, raw.get("low_quality_below", 0.5), "convergence",
                                  "low_quality_below"),
    )


def _extraction(doc: Located, raw: Any) -> Extraction:
    if raw is None:
        return Extraction()
    if not isinstance(raw, dict):
        raise doc.error("extract must be a mapping (pattern, answer_tag, strip_tags)", "extract")
    _no_unknown(doc, raw, {"pattern", "answer_tag", "strip_tags"}, ("extract",))
    pattern = raw.get("pattern")
    if pattern is not None:
        pattern = _string(doc, pattern, "extract", "pattern")
        _regex(doc, pattern, "extract", "pattern")
    tags = raw.get("strip_tags", list(Extraction.strip_tags))
    if not isinstance(tags, list) or not all(isinstance(t, str) and t.isidentifier()
                                             for t in tags):
        raise doc.error("strip_tags must be a list of tag names", "extract", "strip_tags")
    answer_tag = raw.get("answer_tag", "answer")
    if answer_tag is not None and not (isinstance(answer_tag, str) and answer_tag.isidentifier()):
        raise doc.error("answer_tag must be a tag name or null", "extract", "answer_tag")
    return Extraction(strip_tags=tuple(tags), answer_tag=answer_tag, pattern=pattern)


def _checks(doc: Located, raw: Any) -> tuple[Check, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise doc.error("checks must be a list", "checks")
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or "type" not in item:
            raise doc.error("each check needs a 'type' (length, regex, json_schema)", "checks", i)
        params = {k: v for k, v in item.items() if k != "type"}
        check = Check(kind=str(item["type"]), params=params, line=doc.line("checks", i))
        problem = validate_check(check)
        if problem:
            raise doc.error(problem, "checks", i)
        out.append(check)
    return tuple(out)


def _prices(doc: Located, raw: Any) -> dict[str, dict[str, float]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise doc.error("prices must map model names to {input, output} USD per million tokens",
                        "prices")
    out = {}
    for model, row in raw.items():
        if not isinstance(row, dict) or set(row) - {"input", "output"} or len(row) != 2:
            raise doc.error("a price needs exactly 'input' and 'output' (USD per million "
                            "tokens)", "prices", model)
        out[str(model)] = {k: _number(doc, v, "prices", model, k) for k, v in row.items()}
    return out


def _fail_under(doc: Located, raw: Any) -> float | None:
    value = _opt_number(doc, raw, "fail_under")
    if value is not None and not 0 <= value <= 1:
        raise doc.error("fail_under is a pass rate between 0 and 1", "fail_under")
    return value


def _mode(doc: Located, raw: Any, judge: bool) -> str:
    mode = _string(doc, raw, "mode")
    if mode not in ("direct", "batch"):
        raise doc.error("mode must be 'direct' or 'batch' (the Message Batches API)", "mode")
    if mode == "batch" and judge:
        raise doc.error("mode: batch runs the refine loop (generator and evaluator); the "
                        "batched judge mode already groups its calls", "mode")
    return mode


# ---------------------------------------------------------------------------- scalars


def _no_unknown(doc: Located, raw: dict[str, Any], allowed: set[str], at: tuple[str, ...]) -> None:
    for key in raw:
        if key not in allowed:
            where = ".".join((*at, key))
            raise doc.error(f"unknown key '{where}' (known: {', '.join(sorted(allowed))})",
                            *at, key)


def _string(doc: Located, value: Any, *keys: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise doc.error(f"'{'.'.join(keys)}' must be a non-empty string", *keys)
    return value


def _number(doc: Located, value: Any, *keys: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise doc.error(f"'{'.'.join(keys)}' must be a number", *keys)
    return float(value)


def _opt_number(doc: Located, value: Any, *keys: str, positive: bool = False) -> float | None:
    if value is None:
        return None
    number = _number(doc, value, *keys)
    if positive and number <= 0:
        raise doc.error(f"'{'.'.join(keys)}' must be positive", *keys)
    return number


def _int(doc: Located, value: Any, *keys: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise doc.error(f"'{'.'.join(keys)}' must be a whole number", *keys)
    if not lo <= value <= hi:
        raise doc.error(f"'{'.'.join(keys)}' must be between {lo} and {hi}", *keys)
    return value


def _regex(doc: Located, pattern: str, *keys: str) -> None:
    import re

    try:
        re.compile(pattern)
    except re.error as exc:
        raise doc.error(f"invalid regular expression: {exc}", *keys) from None
