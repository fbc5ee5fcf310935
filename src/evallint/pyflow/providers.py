"""SDK calls and framework roots, read from the catalogue (:mod:`evallint.catalogue`).

The catalogue's rows say which calls run a model; this module applies them to a call the IR
recorded: :func:`sdk_call_row` for a method or function call, :func:`call_arg` and
:func:`model_value` for the arguments rows name, and the two module-level questions the
front-end asks before any interpretation (:func:`has_sdk_call`, :func:`framework_roots`).
Adding an SDK is a catalogue file, not an edit here.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from evallint import catalogue
from evallint.catalogue import CallRow, ModelFrom
from evallint.pyflow.ir import CallIR, PythonFacts, Val

CAT = catalogue.load()


def framework_evaluator(qualified: str) -> str | None:
    """``uptrain.EvalLLM`` -> ``uptrain``: an evaluation framework's evaluator class."""
    row = CAT.object_row(qualified)
    return row.framework if row is not None and row.kind == "evaluator" else None


@lru_cache(maxsize=8192)
def _method_rows(func: str) -> tuple[CallRow, ...]:
    """The method rows whose suffix a dotted call name ends with (asked for every call the
    interpreter meets, with the same few thousand names)."""
    dotted = "." + func
    return tuple(r for r in CAT.method_calls if any(dotted.endswith("." + m) for m in r.methods))


def _imports_own(row: CallRow, imports: dict[str, str]) -> bool:
    fw = CAT.frameworks[row.framework]
    return any(CAT.framework_of(v) is fw for v in imports.values())


def _imports_sdk(imports: dict[str, str]) -> bool:
    return any((fw := CAT.framework_of(v)) is not None and fw.sdk and bool(fw.calls)
               for v in imports.values())


def sdk_call_row(func: str, qualified: str | None, keywords: frozenset[str],
                 imports: dict[str, str], shape_only: bool = False) -> CallRow | None:
    """The catalogue row of a call that runs a model: a qualified function
    (``litellm.completion``) or a method suffix (``client.messages.create``) whose condition
    holds (the module imports an SDK or the call names ``model=``; a generic method name
    such as mistral's ``chat`` only in a module importing that SDK, with ``model=``).
    ``shape_only``: the prefilter's question, whether the call has the shape at all (a
    client passed in from elsewhere still counts)."""
    if qualified is not None:
        row = CAT.function_call(qualified)
        if row is not None:
            return row
    has_model = not keywords.isdisjoint(CAT.model_keywords)
    for row in _method_rows(func):
        if row.needs_keyword and row.needs_keyword not in keywords and not shape_only:
            continue
        if row.requires == "own-import-and-model":
            if has_model and _imports_own(row, imports):
                return row
        elif row.requires == "model-or-sdk-import":
            if shape_only or has_model or _imports_sdk(imports):
                return row
        else:
            return row
    return None


def inside_package(module: str, package: str) -> bool:
    """Is ``module`` part of ``package`` itself? A framework's own source (``dspy/predict/``)
    builds its objects from its own modules: it is not a program that uses the framework."""
    return module == package or module.startswith(package + ".")


# The calls that run (or derive) a chat model object a caller hands over; the generic ones
# (``predict``, ``complete``, ``batch``, ``stream``) are left out: on a parameter they are as
# often any object's method, and every module holding one would be interpreted.
HANDED_RUNS = frozenset({"invoke", "ainvoke", "with_structured_output", "bind_tools"})


def has_sdk_call(facts: PythonFacts) -> bool:
    """Could this module call an LLM SDK? (the interpreter decides for sure) A callee and
    whether the call names a model decide it: each shape is tested once per module."""
    seen: set[tuple[str, frozenset[str]]] = set()
    runs = HANDED_RUNS
    for fn in facts.functions.values():
        params = {p.name for p in fn.params}
        for c in fn.calls:
            root, _, method = c.func.partition(".")
            if root in params and method in runs:
                return True  # ``llm.ainvoke(prompt)`` on a chat model a caller hands over
            kws = frozenset(k for k, _ in c.kwargs if k in CAT.model_keywords)
            shape = (c.func, kws)
            if shape in seen:
                continue
            seen.add(shape)
            target = facts.imports.get(root, "")
            qualified = f"{target}{c.func[len(root):]}" if target else None
            if qualified is not None:
                row = CAT.object_row(qualified)
                if row is not None and (CAT.frameworks[row.framework].sdk or
                                        row.kind in ("chat", "evaluator")):
                    return True
            if sdk_call_row(c.func, qualified, kws, facts.imports, shape_only=True):
                return True
    return False


def model_reads(facts: PythonFacts) -> tuple[str, ...]:
    """What the model arguments of the module's calls import: the qualified names their
    roots are imported as (``model=settings.JUDGE`` with ``from app import settings``)."""
    imports = facts.imports
    out = {imports[r] for fn in facts.functions.values() for c in fn.calls
           for k, v in c.kwargs if k in CAT.model_keywords
           for r in (n.split(".")[0] for n in v.names) if r in imports}
    return tuple(sorted(out))


def framework_roots(facts: PythonFacts) -> tuple[str, ...]:
    """The modelled frameworks (``dspy``, ``agents`` ...) whose objects this module calls, by
    their import root. Kept apart from :func:`has_sdk_call`: the project analysis counts them
    unless the project holds a package of that name that is not the framework (a project
    whose ``agents/`` package is its own code); see :func:`local_is_framework`."""
    roots: list[str] = []
    seen: set[str] = set()
    for fn in facts.functions.values():
        for c in fn.calls:
            root = c.func.split(".")[0]
            if root in seen:
                continue
            seen.add(root)
            target = facts.imports.get(root, "")
            fw = CAT.framework_of(target) if target else None
            if fw is not None and not fw.sdk:
                top = target.split(".")[0]
                if not inside_package(facts.module, top):
                    roots.append(top)
    return tuple(dict.fromkeys(roots))


def ambient_roots() -> tuple[str, ...]:
    """The import roots of the frameworks whose configure call in one file sets the model
    of all the others (dspy, textgrad, pydantic-evals)."""
    return tuple(p.split(".")[0] for fid in CAT.ambient for p in CAT.frameworks[fid].packages)


def package_marks(root: str) -> tuple[str, ...]:
    """The names a local package called ``root`` must define to be the framework itself
    (``agents`` is the Agents SDK only with ``Runner``...); () when the name is the
    framework's own whatever it holds."""
    fw = CAT.framework_of(root)
    return fw.package_marks if fw is not None else ()


def qualify(func: str, imports: dict[str, str]) -> str:
    """``ChatOpenAI`` -> ``langchain_openai.ChatOpenAI`` through the module's imports (the
    dotted name itself when its root is not imported)."""
    root = func.split(".")[0]
    target = imports.get(root)
    return f"{target}{func[len(root):]}" if target else func


def call_arg(c: CallIR, keys: Iterable[str], position: int | None = None) -> Val | None:
    """The first of a row's keys the call passes (``"#0"`` is the first positional
    argument, ``"#1.task"`` the ``task`` key of the second, ``judge.model`` the ``model`` key
    of the ``judge`` object argument), else the argument at ``position``."""
    for k in keys:
        if k.startswith("#"):  # ``#1``: the second argument; ``#1.task``: its ``task`` key
            pos, _, field = k[1:].partition(".")
            i = int(pos)
            if len(c.args) > i:
                v: Val | None = c.args[i]
                if field and v is not None:
                    v = dict(v.keys).get(field)
                if v is not None:
                    return v
        else:
            head, _, field = k.partition(".")
            v = c.kw(head)
            if v is not None and field:  # ``judge.model``: a key of an object argument
                v = dict(v.keys).get(field)
            if v is not None:
                return v
    if position is not None and len(c.args) > position:
        return c.args[position]
    return None


def model_value(model: ModelFrom | None, c: CallIR) -> Val | None:
    """The argument a row's model comes from: the first of its keywords the call passes,
    else its position."""
    return call_arg(c, model.keywords, model.position) if model is not None else None


def default_model(qualified: str) -> tuple[str, str] | None:
    """The framework default an object row names (``pydantic_evals.LLMJudge`` ->
    ``openai:gpt-4o`` and why), or None."""
    row = CAT.object_row(qualified)
    if row is None or row.model is None or row.model.default is None:
        return None
    return row.model.default, row.model.default_where


# Words of the text prefilter that are not an API's: what evaluation code is made of.
EVALUATION_WORDS = ("judge", "evaluat", "grader", "grading", "rubric", "llm", "critique",
                    "critic_", "_critic",
                    # a settings field that holds a model name (``writer_model: str``), or a
                    # module constant read from the environment (``JUDGE_MODEL = os.getenv(``)
                    "model: str", "model: optional[str]", "model = os.getenv",
                    "model = os.environ", "model_name = os.getenv", "model_name = os.environ",
                    "model_id = os.getenv", "model_id = os.environ")
_prefilter: list[tuple[str, ...]] = []


def prefilter_words() -> tuple[str, ...]:
    """The words of the text prefilter: the catalogue's and :data:`EVALUATION_WORDS`."""
    if not _prefilter:
        _prefilter.append(tuple(dict.fromkeys((*CAT.prefilter, *EVALUATION_WORDS))))
    return _prefilter[0]


def _changed() -> None:
    _prefilter.clear()
    _method_rows.cache_clear()


CAT.on_change(_changed)


def is_framework_package(root: str, package: PythonFacts | None) -> bool:
    """Is the module ``root`` a modelled framework? Not in the project: the installed
    framework. In the project, a package named like a framework is the framework itself
    (its own repository, whose examples, docs and tests are its users), unless the
    catalogue names marks it must define and it lacks them (``agents/`` holding a project's
    own agents is not the Agents SDK). A TypeScript/JavaScript file is never the package a
    name stands for: scripts import packages by specifier (``tagline.ts`` beside ``agents.ts``
    imports ``@openai/agents``, not the file)."""
    if package is None or package.kind in ("typescript", "javascript"):
        return True
    marks = package_marks(root)
    if not marks:
        return True
    names = set(package.imports) | set(package.constants) | {
        n.split(".")[0] for n in package.functions}
    return all(m in names for m in marks)
