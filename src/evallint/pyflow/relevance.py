"""The second prefilter, on the ``ast`` tree: can a module matter to the Python rules at all
(an SDK import or call, a role-named function, a model or prompt constant)? Files that cannot
are not analysed further."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import lru_cache

from evallint.pyflow.providers import CAT, HANDED_RUNS, inside_package
from evallint.roles import (
    EVALUATOR_ARTIFACTS,
    PLAN_HEADS,
    PRODUCTION_VERBS,
    Role,
    name_tokens,
    role_from_name,
)

# What an evaluation is made of: a name that says it *produces* these (``generate_evals``,
# ``EVALS_GENERATION_PROMPT``) belongs to a tool that writes evaluations, not to a judge, nor
# to a generator of the loop.
EVAL_ARTIFACTS = frozenset({"eval", "evals", "evaluation", "evaluations", "rubric", "rubrics",
                            "criteria", "assertion", "assertions", "test", "tests", "checklist",
                            "testcases", "metric", "metrics"})
# The artifact words none of the others is part of: a name holding none of these letters
# holds no artifact token (most names), which plain substring tests find before any split.
_ARTIFACT_LETTERS = tuple(sorted(w for w in EVAL_ARTIFACTS
                                 if not any(o != w and o in w for o in EVAL_ARTIFACTS)))
_MAKE_VERBS = frozenset({"generate", "write", "create", "synthesize", "draft"})
_MAKE_NOUNS = frozenset({"generation", "creation", "synthesis", "writing", "writer",
                         "generator"})
PROMPT_HEADS = frozenset({"prompt", "prompts", "template", "templates", "tmpl", "messages",
                           "message", "system", "instructions", "instruction"})


# Function names whose call extracts the final answer from a model's text (EL201's default
# ``extract_functions``): what passes through one is not raw output.
DEFAULT_EXTRACT = ("extract*", "*final_answer*", "*strip_think*", "*remove_think*",
                   "*strip_reasoning*", "*remove_reasoning*", "parse_answer", "get_answer",
                   "*final_text*", "answer_only", "*drop_thinking*")


def makes_eval_artifacts(name: str) -> bool:
    """``generate_evaluations``, ``write_test_cases``, ``EVALS_GENERATION_PROMPT``: the name
    says it makes evaluations: a production verb whose object is an artifact (and not the
    artifact's prompt: ``write_eval_prompt`` writes a judge prompt), or an artifact followed
    by a production noun, as English compounds put their head last (``generation_eval`` is
    an evaluation of a generation)."""
    low = name.lower()
    if not any(w in low for w in _ARTIFACT_LETTERS):
        return False
    tokens = name_tokens(name)
    for i, t in enumerate(tokens):
        if t not in EVAL_ARTIFACTS:
            continue
        if i + 1 < len(tokens) and tokens[i + 1] in _MAKE_NOUNS:
            return True
        if any(x in _MAKE_VERBS for x in tokens[:i]) and not (
                set(tokens[i + 1:]) & PROMPT_HEADS):
            return True
    return False


@lru_cache(maxsize=16384)
def function_role(name: str) -> Role:
    """A function's role from its name; when the name has words of both roles
    (``judge_draft``, ``score_answer``) its first word, the verb, decides. A function that
    makes evaluations (``generate_evals``) or plans one (``create_review_plan``) has no role
    of the loop. (Memoised: a project gives thousands of functions a few hundred names.)"""
    if makes_eval_artifacts(name):
        return Role.UNKNOWN
    tokens = name_tokens(name)
    if tokens and tokens[-1] in PLAN_HEADS:  # create_review_plan plans a review
        return Role.UNKNOWN
    if any(len(tokens) > len(t) and tuple(tokens[-len(t):]) == t for t in _sdk_tails()):
        return Role.UNKNOWN  # ``timedGenerateObject`` wraps the SDK's call: no role of its own
    role = role_from_name(name)
    if role is Role.UNKNOWN:
        first = name_tokens(name)
        if first and first[0] in _REFLECT:
            return Role.EVALUATOR  # the reflection step critiques the last attempt
        if first and first[-1] in _VALUE and (len(first) == 1 or first[0] in _VALUE_VERBS):
            return Role.EVALUATOR  # a search's value function scores a candidate
        doer = _AGENT_NOUNS.get(first[-1]) if len(first) > 1 else None
        if doer is Role.EVALUATOR or (doer is Role.GENERATOR and not set(first[:-1]) &
                                      EVALUATOR_ARTIFACTS):
            return doer  # answer_evaluator evaluates answers (a critique_generator critiques)
        if first and first[0] in PRODUCTION_VERBS and set(first[1:]) & EVALUATOR_ARTIFACTS:
            return Role.EVALUATOR  # ``generateScore`` produces a judge's score
        if first:
            return role_from_name(first[0])
    return role


@lru_cache(maxsize=1)
def _sdk_tails() -> tuple[tuple[str, ...], ...]:
    """The catalogue's SDK call names of more than one word (``generateText``,
    ``generate_content``): a function named with one at its end, after words of its own
    (``timedGenerateObject``), wraps that call."""
    names = {f.replace("*", "").rsplit(".", 1)[-1] for r in CAT.calls
             for f in (*r.functions, *r.methods)}
    return tuple(sorted({tuple(name_tokens(n)) for n in names if len(name_tokens(n)) > 1}))


# A reflection step (``reflect()``) writes the critique of the previous attempt.
_REFLECT = frozenset({"reflect", "reflection"})
# A name that ends in the doer (``answer_evaluator``, ``response_generator``) is that doer:
# the words before it say what it works on, not what it does.
_AGENT_NOUNS = {
    **dict.fromkeys(("evaluator", "grader", "judge", "critic", "scorer", "reviewer", "verifier",
                     "checker", "rater", "assessor"), Role.EVALUATOR),
    **dict.fromkeys(("generator", "writer", "solver", "refiner", "responder", "answerer",
                     "drafter"), Role.GENERATOR),
}
# A tree search's value function (``get_value``, ``estimate_values``) scores a candidate.
_VALUE = frozenset({"value", "values"})
_VALUE_VERBS = frozenset({"get", "compute", "estimate", "predict"})

_MODEL_HINTS = ("claude", "gpt-", "gemini", "o1", "o3", "o4", "haiku", "sonnet", "opus")



def needs_analysis(tree: ast.Module, text: str, module: str = "") -> bool:
    """Can this module matter to the Python rules? An SDK import or SDK-shaped call, a function
    named for a role, or a module-level model/prompt constant. Files that only import a helper
    module are caught later: the project analysis parses them on demand. ``module``: the
    module's dotted name; a framework's own package importing itself (``deepeval/metrics/``
    importing ``deepeval.models``) is the framework at work, not a program using it, so that
    import alone is no reason."""
    def sdk(name: str) -> bool:
        return _sdk_root(name) and not (module and inside_package(module, name.split(".")[0]))

    for node in _walk_defs(tree):
        if isinstance(node, ast.Import):
            if any(sdk(a.name) for a in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and (sdk(node.module or "") or any(
                    sdk(f"{node.module}.{a.name}") for a in node.names)):
                return True
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if function_role(node.name) is Role.EVALUATOR or _runs_param(node) or \
                    _runs_steps(node):
                return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and _constant_matters(node):
            return True
    # a client passed in from elsewhere: the call's shape is the only evidence
    return any(t in text for t in CAT.call_text)




def _runs_param(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Does the function run a parameter as a chat model (``llm.ainvoke(prompt)``,
    ``llm.with_structured_output(Out)``)? A caller may hand it one: the module is a helper."""
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    methods = HANDED_RUNS
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr in methods and isinstance(n.func.value, ast.Name)
               and n.func.value.id in params for n in ast.walk(fn))


def _runs_steps(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Does the function call functions it is handed as the steps of a loop or a harness
    (``improve(first, critique, rewrite)``, ``run_case(case, evaluate)``): two parameters or
    more, or one named for a role? Its callers' functions run there (see
    :mod:`evallint.pyflow.callbacks`), so the module is a helper."""
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    if not params:
        return False
    called = {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call)
              and isinstance(n.func, ast.Name) and n.func.id in params}
    return len(called) > 1 or any(function_role(p) is not Role.UNKNOWN for p in called)


def _sdk_root(module: str) -> bool:
    """An LLM SDK, a LangChain package (``langchain_openai``, ``langchain.chat_models``) or
    LangGraph (a graph module wires the generator and the judge nodes into a loop)."""
    return CAT.framework_of(module) is not None


def _walk_defs(tree: ast.Module) -> Iterator[ast.AST]:
    """Module-level statements, class bodies and function signatures (not function bodies)."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.ClassDef, ast.If, ast.Try, ast.With)):
            stack.extend(node.body)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(n for n in node.body if isinstance(
                n, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef)))


def _constant_matters(node: ast.Assign | ast.AnnAssign) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for t in targets:
        if isinstance(t, ast.Name) and role_from_name(t.id) is not Role.UNKNOWN:
            return True
    value = node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and \
            "model" in name_tokens(node.target.id) and "str" in ast.unparse(node.annotation):
        # a settings field (``judge_model: str = Field(...)``, or one the environment fills):
        # one value for every module that reads it, whether or not it is written here
        return True
    if value is not None and any(isinstance(t, ast.Name) and "model" in name_tokens(t.id)
                                 for t in targets):
        src = ast.unparse(value)
        if "getenv" in src or "environ" in src:
            return True  # ``JUDGE_MODEL = os.getenv("JUDGE_MODEL")``: one model for its readers
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        low = value.value.lower()
        return len(low) < 80 and any(h in low for h in _MODEL_HINTS)
    return isinstance(value, ast.Dict) and _names_model(value)


def _names_model(d: ast.Dict, depth: int = 0) -> bool:
    """A dict literal with a model name among its values, or in a dict inside it (a settings
    object: ``{"models": {"judge": "claude-sonnet-4-5"}}``), or a key named for a model
    (``{MODEL_NAME: env.MODEL_NAME ?? "gpt-4o-mini"}``): one value for every module that
    reads it, whatever fills it."""
    for k, v in zip(d.keys, d.values, strict=True):
        if isinstance(k, ast.Constant) and isinstance(k.value, str) and \
                not {"model", "models"}.isdisjoint(name_tokens(k.value.lower())):
            return True
        if isinstance(v, ast.BoolOp):  # ``env.MODEL ?? "gpt-4o-mini"``
            if any(_model_literal(x) for x in v.values):
                return True
        elif _model_literal(v) or (isinstance(v, ast.Dict) and depth < 3
                                   and _names_model(v, depth + 1)):
            return True
    return False


def _model_literal(v: ast.expr) -> bool:
    return isinstance(v, ast.Constant) and isinstance(v.value, str) and len(v.value) < 80 \
        and any(h in v.value.lower() for h in _MODEL_HINTS)
