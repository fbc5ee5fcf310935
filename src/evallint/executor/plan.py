"""Resolve a spec into a runnable plan and enforce isolation at run time, whatever the lint says.

The evaluator (or batch judge) template may use only ``input`` and ``output``; the generator
template only ``input`` (feedback reaches it as a separate turn, never through its template);
the two roles need their own files and different models; a prompt whose front matter names
the other role is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evallint.executor.errors import SpecError
from evallint.executor.prompts import PromptFile, Rendered, load_prompt
from evallint.executor.spec import LoopSpec, RoleSpec

EVALUATOR_INPUTS = frozenset({"input", "output"})
GENERATOR_INPUTS = frozenset({"input"})
OUTPUT_PLACEHOLDER = "[the generator's final answer goes here]"


@dataclass(frozen=True)
class Role:
    name: str  # generator | evaluator | judge
    prompt: PromptFile
    model: str
    temperature: float | None
    max_tokens: int


@dataclass(frozen=True)
class Plan:
    spec: LoopSpec
    generator: Role | None
    evaluator: Role  # the batch judge in judge mode

    def render_evaluator(self, input_value: Any, output: str) -> Rendered:
        """The only way the evaluator's prompt is ever built: input and output, nothing else."""
        return self.evaluator.prompt.render({"input": input_value, "output": output})

    def render_generator(self, input_value: Any) -> Rendered:
        assert self.generator is not None
        return self.generator.prompt.render({"input": input_value})


def make_plan(spec: LoopSpec) -> Plan:
    if spec.judge is not None:
        judge = _role("judge", spec.judge.role, spec, expected_steps=("evaluator", "judge"))
        names = judge.prompt.section_variables.get("system", set())
        if names:
            raise SpecError("in batched judge mode the system section is shared by every "
                            f"item and may not use variables (found {', '.join(sorted(names))})",
                            str(judge.prompt.path))
        return Plan(spec, None, judge)
    assert spec.generator is not None and spec.evaluator is not None
    generator = _role("generator", spec.generator, spec, expected_steps=("generator",))
    evaluator = _role("evaluator", spec.evaluator, spec, expected_steps=("evaluator", "judge"))
    if _same_model(generator.model, evaluator.model):
        raise SpecError(f"the evaluator runs the generator's model ({evaluator.model}); an "
                        "evaluator must be a different (cheaper) model", str(spec.path))
    return Plan(spec, generator, evaluator)


def _role(name: str, rs: RoleSpec, spec: LoopSpec, expected_steps: tuple[str, ...]) -> Role:
    prompt = load_prompt(rs.prompt)
    shown = str(prompt.path)
    step = prompt.step
    if step is not None and step not in expected_steps:
        raise SpecError(f"front matter says step: {step}, but the spec uses this file as the "
                        f"{name}", shown)
    allowed = GENERATOR_INPUTS if name == "generator" else EVALUATOR_INPUTS
    extra = prompt.variables - allowed
    if extra:
        who = "generator" if name == "generator" else "evaluator"
        may = "input" if name == "generator" else "input and output"
        raise SpecError(f"the {who} template uses {', '.join(sorted(extra))}: the {who} may "
                        f"see only {may}", shown)
    if name != "generator" and "output" not in prompt.variables:
        raise SpecError("the evaluator template never shows the output it must grade "
                        "(no {{output}})", shown)
    model = rs.model or prompt.model
    if rs.model and prompt.model and not _same_model(rs.model, prompt.model):
        raise SpecError(f"{name} model is {rs.model} in the spec but {prompt.model} in the "
                        "prompt's front matter; name it once", str(spec.path))
    if not model:
        raise SpecError(f"no model for the {name}: set {name}.model in the spec or model: in "
                        "the prompt's front matter", str(spec.path))
    temperature = rs.temperature
    if temperature is None and isinstance(prompt.front.get("temperature"), int | float):
        temperature = float(prompt.front["temperature"])
    return Role(name, prompt, model, temperature, rs.max_tokens)


def normalise_model(model: str) -> str:
    """Compare models by family: drop a provider prefix and a date or -latest suffix."""
    import re

    name = model.strip().lower()
    name = re.sub(r"^(anthropic/|(us|eu|apac)\.anthropic\.)", "", name)
    name = re.sub(r"(-\d{8}|-latest)(-v\d+(:\d+)?)?$", "", name)
    return name


def _same_model(a: str, b: str) -> bool:
    return normalise_model(a) == normalise_model(b)

