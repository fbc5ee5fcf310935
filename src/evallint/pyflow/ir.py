"""The Python front-end's facts: a small, picklable summary of each module's code.

A Python file is reduced to a tree of *steps* per function (assignments, calls, returns, ifs,
loops) over *values* that record only what matters to evaluation-loop rules: which local names
and call results an expression is made of, its string constants, and a symbolic form for model
resolution. The project-level analysis (:mod:`evallint.pyflow.analysis`) interprets this tree;
it never sees source text. Other front-ends (agents, frameworks) may import these classes: the
public dataclasses below are a stable interface.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from evallint import datacodec
from evallint.facts import FileFacts, Pos, PromptFacts, pickled_by_fields

if TYPE_CHECKING:
    from evallint.facts.inspect_graders import InspectGrader
    from evallint.pyflow.datasets import DatasetRun, JudgeDefault

# A symbolic value for model resolution:
#   ("lit", text)                       a string literal
#   ("name", "A.b.c")                   a name or attribute path (dict keys folded in: CFG.judge)
#   ("env", "VAR", default_ref | None)  os.environ.get / os.getenv with its default
Ref = tuple  # type: ignore[type-arg,unused-ignore]


@pickled_by_fields
@dataclass(slots=True)
class Val:
    """What an expression is made of.

    ``names`` are access paths read (``resp.content.0.text``; ``x.get("k")`` becomes ``x.k``),
    ``calls`` the ids (in the enclosing :class:`FunctionIR`) of calls whose results flow into
    the value, ``text`` the literal when the whole expression is a string constant, ``strings``
    string constants inside it (truncated), ``tool_names`` the ``name``/``type`` values of dict
    literals and bare names in list literals (tool definitions), ``ref`` a symbolic form when the
    expression is simple enough to resolve a model from, ``compares`` the operand values of
    ordering comparisons (``<``, ``>=`` ...) it contains, ``truthy`` True for ``while True``,
    ``scored`` when a string constant in it asks for a numeric score (a judge prompt's output
    contract: "score from 1 to 10", ``"score":``), ``boolean`` when the whole expression is a
    comparison or a negation (its value is a bool: ``int(a == b)`` parses nothing), ``system``
    the names that sit in a message list's system slot (the content of a ``{"role": "system"}``
    dict, of ``SystemMessage(...)``, of a ``("system", x)`` pair): the generator's instructions.
    ``matches`` the tests of a text against a short literal it contains (``"PASS" in reply``,
    ``reply.strip() == "OK"``, ``reply.startswith("LGTM")``): the literal and the value of
    what is tested, each the whole test.
    """

    names: tuple[str, ...] = ()
    calls: tuple[int, ...] = ()
    text: str | None = None
    strings: tuple[str, ...] = ()
    tool_names: tuple[str, ...] = ()
    ref: Ref | None = None
    compares: tuple[Val, ...] = ()
    truthy: bool = False
    chained: bool = False  # a range check such as ``0 <= x <= 10``
    scored: bool = False
    boolean: bool = False
    system: tuple[str, ...] = ()
    # A tuple display ``(a, b)``: each element's value, so ``return text, history`` and
    # ``x, y = a, b`` keep the history apart from the text (empty for anything else).
    elts: tuple[Val, ...] = ()
    matches: tuple[tuple[str, Val], ...] = ()
    # A dict display ``{"draft": text, "n": n + 1}``: each string key's value (a graph node
    # returns the state keys it writes this way)
    keys: tuple[tuple[str, Val], ...] = ()


EMPTY = Val()


@pickled_by_fields
@dataclass(slots=True)
class CallIR:
    """One call expression. ``func`` is the dotted callee as written (``client.messages.create``,
    ``generate``, ``self.judge``) or ``""`` when the callee is not a name path; ``recv`` is the
    value of the object a method is called on when that is not a plain name path."""

    id: int
    func: str
    args: tuple[Val, ...]
    kwargs: tuple[tuple[str, Val], ...]
    pos: Pos
    recv: Val | None = None
    star: bool = False
    in_try: bool = False

    def kw(self, name: str) -> Val | None:
        for k, v in self.kwargs:
            if k == name:
                return v
        return None


@pickled_by_fields
@dataclass(slots=True)
class Assign:
    """``targets = value`` (tuple unpacking gives several targets; ``aug`` for ``+=``;
    ``weak`` when the target is an element, such as ``d[k] = v``, so old values remain;
    ``unpack`` when the targets are one flat tuple, ``a, b = ...``, one name per element)."""

    targets: tuple[str, ...]
    value: Val
    pos: Pos
    aug: bool = False
    weak: bool = False
    unpack: bool = False


@pickled_by_fields
@dataclass(slots=True)
class ExprStep:
    """An expression evaluated for its effect (usually a call). ``yielded``: a ``yield``
    statement, what a generator function hands its caller (as a ``return`` does)."""

    value: Val
    pos: Pos
    yielded: bool = False


@pickled_by_fields
@dataclass(slots=True)
class Return:
    value: Val
    pos: Pos


@pickled_by_fields
@dataclass(slots=True)
class Exit:
    """``break``, ``continue``, ``raise``: only matters for loop bounds."""

    kind: str
    pos: Pos


@pickled_by_fields
@dataclass(slots=True)
class If:
    test: Val
    body: list[Step]
    orelse: list[Step]
    pos: Pos


@pickled_by_fields
@dataclass(slots=True)
class Loop:
    """A ``for``/``while`` loop. ``id`` is unique in its function; ``end_line`` is its last line."""

    id: int
    kind: str  # for | while
    targets: tuple[str, ...]
    iter: Val
    test: Val | None
    body: list[Step]
    orelse: list[Step]
    pos: Pos
    end_line: int = 0


Step = Assign | ExprStep | Return | Exit | If | Loop


def walk_steps(steps: list[Step]) -> Iterator[Step]:
    """Every step of a body, nested ones (if and loop bodies) included, in order."""
    for st in steps:
        yield st
        if isinstance(st, (If, Loop)):
            yield from walk_steps(st.body)
            yield from walk_steps(st.orelse)


@pickled_by_fields
@dataclass(slots=True)
class Param:
    name: str
    default: Val | None = None
    star: bool = False
    # the class its annotation names (``llm: LLMClient``, ``Optional[LLMClient]``), if any
    annotation: str | None = None


@pickled_by_fields
@dataclass(slots=True)
class FunctionIR:
    """A function (``f``, ``Class.method``) or the module body (``<module>``)."""

    name: str
    params: tuple[Param, ...]
    body: list[Step]
    calls: list[CallIR]
    pos: Pos
    is_method: bool = False
    cls: str | None = None
    validates: bool = False  # validation evidence: *validate*(), isinstance, range check, clamp
    best: bool = False  # keeps a best candidate: a name with the token "best", max/sorted(key=)
    locals: frozenset[str] = frozenset()
    # ``with`` blocks over a call (``with dspy.context(lm=...):``): (call id, last line)
    withs: tuple[tuple[int, int], ...] = ()


@dataclass
class PythonFacts(FileFacts):
    """A Python module or notebook.

    ``analyzed`` is False when the text prefilter found nothing LLM-related: then only the
    module name is set. ``imports`` maps each local alias to a qualified name (``np`` ->
    ``numpy``, ``llm`` -> ``pkg.helpers.llm_call``); ``constants`` holds module-level values by
    name, class attributes as ``Class.attr`` and dict-literal entries as ``NAME.key``.
    """

    module: str = ""
    analyzed: bool = False
    # (``constants`` also holds ``Class.__bases__``: the names of a class's bases)
    imports: dict[str, str] = field(default_factory=dict)
    constants: dict[str, Val] = field(default_factory=dict)
    functions: Mapping[str, FunctionIR] = field(default_factory=dict)
    # constant -> the function whose ``calls`` its value's call ids index (``<module>``,
    # ``Class.__init__`` for ``self.x = ...``): a module-level ``llm = ChatOpenAI(...)``
    owners: dict[str, str] = field(default_factory=dict)
    notebook: bool = False
    # Set when not analyzed: what the file imports (a line scan), see Analysis._load_importers.
    imported: tuple[str, ...] = ()
    # A digest of the text, for the project analysis cache (empty: nothing to analyse).
    digest: str = ""
    # Notebooks: code cells left out because they do not parse (where, and Python's message).
    skipped_cells: tuple[tuple[Pos, str], ...] = ()
    # Set when the file is not analysed as Python by design (a notebook of another language,
    # a scaffold template holding Jinja): why, for an EL901 note.
    not_python: str = ""
    # Prompt templates held in Python strings, with positions in this file (the template
    # rules read them; see :mod:`evallint.frontends.pystrings`).
    prompts: list[PromptFacts] = field(default_factory=list)

    # Set by the front-end: a call in this module looks like an LLM SDK call. The project
    # analysis starts from these modules without decoding anyone's code tree.
    calls_sdk: bool = False
    # Set by the front-end: a function here runs functions it is handed as the steps of a
    # loop or a harness (see ``callbacks.chains_params``): read when a relevant module
    # imports it, for its callers' functions run there.
    runs_steps: bool = False
    # The imported names it calls with one of its own functions as an argument (eager, see
    # ``callbacks.handed_to``): a skipped file defining one is read if it runs them.
    handed_to: tuple[str, ...] = ()
    fw_roots: tuple[str, ...] = ()  # modelled frameworks it calls (see providers.framework_roots)
    # What its calls' model arguments import (``model=settings.JUDGE``: the qualified name
    # ``settings`` is imported as), eager: the analysis loads a skipped file they name.
    model_reads: tuple[str, ...] = ()
    # The names in ``functions``, kept eager: following an import to a function does not
    # decode the code tree of every module on the way.
    function_names: frozenset[str] = frozenset()
    # The same names in the order of ``functions`` (the order the analysis runs them in), and
    # the names in ``constants``: a solve that replays a module's functions (see
    # :mod:`evallint.pyflow.replay`) and lookups of its constants decode no code tree.
    function_order: tuple[str, ...] = ()
    constant_names: frozenset[str] = frozenset()
    # pydantic-evals datasets read from a file and evaluated on a task, and the calls that set
    # the default judge model (see :mod:`evallint.pyflow.datasets`); eager, read by a check.
    datasets: tuple[DatasetRun, ...] = ()
    judge_defaults: tuple[JudgeDefault, ...] = ()
    # The Inspect grader calls (``model_graded_qa()``, ``get_model()`` in a scorer) of a module
    # whose text names ``inspect_ai``, read from the same tree: see
    # :mod:`evallint.frontends.inspect_facts` and :mod:`evallint.checks.inspect_scorers`.
    inspect_graders: tuple[InspectGrader, ...] = ()
    # What the project's example env files (``.env.example``) give the environment variables
    # this module reads: (variable, value, the file's display path); see
    # :mod:`evallint.frontends.envfiles`. Eager: read when a model resolves to a variable.
    env_defaults: tuple[tuple[str, str, str], ...] = ()

    # The code tree (constants, functions, owners) travels through the process pool as one
    # pickled blob and stays an undecoded plain-data string in the result cache, decoded on
    # first use: modules the project analysis never enters are never decoded, and a warm run
    # whose project analysis is cached builds none of these objects. ``imports`` stays eager
    # (small, and read for every module to follow imports).
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        if "functions" in state:
            tree = tuple(state.pop(name) for name in _TREE)
            if "_tree" not in state:
                state["_tree"] = pickle.dumps(tree, protocol=pickle.HIGHEST_PROTOCOL)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    __lazy_fields__: ClassVar[tuple[str, ...]] = ("constants", "functions", "owners")
    # each function's code tree is decoded when the analysis first reads it (a solve after an
    # edit interprets a few functions of a module and replays the others)
    __lazy_maps__: ClassVar[tuple[str, ...]] = ("functions",)

    def __getattr__(self, name: str) -> Any:
        if name in _TREE:
            if "_tree" in self.__dict__:  # from our own worker process, never from disk
                self.constants, self.functions, self.owners = pickle.loads(
                    self.__dict__["_tree"])
                return self.__dict__[name]
            if datacodec.load_lazy(self, keep=True):
                return self.__dict__[name]
        raise AttributeError(name)

    def stored_tree_size(self) -> int | None:
        """The bytes the code tree is kept in until decoded (a pickle from a worker, or its
        encoding from the cache): a measure of the work of interpreting the module, known
        without decoding it. None once decoded without them, or when there is no tree."""
        state = self.__dict__
        blob = state.get("_tree", state.get(datacodec.LAZY_ATTR))
        return len(blob) if isinstance(blob, bytes) else None

    def release_tree(self) -> None:
        """Drop the decoded code tree when what it was decoded from is still here (it is
        decoded again on the next use). The project analysis releases a module's tree once
        no part left to solve reads it, so that peak memory holds the trees of the parts in
        hand, not those of every part of the project."""
        state = self.__dict__
        if "functions" in state and ("_tree" in state or datacodec.LAZY_ATTR in state
                                     or state.get(datacodec.DETACHED_ATTR) is not None):
            for name in _TREE:
                state.pop(name, None)


_TREE = ("constants", "functions", "owners")
