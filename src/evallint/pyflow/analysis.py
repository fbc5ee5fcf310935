"""Project-level Python analysis: resolve calls, summarise helpers to a fixpoint, then follow
values from the generator's call to the evaluator's.

Each function's steps are interpreted over *labels* (see :class:`~evallint.pyflow.summaries.L`):
an assignment replaces a name's labels (so an extraction really cleans a value), branches join,
loops run twice so values carried across iterations are seen. The result is a list of events
(flows, LLM calls with roles and models, loops, parses, file opens) that the checks in
``evallint/checks/python_*.py`` turn into findings.
"""

from __future__ import annotations

import fnmatch
import re
from collections import deque
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from evallint.config import Config
from evallint.facts import Pos
from evallint.pyflow import frameworks
from evallint.pyflow.ir import (
    Assign,
    CallIR,
    Exit,
    ExprStep,
    FunctionIR,
    If,
    Loop,
    PythonFacts,
    Ref,
    Return,
    Step,
    Val,
    walk_steps,
)
from evallint.pyflow.parts import Part, relevant_modules
from evallint.pyflow.providers import (
    ANTHROPIC_METHODS,
    CHAT_BIND,
    CHAT_INVOKE,
    FRAMEWORK_EVAL_METHODS,
    FRAMEWORK_SETTINGS,
    LITELLM_FUNCS,
    LLM_SDKS,
    NON_CONTENT,
    OPENAI_METHODS,
    STRUCTURED,
    chat_ctor,
    framework_evaluator,
    mistral_call,
)
from evallint.pyflow.relevance import DEFAULT_EXTRACT, function_role, makes_eval_artifacts
from evallint.pyflow.replay import Epoch, QuietRun, Replay
from evallint.pyflow.results import SYMBOLIC, Event, Flow, LLMCall, LoopEvent, Result, where
from evallint.pyflow.summaries import L, Lookup, Module, Origin, Summary, Tables, chat_of
from evallint.roles import EVALUATOR_WORDS, Role, judge_text, role_from_name
from evallint.roles import name_tokens as _name_tokens

METADATA_ATTRS = {"usage", "id", "model", "stop_reason", "finish_reason", "role", "type",
                  "created", "index", "input_tokens", "output_tokens", "stop_sequence",
                  "system_fingerprint", "object", "status"}
THINK_ATTRS = {"thinking", "reasoning", "reasoning_content", "redacted_thinking"}
# Keys of a judge's output that hold a number (reading one shows the judge gives a score).
SCORE_KEYS = {"score", "scores", "rating", "ratings", "points"}
PASS_KEYS = {"pass", "passed", "passes", "is_pass", "pass_", "passing", "success", "approved",
             "accept", "accepted", "is_correct", "correct", "ok"}
# A name that holds a verdict: an LLM call's result stored or read under one is a judgement
VERDICT_TOKENS = SCORE_KEYS | PASS_KEYS | {"verdict", "verdicts", "grade", "grades",
                                           "judgment", "judgement", "approval"}
CTX_TOKENS = {"steps", "intermediate", "trace", "scratchpad", "trajectory", "transcript",
              "history", "toolcalls", "tool", "chain"}
PROMPTISH = {"prompt", "rubric", "criteria", "criterion", "template", "tmpl", "instructions",
             "instruction", "system", "guidelines", "checklist", "preamble", "sys"}
QUIET_CALLS = {"len", "print", "isinstance", "type", "id", "hash", "bool", "range", "sleep",
               "time", "perf_counter", "monotonic", "debug", "info", "warning", "error",
               "exception", "log", "write", "flush", "close", "dump", "dumps"}
PARSE_CALLS = {"json.loads", "int", "float", "ast.literal_eval", "yaml.safe_load", "yaml.load",
               "orjson.loads", "ujson.loads"}
LOADER_TOKENS = {"open", "read", "load", "prompt", "template", "get", "text", "file", "path"}



@lru_cache(maxsize=65536)
def _judge_text(text: str) -> bool:
    """A text that makes the model it is given to a judge, read as every kind reads it
    (:func:`evallint.roles.judge_text`); cached, the interpreter asks for each string often."""
    return judge_text(text) is not None


_REASON_TEXT = re.compile(
    r"step[- ]by[- ]step|<(?:thinking|think|scratchpad|reasoning|thoughts?)>|"
    r"chain[- ]of[- ]thought|think (?:it )?through|"
    r"reason (?:it )?through|show your (?:work|reasoning)|explain your reasoning|"
    r"think carefully|reason carefully|before answering, think",
    re.IGNORECASE,
)
# A call that rewrites the judge's prompt or writes evaluations: its prompt holds the rubric
# as the material it works on; it is neither the loop's generator nor its evaluator.
_META_TEXT = re.compile(
    r"\b(?:optimi[sz]e|rewrite|re-write|improve|condense|refine|shorten|revise|edit)\s+"
    r"(?:(?:a|an|the|this|that|given|following|existing|current|original|above|our|my)\s+)"
    r"{0,3}(?:llm-as-a-judge|judge|evaluation|evaluator|eval|grading|grader|scoring|rubric)\s+"
    r"prompts?\b|\b(?:write|generate|create|propose|draft|suggest)\s+(?:(?:a|an|the|some|"
    r"new|more|good|specific|\d+)\s+)*(?:assertions|evals|test cases|rubrics?|(?:evaluation|"
    r"grading|scoring) criteria|(?:evaluation|judge|grading) prompts?)\b",
    re.IGNORECASE,
)
# What an evaluator-looking call judges when it is not the generator's output: the user's
# input (a guardrail), a retrieved document, a human's answer (a tutor grading a student), or
# where a request goes (a router).
_INPUT_SUBJECT = re.compile(
    r"\b(?:user|customer|human)(?:'s)? (?:message|input|query|request|prompt)s?\b|"
    r"\bprompt[- ]injection|\bjailbreak|\bretrieved (?:document|doc|context|passage|chunk)s?\b|"
    r"\broute (?:the|this|each|a) (?:request|query|question|message)\b|\bwhich (?:agent|tool|"
    r"expert|department|team|worker|node|route) (?:should|to)\b|\bclassify the (?:user's )?"
    r"(?:intent|request|query)\b",
    re.IGNORECASE,
)
# A router or orchestrator: its output picks the next step, agent or tool; reading the other
# calls' outputs to decide where to go is not grading them.
_ROUTER_TEXT = re.compile(
    r"\b(?:orchestrat\w*|routing|router) agent\b|\b(?:decide|determine|choose|pick|select)\s+"
    r"(?:the\s+)?next\s+(?:step|agent|action|tool|node)s?\b|\bchoose\s+(?:one\s+of\s+)?the\s+"
    r"(?:available\s+)?(?:tools|agents|functions)\b|\bwhich\s+(?:agent|tool|function)\s+to\s+"
    r"call\b", re.IGNORECASE)
_HUMAN_ANSWER = re.compile(
    r"\b(?:student|learner|user|human|pupil|trainee|participant|applicant)(?:'s|s')? "
    r"(?:answer|response|reply|solution|essay|submission)s?\b", re.IGNORECASE)
# The generator's output named as what is judged ("the response", "the assistant's reply")
_OUTPUT_SUBJECT = re.compile(
    r"\b(?:the|this|its|their|an?|generated|final|candidate)\s+(?:\w+\s+)?(?:response|reply|"
    r"answer|output|completion|summary|submission|draft)s?\b", re.IGNORECASE)
_MODEL_OUTPUT = re.compile(
    r"\b(?:assistant|model|ai|chatbot|bot|llm|agent)(?:'s)?\s+(?:response|reply|answer|"
    r"output)s?\b|\bgenerated\s+(?:response|answer|output|text)\b", re.IGNORECASE)
_REASONING_MODEL = re.compile(r"(?:^|/)(?:o1|o3|o4)(?:-|$)|deepseek-r1|reasoner|-thinking|qwq",
                              re.IGNORECASE)
_THINK_PATTERN = re.compile(r"think|reason|scratch|analysis|reflection", re.IGNORECASE)
_ANSWER_PATTERN = re.compile(r"answer|final|result|output|</think|####", re.IGNORECASE)
RE_MATCH_FUNCS = {"re.search", "re.match", "re.findall", "re.fullmatch", "re.finditer",
                  "regex.search", "regex.match", "regex.findall", "regex.fullmatch"}
RE_MATCH_METHODS = {"search", "match", "findall", "fullmatch", "finditer"}
_PATTERN_NAME = re.compile(r"pattern|regex|_re$|^re_|_rx$|^rx_|^pat_|_pat$", re.IGNORECASE)
# Patterns that capture free-form text: ``.*``, ``\S+``, ``[^}]*``, ``[\s\S]*``
_FREEFORM = re.compile(r"(?<!\\)\.[*+{]|\\[SWw][*+{]|\[\^[^\]]*\][*+{]|\[\\[sSdDwW]\\[sSdDwW]\]")
_PATHLIKE = re.compile(r"^[\w./-]{1,120}$")

# A value made from a text that asks for a numeric score (see ``Val.scored``).
SCORE_ASKED = L("scoreq")



def judges_input(texts: list[str]) -> bool:
    """Does an evaluator-looking prompt judge something other than the generator's output:
    the user's input, a retrieved document, a human's answer, a route? Only when it names no
    generator output as its subject (a judge of "the response" judges the generator)."""
    text = "\n".join(texts)
    human = _HUMAN_ANSWER.search(text) is not None
    if not (human or _INPUT_SUBJECT.search(text)):
        return False
    if _MODEL_OUTPUT.search(text):
        return False
    # "the answer" next to a student's answer is that answer
    rest = _HUMAN_ANSWER.sub(" ", text)
    return human or not _OUTPUT_SUBJECT.search(rest)


def schema_has_score(consts: Any, vals: Iterable[Val]) -> bool:
    """Does a structured-output class (``response_format=Verdict``) have a score field?

    Class attributes with a value (``score: int = Field(...)``) are module constants, so a
    ``Verdict.score`` key among them says the judge returns a score.
    """
    for v in vals:
        for n in v.names:
            prefix = n + "."
            if any(k.startswith(prefix) and set(name_tokens(k[len(prefix):])) & SCORE_KEYS
                   for k in consts):
                return True
    return False


# --------------------------------------------------------------------------- events


# --------------------------------------------------------------------------- analysis


_EMPTY_SUMMARY = Summary()
_QUEUE_TAKE = frozenset({"get", "get_nowait", "recv", "receive", "popleft", "pop"})
_PATH_TOKENS = frozenset({"dir", "dirs", "path", "paths", "folder", "file", "filename",
                          "dirname", "root"})
_PLAIN = frozenset({"param", "psan"})  # labels that are only symbolic parameters
# methods of an object that may be a chat model or a framework object (``self.agent.run``)
_CHAT_METHODS = (CHAT_INVOKE | CHAT_BIND | frameworks.FRAMEWORK_METHODS
                 | frameworks.HISTORY_METHODS)


class Analysis:
    """Everything project-wide: tables, summaries, options; runs the interpreter."""

    def __init__(self, facts: list[PythonFacts], config: Config,
                 extract: Iterable[str] = DEFAULT_EXTRACT,
                 load: Callable[[PythonFacts], PythonFacts | None] | None = None,
                 part: Part | None = None,
                 tables: tuple[Tables, set[str]] | None = None,
                 replay: Replay | None = None) -> None:
        """``part``: solve only these modules (and what loading its files adds), reading the
        rest of ``facts`` for names; by default the whole project is one part. ``tables``: the
        tables of ``facts`` and their relevant modules, when already built (one per run).
        ``replay``: the quiet runs of the part's last solve, checked and reused, and those of
        this one recorded (:mod:`evallint.pyflow.replay`)."""
        self.config = config
        self.extract = tuple(extract) + tuple(config.extract_functions)
        self._extractor: dict[str, bool] = {}
        self.summaries: dict[tuple[str, str], Summary] = {}
        # module-level names passed as a generator's system prompt / history, per file
        self.genctx: dict[str, dict[str, L]] = {}
        if tables is None:
            self.tables = Tables(facts)
            relevant = relevant_modules(self.tables)
        else:
            self.tables, relevant = tables
        # the relevant modules of the other parts: never solved here
        self.exclude = relevant - part.paths if part is not None else set()
        self.relevant = relevant - self.exclude
        self._stale: set[tuple[str, str]] = set()  # functions to run again (_load_importers)
        # callee -> the functions whose last run read its summary
        self._callers: dict[tuple[str, str], set[tuple[str, str]]] = {}
        # functions whose last run was quiet (``Interp.touched``), with the epoch it began at
        self._quiet: dict[tuple[str, str], tuple[int, bool]] = {}
        self.skipped = (list(part.skipped) if part is not None else
                        [f for f in facts if not f.analyzed and f.imported])
        self.load = load
        # evaluator calls (origin keys) whose output carries a numeric score: the prompt asks
        # for one, the structured-output class has a score field, or the code reads one
        self.scored: set[tuple[str, str, int]] = set()
        # chat model objects (constructor or binding call key) -> (model, where it came from)
        self.chats: dict[tuple[str, str, int], tuple[str | None, str]] = {}
        # chat objects that are an evaluation framework's evaluator (uptrain ``EvalLLM``)
        self.framework: dict[tuple[str, str, int], str] = {}
        # LLM calls that are evaluators by structure (their input holds another LLM call's
        # output and their result becomes a score, a verdict or a loop's decision): why
        self.structural: dict[tuple[str, str, int], str] = {}
        # LLM calls that read their own earlier output (a model refining its own work)
        self.self_fed: set[tuple[str, str, int]] = set()
        self._static_chats: dict[tuple[str, str], frozenset[L]] = {}
        # what computing each answer looked up in the tables (for replay records)
        self._static_reads: dict[tuple[str, str], frozenset[Lookup]] = {}
        # framework objects (constructor key) that run an LLM, and their runs (call key ->
        # framework): see :mod:`evallint.pyflow.frameworks`
        self.fw_objects: dict[tuple[str, str, int], frameworks.FrameworkObject] = {}
        self.fw_runs: dict[tuple[str, str, int], str] = {}
        # framework -> the model set for it as a whole (``dspy.configure(lm=...)``)
        self.ambient: dict[str, tuple[str | None, str]] = {}
        self.result = Result()
        self.replay = replay
        if replay is not None:
            replay.use(self.tables)

    # ------------------------------------------------------------------ relevance

    def _load_importers(self) -> bool:
        """Parse the skipped files (no LLM words) that import an LLM helper of the project
        (a function whose summary calls an LLM), or a module that defines one."""
        if self.load is None or not self.skipped:
            return False
        helpers = {key for key, s in self.summaries.items() if s.llm}
        helper_modules = {path for path, _ in helpers}
        loaded: list[PythonFacts] = []
        rest: list[PythonFacts] = []
        for f in self.skipped:
            hit = False
            for name in f.imported:
                found = self.tables.function_name(name, f.path)
                if found is not None and (found[0].path, found[1]) in helpers:
                    hit = True
                    break
                mod = self.tables.module(name, f.path)
                if mod is not None and mod.name.endswith(name) and mod.path in helper_modules:
                    hit = True
                    break
            if hit:
                x = self.load(f)
                if x is not None and x.analyzed:
                    loaded.append(x)
            else:
                rest.append(f)
        self.skipped = rest
        if not loaded:
            return False
        before = {m.path: self._import_targets(m) for m in self.tables.modules}
        self.tables = Tables([m.facts for m in self.tables.modules] + loaded)
        if self.replay is not None:
            self.replay.use(self.tables)
        self.relevant = (relevant_modules(self.tables) | {f.path for f in loaded}) - self.exclude
        # Functions whose imports now resolve elsewhere (or at all) run again, as do those of
        # modules importing them (constants and chat objects are read through imports);
        # summaries that change then reach their callers through the fixpoint.
        stale = {m.path for m in self.tables.modules
                 if m.path in before and self._import_targets(m) != before[m.path]}
        stale |= {f.path for f in loaded}
        changed = True
        while changed:
            changed = False
            for m in self.tables.modules:
                if m.path not in stale and stale.intersection(self._import_targets(m)):
                    stale.add(m.path)
                    changed = True
        self._stale = {(m.path, f) for m in self.tables.modules if m.path in stale
                       for f in m.facts.function_names}
        return True

    def _import_targets(self, m: Module) -> tuple[str | None, ...]:
        """The module each import of ``m`` resolves to in the current tables."""
        owners = (self.tables.owner(value, m.path) for value in m.facts.imports.values())
        return tuple(o.path if o is not None else None for o in owners)

    def static_chat(self, mod: Module, name: str, depth: int = 0) -> frozenset[L]:
        """Chat model labels of a module-level name or ``Class.attr`` (``llm = ChatOpenAI(...)``,
        ``chain = prompt | llm``, ``from setup import llm``), without interpreting the module."""
        key = (mod.path, name)
        hit = self._static_chats.get(key)
        outer = self.tables.trace
        if hit is not None:
            # a function's run that reads this name read what computing it looked up
            if outer is not None:
                outer.update(self._static_reads.get(key, ()))
            return hit
        self._static_chats[key] = frozenset()  # cycles
        out: frozenset[L] = frozenset()
        mine: set[Lookup] = set()
        self.tables.trace = mine
        try:
            # (the eager name set first: a name the module does not bind decodes nothing)
            val = mod.facts.constants.get(name) if name in mod.facts.constant_names else None
            if depth < 8 and val is not None:
                fn = mod.facts.functions.get(mod.facts.owners.get(name, ""))
                out = self.static_chat_val(mod, fn, val, depth + 1)
            elif depth < 8 and name in mod.facts.imports:
                found = self.tables.constant(mod.facts.imports[name], mod.path)
                if found is not None:
                    out = self.static_chat(found[0], found[1], depth + 1)
        finally:
            self.tables.trace = outer
        self._static_chats[key] = out
        self._static_reads[key] = frozenset(mine)
        if outer is not None:
            outer.update(mine)
        return out

    def static_chat_val(self, mod: Module, fn: FunctionIR | None, val: Val,
                        depth: int) -> frozenset[L]:
        out: set[L] = set()
        for n in val.names:
            out |= self.static_chat(mod, n.split(".")[0], depth)
        if fn is None:
            return frozenset(out)
        for cid in val.calls:
            if cid >= len(fn.calls):
                continue
            c = fn.calls[cid]
            short = c.func.rsplit(".", 1)[-1]
            root = c.func.split(".")[0]
            target = mod.facts.imports.get(root, "")
            qual = f"{target}{c.func[len(root):]}" if target else ""
            if qual and chat_ctor(qual):
                interp = Interp(self, mod, fn, report=False)
                out |= interp.chat_object(c, mod, fn, lambda v: self.resolve_ref(
                    v.ref if v is not None else None, mod, None))
            elif qual and frameworks.object_kind(qual) and self.framework_name(qual, mod.path):
                fw, kind = frameworks.object_kind(qual) or ("", "")
                out |= frameworks.make_object(Interp(self, mod, fn, report=False), c, fw, kind,
                                              mod.path, fn.name)
            elif short in CHAT_BIND:
                base = c.func.rsplit(".", 1)[0]
                inner = (self.static_chat_val(mod, fn, c.recv, depth + 1)
                         if c.recv is not None else
                         self.static_chat(mod, base.split(".")[0], depth + 1))
                chats = [lb for lb in inner if lb.kind == "chat"]
                if chats:
                    out |= Interp(self, mod, fn, report=False).chat_bound(c, chats, mod, fn)
        return frozenset(out)

    def framework_name(self, qualified: str, near: str) -> bool:
        """``agents.Agent`` names the SDK only when the project has no ``agents`` module of
        its own (a local package of that generic name is not the OpenAI Agents SDK); the other
        framework names are the framework's own, in its repository too."""
        return qualified.split(".")[0] != "agents" or self.tables.owner(qualified, near) is None

    def chat_schema_scored(self, mod: Module, vals: tuple[Val, ...]) -> bool:
        return schema_has_score(mod.facts.constants, vals)

    def summary(self, mod: Module, fn: FunctionIR) -> Summary:
        return self.summaries.get((mod.path, fn.name)) or Summary()

    def run(self) -> Result:
        """Summaries to a fixpoint, parse skipped importers of LLM helpers (and repeat), then
        one reporting pass."""
        self._fixpoint()
        for _ in range(4):
            if not self._load_importers():
                break
            self._fixpoint()
        for mod in self.tables.modules:
            if mod.path not in self.relevant:
                continue
            # A function whose last run met no LLM value, call or sink, under the same
            # project-wide state, has nothing to report: its reporting run would be the same.
            # (A module of quiet functions only is not even decoded.)
            epoch = self._epoch(mod.path)
            if all(self._quiet.get((mod.path, name)) == epoch
                   for name in mod.facts.function_order):
                continue
            for name in mod.facts.function_order:  # (a run may change the epoch)
                if self._quiet.get((mod.path, name)) != self._epoch(mod.path):
                    Interp(self, mod, mod.facts.functions[name], report=True).run()
        self._dedupe()
        return self.result

    def quiet_keys(self) -> Iterable[tuple[str, str]]:
        """The functions whose last run in the fixpoint met no LLM value."""
        return self._quiet.keys()

    def _epoch(self, path: str) -> tuple[int, bool]:
        """The project-wide state a function of module ``path`` without LLM values reads: its
        own module's generator-context names (``Interp.read``), and whether any chat object
        exists (which turns on the static chat lookups; their answers do not depend on which
        chats exist). Both only grow. Everything else it could read needs an LLM value first."""
        names = self.genctx.get(path)
        return (len(names) if names else 0), bool(self.chats)

    def quiet_epoch(self, path: str) -> Epoch:
        """Everything project-wide that a function of module ``path`` reads while it meets
        no LLM value (as :meth:`_epoch`, with the names themselves, and whether framework
        objects or runs exist: ``Interp.access`` and ``dispatch`` look them up only then)."""
        names = self.genctx.get(path)
        return (tuple(sorted(names)) if names else (), bool(self.chats),
                bool(self.fw_objects), bool(self.fw_runs))

    def _state(self, path: str) -> tuple[object, ...]:
        """What a run of a function of module ``path`` may have added to the project-wide
        state (generator-context names only ever go to the function's own module): a run
        that changes it is not replayed (a replay does only what its summary says)."""
        r = self.result
        return (len(self.chats), len(self.framework), len(self.structural), len(self.self_fed),
                len(self.scored), len(self.fw_objects), len(self.fw_runs),
                tuple(self.ambient.items()), len(self.genctx.get(path) or ()),
                len(r.calls), len(r.flows), len(r.loops), len(r.events))

    def _fixpoint(self) -> None:
        """A worklist over the call graph: a function is re-run when a callee's summary
        changes (or its own, which can change its calls' roles)."""
        funcs = {(m.path, name): m for m in self.tables.modules
                 if m.path in self.relevant for name in m.facts.function_order}
        # Again after loading importers: only what is new or may see them differently.
        queue = deque(k for k in self._callees_first(funcs)
                      if k not in self.summaries or k in self._stale)
        queued = set(queue)
        self._stale = set()
        callers = self._callers
        rep = self.replay
        runs: dict[tuple[str, str], int] = {}
        while queue:
            key = queue.popleft()
            queued.discard(key)
            runs[key] = runs.get(key, 0) + 1
            if runs[key] > 8:
                continue
            mod = funcs[key]
            epoch = self._epoch(mod.path)
            replayed = rep.replay(self, key, mod) if rep is not None and runs[key] < 8 else None
            if replayed is not None:
                new, deps = replayed.summary, set(replayed.deps)
                self._quiet[key] = epoch
            else:
                new, deps = self._interpret(key, mod, mod.facts.functions[key[1]], queue,
                                            queued, epoch, runs[key])
            for dep in deps:
                callers.setdefault(dep, set()).add(key)
            # Before its first run a function reads as the empty summary (``summary()``), to
            # its callers and to itself: a first result equal to that changes nothing.
            old = self.summaries.get(key) or _EMPTY_SUMMARY
            self.summaries[key] = new
            if old.signature() != new.signature():
                again = list(callers.get(key, ()))
                # A function reads its own summary only through recursion and through the
                # count of its LLM calls (see ``Interp.role_of``).
                if key in deps or ((old.n_llm <= 1) != (new.n_llm <= 1)
                                   and own_role(self, mod, key[1])[0] is not Role.UNKNOWN):
                    again.append(key)
                for caller in again:
                    if caller not in queued and caller in funcs:
                        queue.append(caller)
                        queued.add(caller)

    def _interpret(self, key: tuple[str, str], mod: Module, fn: FunctionIR,
                   queue: deque[tuple[str, str]], queued: set[tuple[str, str]],
                   epoch: tuple[int, bool], run: int) -> tuple[Summary, set[tuple[str, str]]]:
        """One run of ``key`` in the fixpoint: its summary and the functions whose summaries
        it read. A quiet run is recorded for the next solve when ``replay`` is on."""
        rep = self.replay
        interp = Interp(self, mod, fn, report=False)
        if rep is None:
            new = interp.run()
        else:
            before, quiet_epoch, prev = (self._state(mod.path), self.quiet_epoch(mod.path),
                                         interp.prev_n)
            trace: set[Lookup] = set()
            self.tables.trace = trace
            try:
                new = interp.run()
            finally:
                self.tables.trace = None
            if interp.touched or run == 8 or self._state(mod.path) != before:
                rep.forget(key)
            else:
                deps = tuple(sorted(interp.deps))
                rep.record(key, QuietRun(
                    quiet_epoch, prev, (), deps,
                    tuple((self.summaries.get(d) or _EMPTY_SUMMARY).signature() for d in deps),
                    new, self._callee_names(mod, fn)), trace)
        if interp.structural and key not in queued:  # its calls' roles changed: again
            queue.append(key)
            queued.add(key)
        if interp.touched or run == 8:
            self._quiet.pop(key, None)
        else:
            self._quiet[key] = epoch
        return new, interp.deps

    def _callee_names(self, mod: Module, fn: FunctionIR) -> tuple[str, ...]:
        """What ``fn``'s calls resolve to without labels, in order (see :meth:`_callees_first`)."""
        return tuple(name for c in fn.calls
                     if (name := self._static_callee(mod, fn, c.func)) is not None)

    def _callees_first(self, funcs: dict[tuple[str, str], Module]) -> list[tuple[str, str]]:
        """``funcs`` ordered so that a function comes after the project functions it calls
        (as far as names resolve without interpreting; cycles in any order), which lets most
        functions reach their final summary on their first run. A function with a replay
        record lists its calls from there: its module's code tree stays undecoded."""
        graph: dict[tuple[str, str], list[tuple[str, str]]] = {}
        rep = self.replay
        for key, mod in funcs.items():
            out: list[tuple[str, str]] = []
            names = rep.callees(key) if rep is not None else None
            if names is None:
                names = self._callee_names(mod, mod.facts.functions[key[1]])
            for name in names:
                found = self.tables.function_name(name, mod.path)
                if found is not None and (found[0].path, found[1]) in funcs:
                    out.append((found[0].path, found[1]))
            graph[key] = out
        order: list[tuple[str, str]] = []
        seen: set[tuple[str, str]] = set()
        for start in funcs:
            if start in seen:
                continue
            seen.add(start)
            stack = [(start, iter(graph[start]))]
            while stack:
                node, it = stack[-1]
                for nxt in it:
                    if nxt not in seen:
                        seen.add(nxt)
                        stack.append((nxt, iter(graph[nxt])))
                        break
                else:
                    stack.pop()
                    order.append(node)
        # Module bodies first: they build the objects (a chat model, an agent) that functions
        # read as globals, as importing the module does before any function runs; a body that
        # calls its functions runs again when their summaries arrive.
        return [k for k in order if k[1] == "<module>"] + [k for k in order
                                                           if k[1] != "<module>"]

    @staticmethod
    def _static_callee(mod: Module, fn: FunctionIR, func: str) -> str | None:
        """The qualified name a call resolves to without labels (:meth:`Interp.resolve`)."""
        if not func or func.startswith("<expr>"):
            return None
        root, _, rest = func.partition(".")
        facts = mod.facts
        if root in fn.locals or any(p.name == root for p in fn.params):
            if rest and root in ("self", "cls") and fn.cls:
                return f"{mod.name}.{fn.cls}.{rest}"
            return None
        if root in facts.imports:
            target = facts.imports[root]
            return f"{target}.{rest}" if rest else target
        if f"{fn.name}.{root}" in facts.function_names:
            return f"{mod.name}.{fn.name}.{func}"
        if root in facts.function_names:
            return f"{mod.name}.{func}"
        return None

    def _dedupe(self) -> None:
        """Loops are interpreted twice: keep one record per place."""
        r = self.result
        r.calls = list({(c.path, c.function, c.pos, c.callee, c.origin.key if c.origin
                         else None): c for c in r.calls}.values())
        r.events = list({(e.code, e.path, e.pos): e for e in r.events}.values())
        r.loops = list({(lp.path, lp.function, lp.pos): LoopEvent(
            lp.path, lp.function, lp.pos, lp.kind, lp.bounded, tuple(dict.fromkeys(lp.gen)),
            tuple(dict.fromkeys(lp.ev))) for lp in r.loops}.values())

    # ------------------------------------------------------------------ config roles

    def configured_role(self, *names: str) -> tuple[Role, str] | None:
        for name in names:
            if not name:
                continue
            short = name.rsplit(".", 1)[-1]
            for pat in self.config.evaluator_functions:
                if fnmatch.fnmatchcase(name, pat) or fnmatch.fnmatchcase(short, pat):
                    return Role.EVALUATOR, f"config evaluator-functions matches `{short}`"
            for pat in self.config.generator_functions:
                if fnmatch.fnmatchcase(name, pat) or fnmatch.fnmatchcase(short, pat):
                    return Role.GENERATOR, f"config generator-functions matches `{short}`"
        return None

    def is_extractor(self, func: str) -> bool:
        hit = self._extractor.get(func)
        if hit is None:
            short_re, full_re = _extract_patterns(self.extract)
            hit = bool(short_re.match(func.rsplit(".", 1)[-1].lower()) or full_re.match(func))
            self._extractor[func] = hit
        return hit

    # ------------------------------------------------------------------ models

    def resolve_ref(self, ref: Ref | None, mod: Module, cls: str | None,
                    depth: int = 0) -> tuple[str | None, str]:
        """A model string for a symbolic ref, and where it came from (for messages)."""
        if ref is None or depth > 12:
            return None, ""
        if ref[0] == "lit":
            return str(ref[1]), ""
        if ref[0] == "env":
            value, how = self.resolve_ref(ref[2], mod, cls, depth + 1)
            if value is None:
                return None, ""
            return value, f"default of ${ref[1]}" + (f", {how}" if how else "")
        if ref[0] != "name":
            return None, ""
        path = str(ref[1])
        consts = mod.facts.constants
        candidates = [path]
        if cls and path.startswith(("self.", "cls.")):
            candidates.insert(0, f"{cls}.{path.split('.', 1)[1]}")
        for cand in candidates:
            if cand in consts:
                val = consts[cand]
                value, how = self.resolve_ref(val.ref, mod, cand.split(".")[0] if "." in cand
                                              else cls, depth + 1)
                if value is not None:
                    return value, f"{cand} = {how}" if how else cand
                value, how = self.init_default(val.ref, mod, cand, depth)
                if value is not None:
                    return value, how
        root, _, rest = path.partition(".")
        target = mod.facts.imports.get(root)
        if target:
            qual = f"{target}.{rest}" if rest else target
            found = self.tables.constant(qual, mod.path)
            if found is not None:
                other, name = found
                value, how = self.resolve_ref(other.facts.constants[name].ref, other, None,
                                              depth + 1)
                if value is not None:
                    return value, f"{name} in {PurePosixPath(other.path).name}" + (
                        f" = {how}" if how else "")
        return None, ""


    def init_default(self, ref: Ref | None, mod: Module, attr: str,
                     depth: int) -> tuple[str | None, str]:
        """``self.model = model`` in ``__init__(self, model="llama-3")``: the attribute
        ``Class.model`` holds that parameter's default, so every method reading
        ``self.model`` runs on it unless a caller passes another."""
        cls = attr.split(".")[0]
        init = mod.facts.functions.get(f"{cls}.__init__")
        if init is None or ref is None or ref[0] != "name":
            return None, ""
        for p in init.params:
            if p.name == ref[1] and p.default is not None:
                value, how = self.resolve_ref(p.default.ref, mod, cls, depth + 1)
                if value is not None:
                    return value, (f"{attr}, default of `{p.name}` in `{cls}.__init__()`"
                                   + (f", {how}" if how else ""))
        return None, ""


class Interp:
    """Interprets one function's steps over labels."""

    def __init__(self, an: Analysis, mod: Module, fn: FunctionIR, report: bool) -> None:
        self.an = an
        self.mod = mod
        self.fn = fn
        self.report = report
        self.path = mod.path
        self.labels: dict[str, frozenset[L]] = {}
        self.refs: dict[str, Ref] = {}
        self.call_out: dict[int, frozenset[L]] = {}
        self.call_loops: dict[int, tuple[int, ...]] = {}
        self.loop_stack: list[int] = []
        self.loop_roles: dict[int, tuple[list[Pos], list[Pos]]] = {}
        self.refinement: set[int] = set()
        # files opened (by call id): the loops around the open and the names those loops bind
        self.opens: dict[int, tuple[CallIR, tuple[int, ...], frozenset[str]]] = {}
        self.handles: dict[str, int] = {}  # file objects (and writers over them) -> open id
        self.writes: set[tuple[int, tuple[int, ...]]] = set()  # (open id, loops at the write)
        self.loop_objs: dict[int, Loop] = {}
        self.stops: set[tuple[str, Pos]] = set()  # loop stops already reported
        self.parses: dict[Origin | None, list[tuple[CallIR, L]]] = {}
        self.summary = Summary(pos=fn.pos)
        prev = an.summaries.get((mod.path, fn.name))
        self.prev_n = prev.n_llm if prev else 0
        self.returns: set[L] = set()
        # per element of the tuples returned (None: some return is not a tuple display)
        self.ret_elts: list[set[L]] | None = []
        # calls of helpers that return tuples: what each element holds (see ``elements``)
        self.call_elts: dict[int, tuple[frozenset[L], ...]] = {}
        self.slots: dict[int, set[str]] = {}
        self.sinks: dict[int, set[str]] = {}
        self.called: set[str] = set()
        self.call_roles: set[Role] = set()  # roles of the effective calls made here
        self.flows: dict[tuple[Any, ...], Flow] = {}
        self.deps: set[tuple[str, str]] = set()
        self.cur = fn.pos
        # met a value other than a parameter, an LLM call, a sink or a file opened: the
        # reporting pass must run this function (see ``Analysis.run``)
        self.touched = False
        # what local names were last assigned (a prompt built in the function)
        self.local_vals: dict[str, tuple[Val, ...]] = {}
        # an LLM call here rewrites a judge prompt, writes evaluations, or judges the input:
        # the function's name does not make it the loop's generator or evaluator
        self.meta = False
        # LLM calls (origin keys) whose input holds another LLM call's output: that output
        self.fed: dict[tuple[str, str, int], Origin] = {}
        self.structural = False  # this run found an evaluator by structure
        self.own_configured = an.configured_role(
            fn.name, f"{mod.name}.{fn.name}") is not None
        self.own_role, self.own_evidence = own_role(an, mod, fn.name)

    # ------------------------------------------------------------------ driver

    def run(self) -> Summary:
        for i, p in enumerate(self.fn.params):
            self.labels[p.name] = frozenset({L("param", None, i)})
            self.refs[p.name] = ("param", i)
        self.block(self.fn.body)
        s = self.summary
        s.role, s.role_evidence = self.own_role, self.own_evidence
        if self.meta and not self.own_configured:  # its name says generator, its prompt not
            s.role, s.role_evidence = Role.UNKNOWN, ()
        s.meta = self.meta
        s.returns = frozenset(self.returns)
        if self.ret_elts:
            s.return_elts = tuple(frozenset(e) for e in self.ret_elts)
        s.slots = {k: frozenset(v) for k, v in self.slots.items()}
        s.sinks = {k: frozenset(v) for k, v in self.sinks.items()}
        s.called_roles = frozenset(self.called)
        s.own_call_roles = frozenset(self.call_roles)
        s.llm = s.n_llm > 0
        if self.report:
            self.finish_report()
        return s

    def block(self, steps: list[Step]) -> None:
        for step in steps:
            self.step(step)

    def snapshot(self) -> tuple[dict[str, frozenset[L]], dict[str, Ref]]:
        return dict(self.labels), dict(self.refs)

    def join(self, other: dict[str, frozenset[L]], other_refs: dict[str, Ref]) -> None:
        for k, v in other.items():
            self.labels[k] = self.labels.get(k, frozenset()) | v
        for k, r in other_refs.items():
            if self.refs.get(k, r) != r:
                self.refs.pop(k, None)
            elif k not in self.refs:
                self.refs[k] = r

    def step(self, step: Step) -> None:
        self.cur = step.pos
        if isinstance(step, Assign):
            value = self.eval(step.value)
            if self.opens or self.handles:
                self.note_handles(step)
            ref = self.local_ref(step.value.ref)
            per = self.elements(step.value, len(step.targets)) if step.unpack else None
            if self.fed and any(set(name_tokens(t.rsplit(".", 1)[-1])) & VERDICT_TOKENS
                                for t in step.targets):
                self.note_verdict(value, f"is stored as `{step.targets[0]}`", step.pos)
            for t in step.targets:
                old = self.local_vals.get(t, ()) if step.aug or step.weak else ()
                self.local_vals[t] = (*old, step.value)[-8:]
                if step.aug or step.weak:
                    self.labels[t] = self.labels.get(t, frozenset()) | value
                    self.refs.pop(t, None)
                else:
                    self.labels[t] = per[step.targets.index(t)] if per is not None else value
                    self._drop_children(t)
                    if ref is not None and len(step.targets) == 1:
                        self.refs[t] = ref
                    else:
                        self.refs.pop(t, None)
        elif isinstance(step, ExprStep):
            self.eval(step.value)
        elif isinstance(step, Return):
            value = self.eval(step.value)
            self.returns |= value
            self.note_return_elts(step.value)
            self.check_last_not_best(step, value)
        elif isinstance(step, If):
            test = self.eval(step.test)
            self.check_pass_test(step.test, test, step.pos)
            if self.loop_stack and any(isinstance(x, Return) or (isinstance(x, Exit) and
                                                                 x.kind == "break")
                                       for x in step.body):
                self.check_text_stop(step.test, step.pos)
            if self.fed and self.loop_stack and (step.test.compares or step.test.strings) and any(
                    isinstance(x, Return) or (isinstance(x, Exit) and x.kind == "break")
                    for x in step.body):
                self.note_verdict(test, "decides when the loop stops", step.pos)
            before = self.snapshot()
            self.block(step.body)
            after_body = self.snapshot()
            self.labels, self.refs = dict(before[0]), dict(before[1])
            self.block(step.orelse)
            self.join(*after_body)
        elif isinstance(step, Loop):
            self.loop(step)
        elif isinstance(step, Exit):
            pass

    def elements(self, val: Val, n: int) -> list[frozenset[L]] | None:
        """What each of ``n`` unpacked elements holds, once ``val`` was evaluated: a tuple
        display element by element, or a helper call whose returns are tuples of ``n``.
        None when not known: then every target takes the whole value."""
        if len(val.elts) == n:
            return [self.peek(e) for e in val.elts]
        if len(val.calls) == 1 and not val.names:
            found = self.call_elts.get(val.calls[0])
            if found is not None and len(found) == n:
                return list(found)
        return None

    def note_return_elts(self, val: Val) -> None:
        """Keep the returned tuple's elements apart while every return is a tuple of one
        size; ``return`` / ``return None`` add nothing and do not spoil it."""
        if self.ret_elts is None or val == Val():
            return
        found = self.call_elts.get(val.calls[0]) if len(val.calls) == 1 else None
        size = len(val.elts) or (len(found) if found is not None else 0)
        per = self.elements(val, size) if size else None
        if per is None or (self.ret_elts and len(per) != len(self.ret_elts)):
            self.ret_elts = None
            return
        if not self.ret_elts:
            self.ret_elts = [set() for _ in per]
        for acc, labels in zip(self.ret_elts, per, strict=True):
            acc |= labels

    def note_open(self, c: CallIR) -> None:
        self.touched = True
        bound: set[str] = set()
        for lid in self.loop_stack:
            bound |= _bound_names(self.loop_objs[lid])
        self.opens[c.id] = (c, tuple(self.loop_stack), frozenset(bound))

    def note_handles(self, step: Assign) -> None:
        """``with open(p, "w") as fh``, ``writer = csv.writer(fh)``: names that write to a file."""
        for cid in step.value.calls:
            idx: int | None = cid if cid in self.opens else None
            if idx is None and cid < len(self.fn.calls):
                idx = self.handle_of(self.fn.calls[cid])
            if idx is not None:
                for t in step.targets:
                    self.handles[t] = idx

    def handle_of(self, c: CallIR) -> int | None:
        """The open file a call writes to or wraps: ``fh.write(...)``, ``json.dump(x, fh)``."""
        root = c.func.split(".")[0] if "." in c.func else ""
        if root in self.handles:
            return self.handles[root]
        for v in (*c.args, *(v for _, v in c.kwargs)):
            for n in v.names:
                if n in self.handles:
                    return self.handles[n]
        return None

    def _drop_children(self, target: str) -> None:
        prefix = target + "."
        for k in [k for k in self.labels if k.startswith(prefix)]:
            del self.labels[k]

    def loop(self, loop: Loop) -> None:
        self.loop_objs[loop.id] = loop
        self.loop_stack.append(loop.id)
        self.loop_roles.setdefault(loop.id, ([], []))
        entry = self.snapshot()
        for _ in range(2):
            if loop.kind == "for":
                it = self.eval(loop.iter)
                for t in loop.targets:
                    self.labels[t] = it
                    self.refs.pop(t, None)
            elif loop.test is not None:
                test = self.eval(loop.test)
                self.check_pass_test(loop.test, test, loop.pos)
                self.check_text_stop(loop.test, loop.pos)
                if self.fed and (loop.test.compares or loop.test.strings):
                    self.note_verdict(test, "decides whether the loop goes on", loop.pos)
            self.block(loop.body)
            self.join(*entry)
            entry = self.snapshot()
        self.loop_stack.pop()
        self.block(loop.orelse)
        gen, ev = self.loop_roles[loop.id]
        bounded = self.bounded(loop)
        if gen and ev:
            self.refinement.add(loop.id)
        if self.report:
            self.an.result.loops.append(LoopEvent(self.path, self.fn.name, loop.pos, loop.kind,
                                                  bounded, tuple(gen), tuple(ev)))

    # ------------------------------------------------------------------ loop bounds

    def judgey(self, labels: frozenset[L]) -> bool:
        return any(lb.kind in ("judge", "pass", "llm", "gen", "ans") for lb in labels)

    def bounded(self, loop: Loop) -> bool:
        if loop.kind == "for":
            for cid in loop.iter.calls:
                func = self.fn.calls[cid].func.rsplit(".", 1)[-1]
                if func in ("count", "cycle") or (func == "repeat"
                                                  and len(self.fn.calls[cid].args) < 2):
                    return False
            return True
        assert loop.test is not None
        if any(not self.judgey(self.peek(c)) for c in loop.test.compares):
            return True
        return self._exit_on_counter(loop.body) or self._exit_on_queue(loop.body)

    def _exit_on_queue(self, steps: list[Step]) -> bool:
        """A worker loop: it takes its next job from a queue (``job = q.get()``) and stops on
        what the queue hands it (``if job is None: break``), not on a judge's opinion."""
        taken: set[str] = set()
        for st in walk_steps(steps):
            if isinstance(st, Assign) and len(st.value.calls) == 1 and not st.value.names:
                cid = st.value.calls[0]
                if cid < len(self.fn.calls) and self.fn.calls[cid].func.rsplit(".", 1)[-1] in \
                        _QUEUE_TAKE and "." in self.fn.calls[cid].func:
                    taken.update(st.targets)
            elif isinstance(st, If) and taken & set(st.test.names) and any(
                    (isinstance(x, Exit) and x.kind == "break") or isinstance(x, Return)
                    for x in st.body):
                return True
        return False

    def _exit_on_counter(self, steps: list[Step]) -> bool:
        for st in steps:
            if isinstance(st, If):
                exits = any(isinstance(s, (Exit, Return)) and getattr(s, "kind", "") != "continue"
                            for s in st.body)
                if exits and any(not self.judgey(self.peek(c)) for c in st.test.compares):
                    return True
                if self._exit_on_counter(st.body) or self._exit_on_counter(st.orelse):
                    return True
        return False

    # ------------------------------------------------------------------ values

    def local_ref(self, ref: Ref | None) -> Ref | None:
        if ref is not None and ref[0] == "name" and ref[1] in self.refs:
            return self.refs[ref[1]]
        return ref

    def peek(self, val: Val) -> frozenset[L]:
        """Labels of a value without re-running its calls (their last results are reused)."""
        out: set[L] = set()
        for n in val.names:
            out |= self.read(n)
        for c in val.calls:
            out |= self.call_out.get(c, frozenset())
        return frozenset(out)

    def eval(self, val: Val) -> frozenset[L]:
        out: set[L] = set()
        for n in val.names:
            out |= self.read(n)
        for c in val.calls:
            out |= self.call(c)
        if val.scored:
            out.add(SCORE_ASKED)
        for s in val.strings:
            if _judge_text(s):
                o = Origin(self.path, self.cur, "an evaluator prompt text",
                           (self.path, self.fn.name, -1))
                out.add(L("rubric", o, name="evaluator prompt text"))
                break
        if out and not self.touched:
            self.touched = any(lb.kind not in _PLAIN for lb in out)
        if val.boolean:  # a comparison's result is a bool: nothing of it is parsed later
            return frozenset(L(lb.kind, lb.origin, lb.idx, True, lb.name)
                             if lb.kind == "judge" and not lb.flag else lb for lb in out)
        return frozenset(out)

    def read(self, path: str) -> frozenset[L]:
        parts = path.split(".")
        labels = self.labels.get(path)  # the whole path first: most reads are plain names
        rest: list[str] = []
        if labels is None:
            for cut in range(len(parts) - 1, 0, -1):
                key = ".".join(parts[:cut])
                if key in self.labels:
                    labels = self.labels[key]
                    rest = parts[cut:]
                    break
        out: set[L] = set()
        if labels is None and self.fn.name == "<module>" and parts[0] in self.fn.locals:
            pass  # module code reads a name before its binding (a later cell): nothing yet
        elif labels is None:
            out |= self.global_labels(path)
            ctx = self.genctx_globals.get(parts[0])
            if ctx is not None:
                out.add(ctx)
            if self.an.chats:
                out |= self.an.static_chat(self.mod, parts[0])
        else:
            out |= self.access(labels, rest)
            if self.an.chats and len(parts) > 1 and parts[0] in ("self", "cls") and self.fn.cls:
                out |= self.an.static_chat(self.mod, f"{self.fn.cls}.{parts[1]}")
        if self.is_rubric_name(path):
            o = Origin(self.path, self.cur, f"`{path}`", (self.path, self.fn.name, -1))
            out.add(L("rubric", o, name=path))
        return frozenset(out)

    def note_verdict(self, labels: frozenset[L], how: str, pos: Pos) -> None:
        """An LLM call of no named role whose input holds another LLM call's output and whose
        result ``how`` (becomes a score, a verdict, a loop's decision) evaluates that output."""
        for lb in labels:
            o = lb.origin
            if lb.kind not in ("llm", "gen") or o is None or o.key not in self.fed or \
                    o.key in self.an.structural or o.key in self.an.self_fed:
                continue
            src = self.fed[o.key]
            self.an.structural[o.key] = (
                f"its input holds the output of the LLM call at {where(src.path, src.pos)} and "
                f"its result {how} ({where(self.path, pos)})")
            self.structural = True
            self.touched = True

    def access(self, labels: frozenset[L], rest: list[str]) -> set[L]:
        if not rest:
            return set(labels)
        low = [r.lower() for r in rest]
        if self.fed and {t for r in low for t in name_tokens(r)} & VERDICT_TOKENS:
            self.note_verdict(labels, f"is read as `{'.'.join(rest)}`", self.cur)
        if (self.an.fw_runs or self.an.fw_objects) and len(low) == 1 and \
                low[0] in frameworks.HISTORY_ATTRS:  # the transcript, not one message of it
            found = frameworks.history(self, labels, rest[0], self.cur)
            if found is not None:
                return set(found)
        out: set[L] = set()
        meta = bool(METADATA_ATTRS & set(low)) and not (THINK_ATTRS & set(low))
        think = bool(THINK_ATTRS & set(low))
        for lb in labels:
            field = frameworks.field_access(self, lb, rest[0]) if self.an.fw_runs else None
            if field is not None:
                out.add(field)
                continue
            if lb.kind in ("llm", "gen", "judge") and meta:
                continue
            if lb.kind in ("llm", "gen") and think and not lb.flag:
                out.add(L(lb.kind, lb.origin, lb.idx, True, lb.name))
                continue
            out.add(lb)
            if lb.kind == "judge" and lb.origin is not None and {
                    t for r in low for t in name_tokens(r)} & SCORE_KEYS:
                self.an.scored.update(_chain_keys(lb.origin))
            if lb.kind == "judge" and set(low) & PASS_KEYS:
                out.add(L("pass", lb.origin, name=".".join(rest)))
        return out

    def global_labels(self, path: str) -> set[L]:
        root = path.split(".")[0]
        consts = self.mod.facts.constants
        val = consts.get(root)
        if val is None:
            imp = self.mod.facts.imports.get(root)
            if imp:
                found = self.an.tables.constant(imp, self.path)
                if found is not None:
                    val = found[0].facts.constants[found[1]]
        out: set[L] = {SCORE_ASKED} if val is not None and val.scored else set()
        if val is not None and val.text is not None and _judge_text(val.text):
            o = Origin(self.path, self.cur, f"`{root}` (an evaluator prompt)",
                       (self.path, self.fn.name, -1))
            out.add(L("rubric", o, name=root))
        return out

    @staticmethod
    @lru_cache(maxsize=65536)
    def is_rubric_name(path: str) -> bool:
        last = path.split(".")[-1] if "." in path else path
        if makes_eval_artifacts(last):
            return False  # the prompt of a tool that writes evaluations
        tokens = set(name_tokens(last))
        if "rubric" in tokens or ("criteria" in tokens and tokens & EVALUATOR_WORDS):
            return True
        return bool(tokens & EVALUATOR_WORDS) and bool(tokens & PROMPTISH) and not (
            tokens & {"model", "result", "results", "output", "response", "score", "scores"})

    # ------------------------------------------------------------------ calls

    def call(self, cid: int) -> frozenset[L]:
        c = self.fn.calls[cid]
        saved = self.cur
        args = [self.eval(a) for a in c.args]
        kws = {k: self.eval(v) for k, v in c.kwargs}
        recv = self.eval(c.recv) if c.recv is not None else frozenset()
        self.cur = saved
        self.call_loops[cid] = tuple(self.loop_stack)
        if self.handles:
            h = self.handle_of(c)
            if h is not None:
                self.writes.add((h, tuple(self.loop_stack)))
        out = self.dispatch(c, args, kws, recv)
        self.call_out[cid] = out
        if out and not self.touched:
            self.touched = any(lb.kind not in _PLAIN for lb in out)
        return out

    def resolve(self, func: str) -> tuple[str, str]:
        """(kind, name): ``sdk``/``fn``/``method`` (on a local value)/``ext``/``builtin``."""
        if not func or func.startswith("<expr>"):
            return "method", func
        root, _, rest = func.partition(".")
        if root in self.labels or root in self.fn.locals:
            if rest and root in ("self", "cls") and self.fn.cls:
                return "fn", f"{self.mod.name}.{self.fn.cls}.{rest}"
            return "method", func
        if root in self.mod.facts.imports:
            target = self.mod.facts.imports[root]
            return "ext", f"{target}.{rest}" if rest else target
        if root in self.mod.facts.functions or f"{self.fn.name}.{root}" in \
                self.mod.facts.functions:
            name = f"{self.fn.name}.{func}" if f"{self.fn.name}.{root}" in \
                self.mod.facts.functions else func
            if self.fn.name == "<module>" and not rest and f"{name}#1" in self.mod.facts.functions:
                name = self.definition_at(name)
            return "fn", f"{self.mod.name}.{name}"
        if root in self.mod.facts.constants:
            return "method", func
        return "builtin", func

    def definition_at(self, name: str) -> str:
        """A function defined more than once (a notebook redefines ``grade()`` in a later
        cell): module-level code calls the definition made last before the call."""
        funcs = self.mod.facts.functions
        versions = [name] + [f"{name}#{i}" for i in range(1, 64) if f"{name}#{i}" in funcs]
        here = (self.cur.cell or 0, self.cur.line)
        before = [v for v in versions if (funcs[v].pos.cell or 0, funcs[v].pos.line) <= here]
        if not before:
            return name
        return max(before, key=lambda v: (funcs[v].pos.cell or 0, funcs[v].pos.line))

    def imports_sdk(self) -> bool:
        return any(v.split(".")[0] in LLM_SDKS for v in self.mod.facts.imports.values())

    def sdk_kind(self, c: CallIR, kind: str, name: str) -> str | None:
        if kind == "ext" and (name in LITELLM_FUNCS or name in ("litellm.completion",)):
            return "litellm"
        if kind == "ext" and name.split(".")[0] == "litellm" and name.endswith("completion"):
            return "litellm"
        dotted = "." + c.func
        if dotted.endswith(".models.generate_content") and c.kw("model") is not None and any(
                v.startswith("google.genai") for v in self.mod.facts.imports.values()):
            return "gemini"
        anth, oai = _method_family(c.func)
        if not (anth or oai):
            if mistral_call(c.func, c.kw("model") is not None, self.mod.facts.imports):
                return "mistral"
            return None
        if self.imports_sdk() or c.kw("model") is not None:
            if c.func.endswith("completions.create") and not c.func.endswith(
                    "chat.completions.create") and "messages" not in c.func:
                return "openai" if c.kw("prompt") is not None else None
            return "openai" if oai else "anthropic"
        return None

    def dispatch(self, c: CallIR, args: list[frozenset[L]], kws: dict[str, frozenset[L]],
                 recv: frozenset[L]) -> frozenset[L]:
        bound = self.partial_of(c.func) if c.func and "." not in c.func else None
        if bound is not None:  # ask = partial(call_llm, model="..."); ask(prompt)
            c = CallIR(c.id, bound.args[0].names[0], (*bound.args[1:], *c.args),
                       (*bound.kwargs, *c.kwargs), c.pos, c.recv, c.star or bound.star,
                       c.in_try)
            args = [self.eval(a) for a in bound.args[1:]] + args
            kws = {**{k: self.eval(v) for k, v in bound.kwargs}, **kws}
        kind, name = self.resolve(c.func)
        sdk = self.sdk_kind(c, kind, name)
        if sdk is not None:
            return self.sdk_call(c, sdk, args, kws)
        if kind == "ext" and chat_ctor(name):
            return self.chat_object(c, self.mod, self.fn, self.model_of_val)
        if kind == "ext" and self.an.framework_name(name, self.path):
            fw = frameworks.object_kind(name)
            if fw is not None:
                return frameworks.make_object(self, c, fw[0], fw[1], self.path, self.fn.name)
            conf = frameworks.is_configure(name)
            if conf is not None:
                frameworks.configure(self, conf, c)
                return frozenset()
            if name in frameworks.RUN_FUNCS and args:
                chats = frameworks.framework_chats(self, args[0])
                if chats:
                    prompts, inputs = frameworks.run_inputs(c, args, kws, skip_first=True)
                    return frameworks.run_object(self, c, chats, c.args[0], prompts, inputs)
        if kind == "ext" and framework_evaluator(name):
            return self.framework_object(c, str(framework_evaluator(name)))
        if self.an.is_extractor(c.func):
            return sanitize(frozenset().union(recv, *args, *kws.values()))
        if kind in ("fn", "ext"):
            found = self.an.tables.function(name, self.path)
            if found is not None:
                return self.user_call(c, found[0], found[1], args, kws)
        if self.an.fw_objects and kind in ("method", "fn") and self.callable_object(c.func):
            chats = [lb for lb in frameworks.framework_chats(self, self.read(c.func))
                     if lb.origin is not None
                     and self.an.fw_objects[lb.origin.key].framework == "dspy"]
            if chats:
                prompts, inputs = frameworks.run_inputs(c, args, kws, skip_first=False)
                return frameworks.run_object(self, c, chats, Val(names=(c.func,)), prompts,
                                             inputs)
        short = c.func.rsplit(".", 1)[-1]
        everything = frozenset().union(recv, *args, *kws.values())
        if self.an.is_extractor(c.func):
            return sanitize(everything)
        if kind == "method":
            return self.method_call(c, short, args, kws, recv)
        if self.an.chats and short in _CHAT_METHODS and "." in c.func and any(
                lb.kind == "chat" for lb in self.read(c.func.rsplit(".", 1)[0])):
            return self.method_call(c, short, args, kws, recv)  # self.llm, an imported llm
        full = name if kind == "ext" else c.func
        if full in ("re.sub", "re.subn", "regex.sub") and c.args and c.args[0].text and \
                _THINK_PATTERN.search(c.args[0].text):
            return sanitize(everything)
        if full in RE_MATCH_FUNCS and c.args:
            if c.args[0].text and _ANSWER_PATTERN.search(c.args[0].text):
                everything = sanitize(everything)
            return self.regex_checked(self.regex_text(c.args[0]), everything)
        if (kind == "builtin" and short == "open") or full in ("io.open", "codecs.open"):
            self.note_open(c)
        if full in PARSE_CALLS or (kind == "builtin" and short in ("int", "float")):
            self.note_parse(c, args[0] if args else frozenset())
        if short in QUIET_CALLS and kind in ("builtin", "ext"):
            return frozenset()
        return everything | self.loader_labels(c)

    def loader_labels(self, c: CallIR) -> frozenset[L]:
        """``Path("prompts/judge.md").read_text()``, ``load_prompt("grader")``: a judge prompt."""
        tokens = set(name_tokens(c.func))
        if not tokens & LOADER_TOKENS:
            return frozenset()
        for a in c.args:
            if a.text and _PATHLIKE.match(a.text):
                base = PurePosixPath(a.text).name
                if role_from_name(base) is Role.EVALUATOR and (
                        "/" in a.text or "." in a.text or tokens & {"prompt", "template"}):
                    o = Origin(self.path, c.pos, f"the evaluator prompt `{a.text}`",
                               (self.path, self.fn.name, c.id))
                    return frozenset({L("rubric", o, name=a.text)})
        return frozenset()

    def method_call(self, c: CallIR, short: str, args: list[frozenset[L]],
                    kws: dict[str, frozenset[L]], recv: frozenset[L]) -> frozenset[L]:
        base = c.func.rsplit(".", 1)[0]
        if not base.startswith("<expr>") and base:
            recv = recv | self.read(base)
        allargs = frozenset().union(*args, *kws.values())
        chats = [lb for lb in recv if lb.kind == "chat"]
        if self.an.fw_objects or self.an.fw_runs:
            out = self.framework_method(c, short, base, args, kws, recv)
            if out is not None:
                return out
        if chats and short in CHAT_INVOKE:
            return self.chat_call(c, chats, args, kws)
        if chats and short in CHAT_BIND:
            return self.chat_bound(c, chats, self.mod, self.fn)
        if chats and short in FRAMEWORK_EVAL_METHODS and any(
                lb.origin is not None and lb.origin.key in self.an.framework for lb in chats):
            return self.chat_call(c, chats, args, kws, judge=True)
        if short in ("append", "extend", "insert", "add", "update", "appendleft", "put"):
            if base and not base.startswith("<expr>"):
                self.labels[base] = self.labels.get(base, frozenset()) | allargs
            return frozenset()
        if short in ("split", "rsplit", "partition", "rpartition") and c.args and \
                c.args[0].text and _ANSWER_PATTERN.search(c.args[0].text):
            return sanitize(recv)
        if short in ("sub",) and c.recv is None and c.args:  # compiled_pattern.sub(...)
            return allargs | recv
        if short in ("format", "render", "format_map", "substitute", "safe_substitute"):
            if any(lb.kind == "rubric" for lb in recv):
                self.template_sink(c, args, kws)
            return recv | allargs
        if short == "open" and ((c.args and c.args[0].text) or c.kw("mode")):
            self.note_open(c)
        if short in ("write_text",):
            self.note_open(c)
        if short in ("loads", "literal_eval"):
            self.note_parse(c, args[0] if args else frozenset())
        if short in RE_MATCH_METHODS and c.recv is None and base and c.args:
            text = self.regex_text(Val(names=(base,)))
            if text is not None or _PATTERN_NAME.search(base.rsplit(".", 1)[-1]):
                return self.regex_checked(text, allargs)
        loaded = self.loader_labels(c)
        if short in ("group", "groups") and c.recv is not None:
            return recv
        if short in QUIET_CALLS:
            return frozenset()
        return recv | allargs | loaded

    def partial_of(self, name: str) -> CallIR | None:
        """The ``functools.partial(f, ...)`` call a name was last bound to, here or at module
        level, when it binds a function named by a plain path."""
        found: tuple[CallIR, Module, FunctionIR] | None = None
        vals = self.local_vals.get(name)
        if vals:
            v = vals[-1]
            if len(v.calls) == 1 and not v.names and v.calls[0] < len(self.fn.calls):
                found = (self.fn.calls[v.calls[0]], self.mod, self.fn)
        elif name not in self.fn.locals:
            facts = self.mod.facts
            const = facts.constants.get(name)
            owner = facts.functions.get(facts.owners.get(name, ""))
            if const is not None and owner is not None and len(const.calls) == 1 and \
                    const.calls[0] < len(owner.calls):
                found = (owner.calls[const.calls[0]], self.mod, owner)
        if found is None:
            return None
        call, mod = found[0], found[1]
        root = call.func.split(".")[0]
        qual = f"{mod.facts.imports.get(root, root)}{call.func[len(root):]}"
        if qual != "functools.partial" or not call.args or len(call.args[0].names) != 1 or \
                call.args[0].calls or call.args[0].names[0] == name:
            return None
        return call

    def callable_object(self, func: str) -> bool:
        """``qa(...)``, ``self.generate(...)``: a call of an object itself (a dspy module),
        not of one of its methods (``qa.set_lm(...)``)."""
        if not func or func.startswith("<expr>"):
            return False
        parts = func.split(".")
        return len(parts) == 1 or (len(parts) == 2 and parts[0] in ("self", "cls")) or \
            func in self.labels

    def framework_method(self, c: CallIR, short: str, base: str, args: list[frozenset[L]],
                         kws: dict[str, frozenset[L]], recv: frozenset[L]
                         ) -> frozenset[L] | None:
        """``team.run(task=...)``, ``model.generate_content(...)``: a framework object's
        run; ``result.to_input_list()``: its transcript. None for any other method."""
        fw = frameworks.framework_chats(self, recv)
        runnable = [lb for lb in fw if lb.origin is not None and short in frameworks.RUN_METHODS
                    .get(self.an.fw_objects[lb.origin.key].framework, frozenset())]
        if runnable:
            prompts, inputs = frameworks.run_inputs(c, args, kws, skip_first=False)
            obj = Val(names=(base,)) if base and not base.startswith("<expr>") else None
            return frameworks.run_object(self, c, runnable, obj, prompts, inputs)
        if short in frameworks.HISTORY_METHODS:
            return frameworks.history(self, recv, f"{base}.{short}()", c.pos)
        if short == "set_lm" and fw and c.args:  # module.set_lm(lm): its own LM from now on
            frameworks.set_lm(self, fw, c.args[0])
            return frozenset()
        return None

    # ------------------------------------------------------------------ LLM calls

    def sdk_call(self, c: CallIR, sdk: str, args: list[frozenset[L]],
                 kws: dict[str, frozenset[L]]) -> frozenset[L]:
        model_val = c.kw("model") or (c.args[0] if sdk == "litellm" and c.args else None)
        if model_val is None and c.star:
            self.forwarded_model(c)
        system_val = c.kw("system") or c.kw("instructions")
        prompt_vals = [v for k, v in c.kwargs if k in ("messages", "input", "prompt",
                                                       "requests", "contents")]
        if sdk == "litellm" and len(c.args) > 1:
            prompt_vals.append(c.args[1])
        role, evidence = self.role_of(c, None, model_val, system_val, prompt_vals)
        inputs = {k: v for k, v in kws.items() if k not in NON_CONTENT}
        for i, a in enumerate(args):
            if not (sdk == "litellm" and i == 0):
                inputs[f"#{i}"] = a
        slot_of = {"system": "system", "instructions": "system", "model": "model",
                   "tools": "tools"}
        for k, labels in kws.items():
            self.note_slots(labels, slot_of.get(k, "prompt" if k not in NON_CONTENT else ""),
                            role)
        for k, labels in inputs.items():
            if k.startswith("#"):
                self.note_slots(labels, "prompt", role)
        model, model_where = self.model_of_val(model_val)
        reasoning = self.reasoning_evidence(c, model, system_val, prompt_vals)
        structured = bool(STRUCTURED & {k for k, _ in c.kwargs}) or c.func.endswith(".parse")
        shown = (model, model_where) if model is not None else self.symbolic_model(model_val)
        schema_scored = role is Role.EVALUATOR and self.schema_scored(
            [v for k, v in c.kwargs if k in STRUCTURED])
        if role is not Role.EVALUATOR:
            self.mark_genctx(c, system_val, c.kw("messages"), role)
            self.mark_system_slot(c, prompt_vals)
        self.summary.n_llm += 1
        self.summary.structured = self.summary.structured or structured
        if reasoning:
            self.summary.reasoning = tuple(dict.fromkeys(self.summary.reasoning + reasoning))
        if model_val is not None:
            ref = self.local_ref(model_val.ref)
            if ref is not None and ref[0] == "param":
                self.model_param(int(ref[1]))
            elif model is not None:
                self.summary.model.fixed = model
                self.summary.model.fixed_where = model_where
        tv = c.kw("tools")
        tools = (tuple(tv.tool_names) + self.const_tools(tv)) if tv is not None else ()
        origin = Origin(self.path, c.pos, f"`{c.func}()`", (self.path, self.fn.name, c.id),
                        reasoning)
        if schema_scored:
            self.an.scored.add(origin.key)
        self.effective(c, c.func, role, evidence, inputs, shown[0], shown[1], tools, origin,
                       own_role=False)
        if c.func.endswith("batches.create"):
            return frozenset()
        if role is Role.EVALUATOR:
            return frozenset({L("judge", origin, flag=structured)})
        return frozenset({L("gen" if role is Role.GENERATOR else "llm", origin)})

    def schema_scored(self, vals: list[Val]) -> bool:
        return schema_has_score(self.mod.facts.constants, vals)

    def chat_object(self, c: CallIR, mod: Module, fn: FunctionIR,
                    model_of: Callable[[Val | None], tuple[str | None, str]]) -> frozenset[L]:
        """A chat model constructor: ``ChatOpenAI(model=...)``, ``init_chat_model("...")``."""
        key = (mod.path, fn.name, c.id)
        if key not in self.an.chats:
            val = c.kw("model") or c.kw("model_name") or (c.args[0] if c.args else None)
            found = self.an.resolve_ref(val.ref, mod, fn.cls) if val is not None else (None, "")
            self.an.chats[key] = found if found[0] is not None else model_of(val)
        what = f"the `{c.func.rsplit('.', 1)[-1]}` object"
        return frozenset({L("chat", Origin(mod.path, c.pos, what, key))})

    def framework_object(self, c: CallIR, framework: str) -> frozenset[L]:
        """An evaluation framework's evaluator (uptrain ``EvalLLM(Settings(model=...))``): a
        chat object whose ``evaluate()`` is an evaluator call on the settings' model."""
        self.touched = True
        key = (self.path, self.fn.name, c.id)
        if key not in self.an.chats:
            model: tuple[str | None, str] = (None, "")
            for v in (c.kw("settings"), *c.args[:1]):
                for sc in self.calls_in(v):
                    if sc.func.rsplit(".", 1)[-1] in FRAMEWORK_SETTINGS and sc.kw("model"):
                        model = self.model_of_val(sc.kw("model"))
            self.an.chats[key] = model
            self.an.framework[key] = framework
        what = f"the {framework} `{c.func.rsplit('.', 1)[-1]}` evaluator"
        return frozenset({L("chat", Origin(self.path, c.pos, what, key))})

    def calls_in(self, v: Val | None) -> list[CallIR]:
        """The calls a value is made of, directly or through the local names it reads."""
        if v is None:
            return []
        vals = [v, *(x for n in v.names for x in self.local_vals.get(n.split(".")[0], ()))]
        return [self.fn.calls[cid] for x in vals for cid in x.calls if cid < len(self.fn.calls)]

    def chat_bound(self, c: CallIR, chats: list[L], mod: Module, fn: FunctionIR
                   ) -> frozenset[L]:
        """``llm.with_structured_output(Verdict)``, ``llm.bind_tools(...)``: the same model."""
        structured = c.func.endswith("with_structured_output")
        key = (mod.path, fn.name, c.id)
        out: set[L] = set()
        for lb in chats:
            assert lb.origin is not None
            self.an.chats.setdefault(key, self.an.chats.get(lb.origin.key, (None, "")))
            if structured and self.an.chat_schema_scored(mod, c.args[:1]):
                self.an.scored.add(key)
            o = Origin(mod.path, c.pos, lb.origin.what, key, (), lb.origin)
            out.add(L("chat", o, flag=lb.flag or structured))
        return frozenset(out)

    def chat_call(self, c: CallIR, chats: list[L], args: list[frozenset[L]],
                  kws: dict[str, frozenset[L]], judge: bool = False) -> frozenset[L]:
        """``llm.invoke(messages)`` (also through a bound or structured-output model);
        ``judge``: a framework evaluator's ``evaluate()``."""
        chat, ctor = chat_of(chats)
        assert chat.origin is not None
        model, model_where = self.an.chats.get(chat.origin.key, (None, ""))
        base = c.func.rsplit(".", 1)[0]
        obj = Val(names=(base,)) if base and not base.startswith("<expr>") else None
        prompt_vals = [*c.args, *(v for k, v in c.kwargs if k == "input")]
        role: Role
        evidence: tuple[str, ...]
        if judge:
            role, evidence = Role.EVALUATOR, (f"{chat.origin.what}: `{c.func}()`",)
        else:
            role, evidence = self.role_of(c, None, obj, None, prompt_vals)
        inputs = {f"#{i}": a for i, a in enumerate(args)}
        inputs.update({k: v for k, v in kws.items() if k not in NON_CONTENT and k != "config"})
        for labels in inputs.values():
            self.note_slots(labels, "prompt", role)
        if role is not Role.EVALUATOR:
            self.mark_system_slot(c, prompt_vals)
        structured = any(lb.flag for lb in chats)
        reasoning = self.reasoning_evidence(c, model, None, prompt_vals)
        self.summary.count_call(structured, reasoning, model, model_where)
        origin = Origin(self.path, c.pos, f"`{c.func}()`", (self.path, self.fn.name, c.id),
                        reasoning, chat.origin if chat.origin is not ctor else None)
        if role is Role.EVALUATOR and any(k in self.an.scored for k in _chain_keys(chat.origin)):
            self.an.scored.add(origin.key)
        self.effective(c, c.func, role, evidence, inputs, model, model_where, (), origin,
                       own_role=False, obj=ctor)
        if role is Role.EVALUATOR:
            return frozenset({L("judge", origin, flag=structured)})
        return frozenset({L("gen" if role is Role.GENERATOR else "llm", origin)})

    def symbolic_model(self, val: Val | None) -> tuple[str | None, str]:
        """A model that resolves to no name but is one variable: two calls whose model is
        the same parameter, local or attribute run on the same model, whatever it is
        (``generate(task, model=model)`` and ``judge(draft, model=model)``)."""
        if val is None or val.calls or len(val.names) != 1:
            return None, ""
        ref = self.local_ref(val.ref)
        if ref is None or ref[0] not in ("param", "name"):
            return None, ""
        if ref[0] == "param":
            name, scope = self.fn.params[int(ref[1])].name, f"{self.fn.name}()"
        else:
            name = str(ref[1])
            root = name.split(".")[0]
            if root in ("self", "cls") and self.fn.cls and "." in name:
                name, scope = f"{self.fn.cls}.{name.split('.', 1)[1]}", self.mod.name
            elif root in self.fn.locals or root in {p.name for p in self.fn.params}:
                scope = f"{self.fn.name}()"
            else:
                scope = self.mod.name
        return (f"{SYMBOLIC}{name} in {scope}",
                "not resolved to a model name; one variable picks the model of both calls")

    def forwarded_model(self, c: CallIR) -> None:
        """``create(**kwargs)`` with this function's own ``**kwargs``: the caller's
        ``model=`` keyword picks the model (see ``user_call``)."""
        stars = {p.name: i for i, p in enumerate(self.fn.params) if p.star}
        for v in c.args:
            if len(v.names) == 1 and v.names[0] in stars and not v.calls:
                self.summary.model.param = stars[v.names[0]]
                return

    def model_param(self, idx: int) -> None:
        """This function's parameter ``idx`` picks the model; remember its default."""
        self.summary.model.param = idx
        p = self.fn.params[idx]
        if p.default is not None:
            d, how = self.an.resolve_ref(p.default.ref, self.mod, self.fn.cls)
            self.summary.model.default = d
            self.summary.model.default_where = (
                f"default of `{p.name}` in `{self.fn.name}()` "
                f"({where(self.path, self.fn.pos)})" + (f", {how}" if how else ""))

    def const_tools(self, val: Val | None) -> tuple[str, ...]:
        if val is None:
            return ()
        out: list[str] = []
        for n in val.names:
            v = self.mod.facts.constants.get(n)
            if v is not None:
                out.extend(v.tool_names)
        return tuple(out)

    def note_slots(self, labels: frozenset[L], slot: str, role: Role) -> None:
        if not slot:
            return
        for lb in labels:
            if lb.kind in ("param", "psan"):
                self.slots.setdefault(lb.idx, set()).add(slot)
                if role is not Role.UNKNOWN and slot in ("prompt", "system"):
                    self.sinks.setdefault(lb.idx, set()).add(role.value)

    def mark_genctx(self, c: CallIR, system: Val | None, messages: Val | None,
                    role: Role) -> None:
        self.touched = True
        for what, val in (("system prompt", system), ("message history", messages)):
            if val is None or val.calls or len(val.names) != 1:
                continue
            name = val.names[0]
            if what == "message history" and val.ref is None:
                continue
            if set(name_tokens(name.rsplit(".", 1)[-1])) & _PATH_TOKENS:
                continue  # a folder or file the helper reads its prompt from, not the prompt
            self.genctx_label(c, name, what)

    def genctx_label(self, c: CallIR, name: str, what: str) -> None:
        """Label ``name`` (a local, or a module-level name for every function) as the
        generator's ``what`` given to call ``c``."""
        o = Origin(self.path, c.pos, f"the generator's {what} `{name}`",
                   (self.path, self.fn.name, c.id))
        if name in self.labels or name in self.fn.locals:
            self.labels[name] = self.labels.get(name, frozenset()) | {L("genctx", o, name=name)}
        else:
            self.genctx_globals[name] = L("genctx", o, name=name)

    def mark_system_slot(self, c: CallIR, messages: list[Val]) -> None:
        """Names in the system slot of a generator's message list (``{"role": "system",
        "content": RULES}``, ``SystemMessage(content=...)``, ``("system", RULES)``, a module's
        ``SYSTEM = SystemMessage(...)``) are the generator's system prompt (I2)."""
        names: list[str] = []
        for val in messages:
            names += val.system
            names += [n for n in val.names if self.system_message_const(n)]
        for name in dict.fromkeys(names):
            if "." in name:
                continue
            self.touched = True
            self.genctx_label(c, name, "system prompt")

    def system_message_const(self, name: str) -> bool:
        """Is the module-level ``name`` a system message (``SystemMessage(...)``)?"""
        val = self.mod.facts.constants.get(name)
        if val is None or not val.calls:
            return False
        owner = self.mod.facts.functions.get(self.mod.facts.owners.get(name, ""))
        return owner is not None and any(
            cid < len(owner.calls) and owner.calls[cid].func.rsplit(".", 1)[-1]
            in ("SystemMessage", "SystemMessagePromptTemplate") for cid in val.calls)

    @property
    def genctx_globals(self) -> dict[str, L]:
        return self.an.genctx.setdefault(self.path, {})

    def reasoning_evidence(self, c: CallIR, model: str | None, system: Val | None,
                           prompts: list[Val]) -> tuple[str, ...]:
        out: list[str] = []
        thinking = c.kw("thinking")
        if thinking is not None and "disabled" not in thinking.strings:
            out.append("thinking is enabled (`thinking=`)")
        for k in ("reasoning_effort", "reasoning"):
            if c.kw(k) is not None:
                out.append(f"reasoning is enabled (`{k}=`)")
        if model and _REASONING_MODEL.search(model):
            out.append(f"`{model}` is a reasoning model")
        for t in self.prompt_texts(system, prompts):
            m = _REASON_TEXT.search(t)
            if m:
                out.append(f"the prompt asks it to reason (\"{m.group(0)}\")")
                break
        return tuple(out)

    def prompt_texts(self, system: Val | None, prompts: list[Val]) -> list[str]:
        """The text of a call's prompt: its string constants, and those of what it is made
        of, a few steps back: local names, module constants (``SystemMessage(content=...)``
        at module level too), the arguments of the calls that build it (``TEMPLATE.format``,
        ``HumanMessage(...)``) and the strings of a project function that builds it."""
        texts: list[str] = []
        work: list[tuple[Val, FunctionIR | None, int]] = [
            (v, self.fn, 0) for v in (system, *prompts) if v is not None]
        seen: set[tuple[str, int]] = set()
        while work and len(texts) < 64:
            v, fn, depth = work.pop()
            texts.extend(v.strings)
            if depth >= 4:
                continue
            for n in v.names:
                root = n.split(".")[0]
                if fn is self.fn and root in self.local_vals:
                    if ("local", id(self.local_vals[root])) not in seen:
                        seen.add(("local", id(self.local_vals[root])))
                        work.extend((x, fn, depth + 1) for x in self.local_vals[root])
                    continue
                if fn is not None and root in fn.locals:
                    continue  # a parameter or a local not bound yet: not the module's constant
                cv = self.mod.facts.constants.get(root)
                if cv is not None and ("const", id(cv)) not in seen:
                    seen.add(("const", id(cv)))
                    if cv.text is not None:
                        texts.append(cv.text)
                    else:
                        owner = self.mod.facts.functions.get(self.mod.facts.owners.get(root, ""))
                        work.append((cv, owner, depth + 1))
            if fn is None:
                continue
            for cid in v.calls:
                if cid >= len(fn.calls) or ("call", id(fn.calls[cid])) in seen:
                    continue
                c = fn.calls[cid]
                seen.add(("call", id(c)))
                if fn is self.fn:
                    built = self.builder_texts(cid)
                    if built:
                        texts.extend(built)
                        continue
                work.extend((a, fn, depth + 1) for a in c.args)
                work.extend((a, fn, depth + 1) for _, a in c.kwargs)
                base = c.func.rsplit(".", 1)[0] if "." in c.func else ""
                if base and not base.startswith("<expr>"):
                    work.append((Val(names=(base,)), fn, depth + 1))
        return texts

    def builder_texts(self, cid: int) -> list[str]:
        """The string constants of a project function that builds a prompt
        (``ask(build_prompt(topic))``): what it assigns and returns, one level deep."""
        if cid >= len(self.fn.calls):
            return []
        kind, name = self.resolve(self.fn.calls[cid].func)
        if kind not in ("fn", "ext"):
            return []
        found = self.an.tables.function(name, self.path)
        if found is None:
            return []
        out: list[str] = []
        stack: list[Step] = list(found[1].body)
        while stack and len(out) < 32:
            st = stack.pop()
            if isinstance(st, (Assign, Return)):
                out.extend(st.value.strings)
            elif isinstance(st, If):
                stack.extend(st.body)
                stack.extend(st.orelse)
        return out

    def role_of(self, c: CallIR, callee: str | None, model: Val | None, system: Val | None,
                prompts: list[Val]) -> tuple[Role, tuple[str, ...]]:
        """Role of an LLM call from the strongest evidence available."""
        conf = self.an.configured_role(callee or "", self.fn.name)
        if conf is not None:
            return conf[0], (conf[1],)
        texts = self.prompt_texts(system, prompts)
        if any(_META_TEXT.search(t) or _ROUTER_TEXT.search(t) for t in texts):
            self.meta = True
            return Role.UNKNOWN, ()
        key = (self.path, self.fn.name, c.id)
        why = None if key in self.an.self_fed else self.an.structural.get(key)
        role, evidence = self.role_evidence(model, system, prompts, why)
        if role is Role.EVALUATOR and judges_input(texts):
            self.meta = True
            return Role.UNKNOWN, ()
        return role, evidence

    def role_evidence(self, model: Val | None, system: Val | None, prompts: list[Val],
                      structural: str | None = None) -> tuple[Role, tuple[str, ...]]:
        """The role from names and texts: the model's name, the system prompt, the
        function's own name, the call's structure (``structural``: why it evaluates another
        call's output), then the prompt."""
        if model is not None:
            for n in model.names:
                r = role_from_name(n.split(".")[-1])
                if r is not Role.UNKNOWN:
                    return r, (f"model `{n}`",)
        if system is not None:
            r, ev = self.val_role(system, "system prompt")
            if r is not Role.UNKNOWN:
                return r, ev
        if self.own_role is not Role.UNKNOWN and self.prev_n <= 1:
            return self.own_role, self.own_evidence
        if structural is not None:
            return Role.EVALUATOR, (structural,)
        roles: set[Role] = set()
        evs: list[str] = []
        for v in prompts:
            r, ev = self.val_role(v, "prompt")
            if r is not Role.UNKNOWN:
                roles.add(r)
                evs.extend(ev)
        if len(roles) == 1:
            return roles.pop(), tuple(evs)
        return Role.UNKNOWN, ()

    def val_role(self, v: Val, what: str) -> tuple[Role, tuple[str, ...]]:
        for s in v.strings:
            if _judge_text(s):
                return Role.EVALUATOR, (f"{what} text \"{s[:40].strip()}…\"",)
        roles: set[Role] = set()
        ev: list[str] = []
        for n in v.names:
            last = n.split(".")[-1] if "." in n else n
            r = role_from_name(last)
            if r is Role.UNKNOWN:
                const = self.mod.facts.constants.get(n.split(".")[0])
                if const is not None and const.text and _judge_text(const.text):
                    r = Role.EVALUATOR
            if r is not Role.UNKNOWN and (r is Role.GENERATOR or self.is_rubric_name(n)
                                          or (r is Role.EVALUATOR and what == "system prompt")):
                roles.add(r)
                ev.append(f"{what} `{n}`")
            carried = sorted(f"{what} carries {lb.origin.what if lb.origin else 'a rubric'}"
                             for lb in self.peek(Val(names=(n,))) if lb.kind == "rubric")
            if carried:  # sorted: a set of labels has no stable order from run to run
                roles.add(Role.EVALUATOR)
                ev += carried
        for cid in v.calls:
            carried = sorted(f"{what} carries {lb.origin.what if lb.origin else 'a rubric'}"
                             for lb in self.call_out.get(cid, frozenset()) if lb.kind == "rubric")
            if carried:
                roles.add(Role.EVALUATOR)
                ev += carried
        if len(roles) == 1:
            return roles.pop(), tuple(dict.fromkeys(ev))
        return Role.UNKNOWN, ()

    def model_of_val(self, val: Val | None) -> tuple[str | None, str]:
        if val is None:
            return None, ""
        ref = self.local_ref(val.ref)
        return self.an.resolve_ref(ref, self.mod, self.fn.cls)

    def user_call(self, c: CallIR, mod: Module, fn: FunctionIR, args: list[frozenset[L]],
                  kws: dict[str, frozenset[L]]) -> frozenset[L]:
        s = self.an.summary(mod, fn)
        self.deps.add((mod.path, fn.name))
        offset = 1 if fn.is_method and "." in c.func else 0
        names = [p.name for p in fn.params]
        by_param: dict[int, frozenset[L]] = {}
        vals: dict[int, Val] = {}
        for i, a in enumerate(args):
            j = i + offset
            if j < len(fn.params) and not fn.params[j].star:
                by_param[j] = a
                vals[j] = c.args[i]
        star = max((i for i, p in enumerate(fn.params) if p.star), default=None)
        for k, v in c.kwargs:
            if k in names:
                by_param[names.index(k)] = kws[k]
                vals[names.index(k)] = v
            elif star is not None:  # into the callee's ``**kwargs``
                by_param[star] = by_param.get(star, frozenset()) | kws[k]
                if k == "model" or star not in vals:
                    vals[star] = v
        role: Role = Role.UNKNOWN
        evidence: tuple[str, ...] = ()
        conf = self.an.configured_role(f"{mod.name}.{fn.name}", fn.name)
        if conf is not None:
            role, evidence = conf[0], (conf[1],)
        elif s.role is not Role.UNKNOWN:
            role, evidence = s.role, s.role_evidence
        elif s.llm and s.meta:
            self.meta = True  # a router's or prompt rewriter's helper: no role of the loop
        elif s.llm:
            model_v = vals.get(s.model.param) if s.model.param is not None else None
            sys_v = next((vals[i] for i, sl in s.slots.items() if "system" in sl and i in vals),
                         None)
            prompts = [vals[i] for i, sl in s.slots.items() if "prompt" in sl and i in vals]
            role, evidence = self.role_of(c, f"{mod.name}.{fn.name}", model_v, sys_v, prompts)
            if role is Role.UNKNOWN and s.own_call_roles == frozenset({Role.EVALUATOR}):
                role, evidence = Role.EVALUATOR, (f"every LLM call in `{fn.name}()` is an "
                                                  "evaluator call",)
        if s.llm or conf is not None:
            inputs: dict[str, frozenset[L]] = {}
            for j, labels in by_param.items():
                slots = s.slots.get(j, frozenset())
                if s.role is not Role.UNKNOWN or conf is not None or slots & {"prompt",
                                                                              "system"}:
                    inputs[names[j]] = labels
                for lb in labels:
                    if lb.kind in ("param", "psan"):
                        for sl in slots:
                            self.slots.setdefault(lb.idx, set()).add(sl)
                        for r in s.sinks.get(j, frozenset()):
                            self.sinks.setdefault(lb.idx, set()).add(r)
            for lb in frozenset().union(*inputs.values()) if inputs else ():
                if lb.kind in ("param", "psan") and role is not Role.UNKNOWN:
                    self.sinks.setdefault(lb.idx, set()).add(role.value)
            model, model_where = self.helper_model(s, vals)
            if role is not Role.EVALUATOR:
                sys_v = next((vals[i] for i, sl in s.slots.items() if "system" in sl
                              and i in vals), None)
                self.mark_genctx(c, sys_v, None, role)
            tools: tuple[str, ...] = ()
            tv = c.kw("tools")
            if tv is not None:
                tools = tuple(tv.tool_names) + self.const_tools(tv)
            inner = next((lb.origin for lb in s.returns if lb.origin is not None), None)
            prompts = [vals[i] for i, sl in s.slots.items() if sl & {"prompt", "system"}
                       and i in vals]
            reasoning = tuple(dict.fromkeys(
                s.reasoning + self.reasoning_evidence(c, model, None, prompts)))
            origin = Origin(self.path, c.pos, f"`{c.func}()`", (self.path, self.fn.name, c.id),
                            reasoning, inner)
            self.summary.n_llm += 1
            if reasoning:
                self.summary.reasoning = tuple(dict.fromkeys(self.summary.reasoning
                                                             + reasoning))
            if s.model.param is not None and s.model.param in vals:
                ref = self.local_ref(vals[s.model.param].ref)
                if ref is not None and ref[0] == "param":
                    self.model_param(int(ref[1]))
                elif model is not None:
                    self.summary.model.fixed = model
                    self.summary.model.fixed_where = model_where
            elif s.model.fixed or s.model.default:
                self.summary.model.fixed = model
                self.summary.model.fixed_where = model_where
            if model is None and s.model.param is not None and s.model.param in vals:
                model, model_where = self.symbolic_model(vals[s.model.param])
            self.effective(c, c.func, role, evidence, inputs, model, model_where, tools, origin,
                           own_role=s.role is not Role.UNKNOWN or conf is not None,
                           sinks_only=False)
        else:
            origin = None
            # a non-LLM helper: parameters that reach an LLM call inside it are still sinks
            for j, labels in by_param.items():
                for r in s.sinks.get(j, frozenset()):
                    self.sink_check(c, Role(r), {names[j]: labels}, f"`{c.func}()`")
                    for lb in labels:
                        if lb.kind in ("param", "psan"):
                            self.sinks.setdefault(lb.idx, set()).add(r)
        if s.called_roles:
            self.touched = True
            self.called |= s.called_roles
            for lid in self.loop_stack:
                gen, ev = self.loop_roles[lid]
                if "evaluator" in s.called_roles and not s.llm:
                    ev.append(c.pos)
                if "generator" in s.called_roles and not s.llm:
                    gen.append(c.pos)
        if s.return_elts:
            self.call_elts[c.id] = tuple(self.returned(s, e, by_param, role, origin)
                                         for e in s.return_elts)
        return self.returned(s, s.returns, by_param, role, origin)

    def helper_model(self, s: Summary, vals: dict[int, Val]) -> tuple[str | None, str]:
        m = s.model
        if m.param is not None and m.param in vals:
            value, how = self.model_of_val(vals[m.param])
            return value, how
        if m.param is not None and m.default is not None:
            return m.default, m.default_where
        return m.fixed, m.fixed_where

    def returned(self, s: Summary, labels: frozenset[L], by_param: dict[int, frozenset[L]],
                 role: Role, origin: Origin | None) -> frozenset[L]:
        """The caller's view of ``labels`` a helper returns: parameters replaced by the
        arguments, LLM outputs re-rooted at this call site with the role it has here."""
        out: set[L] = set()
        for lb in labels:
            if lb.kind == "param":
                out |= by_param.get(lb.idx, frozenset())
            elif lb.kind == "psan":
                out |= sanitize(by_param.get(lb.idx, frozenset()))
            elif lb.kind in ("llm", "gen", "judge", "ans") and origin is not None:
                kind = lb.kind
                if kind == "llm" and role is Role.EVALUATOR:
                    kind = "judge"
                elif kind == "llm" and role is Role.GENERATOR:
                    kind = "gen"
                elif kind == "gen" and role is Role.EVALUATOR:
                    kind = "judge"
                inner_r = lb.origin.reasoning if lb.origin else ()
                o = Origin(origin.path, origin.pos, origin.what, origin.key,
                           tuple(dict.fromkeys(origin.reasoning + inner_r)), lb.origin)
                out.add(L(kind, o, flag=lb.flag or (kind == "judge" and s.structured)))
            elif lb.kind == "genctx" and role is Role.EVALUATOR and origin is not None:
                continue  # the history of the helper's own call: here that is the judge's
            else:
                out.add(lb)
        return frozenset(out)

    def effective(self, c: CallIR, callee: str, role: Role, evidence: tuple[str, ...],
                  inputs: dict[str, frozenset[L]], model: str | None, model_where: str,
                  tools: tuple[str, ...], origin: Origin, own_role: bool,
                  sinks_only: bool = False,
                  obj: Origin | None = None) -> None:
        """Record an effective LLM call: loops, sinks, and (when reporting) the call event."""
        self.touched = True
        # a call that reads another call's output may evaluate it (see ``note_verdict``),
        # unless it continues that call's conversation (its history or system prompt) or
        # reads its own earlier output: then it is the generator reflecting on its own work
        if any(lb.origin is not None and lb.origin.key == origin.key
               and lb.kind in ("gen", "llm", "ans", "judge")
               for labels in inputs.values() for lb in labels):
            self.an.self_fed.add(origin.key)
        if (role is not Role.EVALUATOR or origin.key in self.an.structural) and not any(
                lb.kind == "genctx" for labels in inputs.values() for lb in labels):
            src = next((lb.origin for labels in inputs.values() for lb in labels
                        if lb.kind in ("gen", "llm", "ans") and lb.origin is not None
                        and lb.origin.key != origin.key), None)
            if src is not None:
                self.fed[origin.key] = src
        r = "evaluator" if role is Role.EVALUATOR else "generator"
        self.called.add(r)
        self.call_roles.add(role)
        if role is Role.EVALUATOR and any(SCORE_ASKED in labels for labels in inputs.values()):
            self.an.scored.add(origin.key)
        for lid in self.loop_stack:
            gen, ev = self.loop_roles[lid]
            (ev if role is Role.EVALUATOR else gen).append(c.pos)
        self.sink_check(c, role, inputs, f"`{callee}()`")
        if self.report:
            reach = tuple(lb.origin for labels in inputs.values() for lb in labels
                          if lb.origin is not None and (lb.kind in ("gen", "llm", "ans") or (
                              lb.kind == "genctx" and lb.origin.key in self.an.fw_runs)))
            model_pos = c.pos
            self.an.result.calls.append(LLMCall(
                self.path, self.fn.name, c.pos, callee, role, evidence, model, model_where,
                model_pos, tools, reach, own_role, origin, obj.key if obj else None,
                f"{obj.what} ({where(obj.path, obj.pos)})" if obj else "",
                (obj.path, obj.pos) if obj else None))

    # ------------------------------------------------------------------ sinks

    def sink_check(self, c: CallIR, role: Role, inputs: dict[str, frozenset[L]],
                   sink: str) -> None:
        self.touched = True
        if not self.report:
            return
        if role is Role.EVALUATOR:
            for arg, labels in inputs.items():
                for lb in labels:
                    if lb.kind in ("gen", "llm"):
                        self.flow("EL201", c.pos, f"the evaluator call {sink}", lb, arg)
                    elif lb.kind == "genctx":
                        self.flow("EL202", c.pos, f"the evaluator call {sink}", lb, arg)
            self.ctx_names(c, sink)
        elif role is Role.GENERATOR:
            for arg, labels in inputs.items():
                for lb in labels:
                    if lb.kind == "rubric":
                        self.flow("EL203", c.pos, f"the generator call {sink}", lb, arg)

    def ctx_names(self, c: CallIR, sink: str) -> None:
        vals = [v for k, v in c.kwargs if k not in NON_CONTENT] + list(c.args)
        params = {p.name for p in self.fn.params}
        seen: set[int] = set()
        while vals:
            v = vals.pop()
            for cid in v.calls:
                if cid not in seen and cid < len(self.fn.calls):
                    seen.add(cid)
                    inner = self.fn.calls[cid]
                    vals.extend(inner.args)
                    vals.extend(x for _, x in inner.kwargs)
            for n in v.names:
                if n.split(".")[0] in params and "." not in n:
                    continue  # reported where the caller passes it
                tokens = set(name_tokens(n))
                hit = tokens & CTX_TOKENS
                if "tool" in hit and not tokens & {"calls", "trace", "results", "uses"}:
                    hit.discard("tool")
                if "chain" in hit and "thought" not in tokens:
                    hit.discard("chain")
                if hit and (tokens & EVALUATOR_WORDS or tokens & {"reflection", "reflect"}):
                    continue  # the evaluator's own conversation (``critic_history``)
                if hit and self.own_messages(c, n):
                    continue
                if hit and hit <= {"history", "transcript"} and n.split(".")[0] in params and \
                        self.own_role is Role.EVALUATOR:
                    continue  # a conversation evaluator: the chat it is given is its subject
                if hit:
                    o = Origin(self.path, c.pos, f"`{n}`", (self.path, self.fn.name, -2))
                    self.flow("EL202", c.pos, f"the evaluator call {sink}",
                              L("genctx", o, name=n), n)

    def own_messages(self, c: CallIR, name: str) -> bool:
        """A message list this function built itself from literals and parameters, that
        holds no other LLM call's output: the evaluator's own conversation, not a trace."""
        if "." in name or name in (p.name for p in self.fn.params):
            return False
        built = [st.value for st in walk_steps(self.fn.body)
                 if isinstance(st, Assign) and name in st.targets]
        if not built or any(cid != c.id for v in built for cid in v.calls):
            return False  # built from another call's result (a run, a trace): not its own
        key = (self.path, self.fn.name, c.id)
        return not any(lb.kind in ("gen", "llm", "ans", "genctx") and lb.origin is not None
                       and lb.origin.key != key for lb in self.read(name))

    def template_sink(self, c: CallIR, args: list[frozenset[L]],
                      kws: dict[str, frozenset[L]]) -> None:
        self.touched = True
        inputs = {f"#{i}": a for i, a in enumerate(args)}
        inputs.update(kws)
        if not self.report:
            for labels in inputs.values():
                for lb in labels:
                    if lb.kind in ("param", "psan"):
                        self.sinks.setdefault(lb.idx, set()).add("evaluator")
            return
        for arg, labels in inputs.items():
            for lb in labels:
                if lb.kind in ("gen", "llm"):
                    self.flow("EL201", c.pos, "the evaluator template render "
                              f"`{c.func.replace('<expr>', '…')}()`", lb, arg)
                elif lb.kind == "genctx":
                    self.flow("EL202", c.pos, "the evaluator template render "
                              f"`{c.func.replace('<expr>', '…')}()`", lb, arg)

    def flow(self, code: str, pos: Pos, sink: str, lb: L, arg: str) -> None:
        o = lb.origin
        key = (code, o.key if o else None, lb.name)
        if key in self.flows:
            return
        related: list[tuple[str, Pos, str]] = []
        inner = o.inner if o else None
        while inner is not None:
            related.append((inner.path, inner.pos, f"inside {inner.what}"))
            inner = inner.inner
        reasoning = o.reasoning if o and code == "EL201" else ()
        if lb.kind in ("gen", "llm") and lb.flag:
            reasoning = ("the value is the thinking/reasoning content itself", *reasoning)
        detail = arg if not arg.startswith("#") else ""
        self.flows[key] = Flow(code, self.path, pos, sink, o, detail, reasoning, lb.name,
                               (), tuple(related))
        self.an.result.flows.append(self.flows[key])

    # ------------------------------------------------------------------ I7

    def check_pass_test(self, test: Val, labels: frozenset[L], pos: Pos) -> None:
        if not self.report or test.compares:
            return
        for lb in labels:
            # a binary judge (is_correct, no score) decides by design: only a judge that also
            # gives a score should have its pass computed from that score
            if lb.kind == "pass" and lb.origin is not None and (
                    self.an.scored & set(_chain_keys(lb.origin))):
                o = lb.origin
                rel = ((o.path, o.pos, "the evaluator's output comes from here"),)
                self.an.result.events.append(Event(
                    "EL503", self.path, pos, "pass-field",
                    (("field", lb.name or ""), ("at", where(o.path, o.pos))), rel))
                return

    def check_text_stop(self, test: Val, pos: Pos) -> None:
        """A loop that stops when the evaluator's free text matches a word (``if reply ==
        "PASS": break``, ``"<OK>" in critique``): the judge's unvalidated words decide."""
        if not self.report or test.compares or not test.boolean or not self.loop_stack:
            return
        gen, _ev = self.loop_roles[self.loop_stack[-1]]
        if not gen or ("EL503", pos) in self.stops:
            return  # no generator in the loop: a judge refining its own verdict
        words = [w for w in test.strings if w.strip() and len(w) <= 24]
        if not words:
            return
        for lb in self.peek(test):  # before the comparison turned the labels into a bool
            if lb.kind == "judge" and not lb.flag and lb.origin is not None:
                o = lb.origin
                self.stops.add(("EL503", pos))
                self.an.result.events.append(Event(
                    "EL503", self.path, pos, "text-stop",
                    (("at", where(o.path, o.pos)), ("word", words[0].strip())),
                    ((o.path, o.pos, "the evaluator's output comes from here"),)))
                return

    def regex_text(self, v: Val) -> str | None:
        """The pattern of a regex call: a literal, a module constant or ``re.compile("…")``."""
        if v.text is not None:
            return v.text
        module = self.mod.facts.functions.get("<module>")
        for n in v.names:
            const = self.mod.facts.constants.get(n)
            if const is None:
                continue
            if const.text is not None:
                return const.text
            for cid in const.calls:
                if module is not None and cid < len(module.calls):
                    call = module.calls[cid]
                    if call.func.endswith("compile") and call.args and call.args[0].text:
                        return call.args[0].text
        return None

    @staticmethod
    def regex_checked(pattern: str | None, labels: frozenset[L]) -> frozenset[L]:
        """A regex match over judge output: what it captures has the pattern's shape (a
        number, a fixed word), so parsing it is validated, unless the pattern captures
        free-form text (``{.*}``) or is unknown."""
        if pattern is None or _FREEFORM.search(pattern):
            return labels
        return frozenset(L(lb.kind, lb.origin, lb.idx, True, lb.name) if lb.kind == "judge"
                         else lb for lb in labels)

    def note_parse(self, c: CallIR, labels: frozenset[L]) -> None:
        if c.args and c.args[0].boolean:
            return  # int(a == b): a bool, nothing is parsed
        for lb in labels:
            if lb.kind == "judge" and not lb.flag:
                self.parses.setdefault(lb.origin, []).append((c, lb))

    def check_last_not_best(self, step: Return, labels: frozenset[L]) -> None:
        if not self.report or self.fn.best:
            return
        for lb in labels:
            if lb.kind not in ("gen", "llm", "ans") or lb.origin is None:
                continue
            if lb.origin.key[:2] != (self.path, self.fn.name):
                continue
            loops = self.call_loops.get(lb.origin.key[2], ())
            inside = [lid for lid in loops if lid in self.refinement
                      and lid not in self.loop_stack]
            if inside:
                self.an.result.events.append(Event(
                    "EL502", self.path, step.pos, "last-attempt",
                    (("at", where(self.path, lb.origin.pos)),),
                    ((self.path, lb.origin.pos, "the attempt is generated here"),)))
                return

    def finish_report(self) -> None:
        for origin, items in self.parses.items():
            if any(c.in_try for c, _ in items) or self.fn.validates:
                continue
            c, _ = items[0]
            rel = ((origin.path, origin.pos, "the evaluator's output comes from here"),) \
                if origin else ()
            self.an.result.events.append(Event(
                "EL504", self.path, c.pos, "unchecked-parse",
                (("at", where(origin.path, origin.pos) if origin else "?"), ("func", c.func)),
                rel))
        has_eval = any(lc.path == self.path and lc.role is Role.EVALUATOR
                       for lc in self.an.result.calls)
        for cid, (c, loops, bound) in self.opens.items():
            mode = c.args[1].text if len(c.args) > 1 else None
            mv = c.kw("mode")
            if mv is not None:
                mode = mv.text
            if c.func.endswith("write_text"):
                mode = "w"
            if not mode or not mode.startswith("w"):
                continue
            target = c.recv if c.recv is not None else (c.args[0] if c.args else Val())
            parts = [*target.strings, *target.names, c.func]
            for tc in target.calls:  # Path("results.jsonl").open("w")
                if tc < len(self.fn.calls):
                    parts += [x for v in self.fn.calls[tc].args for x in (*v.strings, *v.names)]
            names = " ".join(parts)
            tokens = set(name_tokens(names))
            resultish = bool(tokens & {"result", "results", "records", "runs", "scores",
                                       "jsonl", "attempts", "evals"}) or ".jsonl" in names
            # a path made from what the loop binds (f"out/{case_id}.json") is one file per case
            fixed = not {n.split(".")[0] for n in target.names} & bound
            llm_loops = [lid for lid in loops if any(self.loop_roles.get(lid, ((), ())))]
            kind, loop_at = "", ""
            if fixed and any(lid in self.refinement for lid in loops):
                lid = next(lid for lid in loops if lid in self.refinement)
                kind, loop_at = "refinement", where(self.path, self.loop_objs[lid].pos)
            elif fixed and resultish and llm_loops:
                kind = "per-case"
                loop_at = where(self.path, self.loop_objs[llm_loops[-1]].pos)
            else:
                for h, wloops in sorted(self.writes):
                    inner = wloops[len(loops):] if wloops[:len(loops)] == loops else ()
                    if h != cid or not inner:
                        continue
                    judged = any(self.loop_roles.get(lid, ((), ()))[1] for lid in inner)
                    if (resultish and has_eval) or judged:
                        kind = "record-by-record"
                        loop_at = where(self.path, self.loop_objs[inner[0]].pos)
                        break
            if kind:
                self.an.result.events.append(Event(
                    "EL505", self.path, c.pos, kind, (("mode", mode), ("loop", loop_at))))


def own_role(an: Analysis, mod: Module, name: str) -> tuple[Role, tuple[str, ...]]:
    """The role a function's own name (or the config) gives it, and why."""
    own = an.configured_role(name, f"{mod.name}.{name}")
    if own is not None:
        return own[0], (own[1],)
    base = name.rsplit(".", 1)[-1]
    # a test function (``test_grader_sees_tools``) names what it tests, not a role
    r = function_role(base) if name != "<module>" and not base.startswith(
        ("test_", "Test")) else Role.UNKNOWN
    return r, ((f"function name `{base}`",) if r is not Role.UNKNOWN else ())


@lru_cache(maxsize=16)
def _extract_patterns(extract: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The extraction globs as two regular expressions: lower-cased, for a call's last name
    (lower-cased), and as written, for its whole dotted name (what ``fnmatchcase`` of each
    glob would say, in one match instead of two per glob)."""
    never = "(?!)"
    short = "|".join(fnmatch.translate(p.lower()) for p in extract) or never
    full = "|".join(fnmatch.translate(p) for p in extract) or never
    return re.compile(short), re.compile(full)


def name_tokens(name: str) -> tuple[str, ...]:
    return tuple(_name_tokens(name))


def _bound_names(loop: Loop) -> set[str]:
    """Names a loop binds on each iteration: its targets and what its body assigns."""
    out = {t.split(".")[0] for t in loop.targets}
    stack: list[Step] = list(loop.body)
    while stack:
        st = stack.pop()
        if isinstance(st, Assign):
            out.update(t.split(".")[0] for t in st.targets)
        elif isinstance(st, If):
            stack.extend(st.body)
            stack.extend(st.orelse)
        elif isinstance(st, Loop):
            out.update(t.split(".")[0] for t in st.targets)
            stack.extend(st.body)
    return out


def _chain_keys(o: Origin | None) -> list[tuple[str, str, int]]:
    """The call keys of an origin and of the helper calls inside it."""
    keys = []
    while o is not None:
        keys.append(o.key)
        o = o.inner
    return keys


def sanitize(labels: Iterable[L]) -> frozenset[L]:
    """A final-answer extraction: raw generator output becomes an extracted answer."""
    out: set[L] = set()
    for lb in labels:
        if lb.kind in ("gen", "llm"):
            out.add(L("ans", lb.origin))
        elif lb.kind == "param":
            out.add(L("psan", None, lb.idx))
        else:
            out.add(lb)
    return frozenset(out)


@lru_cache(maxsize=8192)
def _method_family(func: str) -> tuple[bool, bool]:
    """Does a dotted call name end like an Anthropic, an OpenAI SDK method (asked for every
    call the interpreter meets, with the same few thousand names)."""
    dotted = "." + func
    return (any(dotted.endswith("." + m) for m in ANTHROPIC_METHODS),
            any(dotted.endswith("." + m) for m in OPENAI_METHODS))
