"""Attributes read on an instance: which class a call makes, and that class's attribute.

Projects keep their model names in a settings object: a pydantic ``BaseSettings`` or a
dataclass with defaults (``llm_model: str = "gemini-2.0-flash"``), built by the class itself
(``Settings()``), by a factory (``get_settings()``, often cached) or once at module level
(``settings = Settings()``) and imported. ``settings.llm_model`` then names one value in every
module that reads it: it resolves to the field's default, and when nothing resolves it (a field
the environment fills) two calls reading it still run on the same model. The build keeps a
call of a plain name with no positional argument as ``("new", "get_settings", "")`` and an
attribute read on it as ``("new", "get_settings", "llm_model")``; this module follows that
name to the class (through factories that return an instance, a module-level singleton, an
import) and reads the attribute from the class body.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evallint.pyflow.ir import Assign, Return, walk_steps
from evallint.pyflow.parts import holds_class
from evallint.roles import name_tokens

if TYPE_CHECKING:
    from evallint.pyflow.analysis import Analysis
    from evallint.pyflow.ir import Ref
    from evallint.pyflow.summaries import Module

_MAX_DEPTH = 6


def _is_class(mod: Module, name: str) -> bool:
    """A class of the module with methods or attributes (how the facts know a class)."""
    prefix = f"{name}."
    return holds_class(mod.facts, name) or any(n.startswith(prefix)
                                              for n in mod.facts.constant_names)


def instance_class(an: Analysis, func: str, mod: Module, depth: int = 0
                   ) -> tuple[Module, str] | None:
    """The class whose instance a call of ``func`` (read in ``mod``) returns: the class
    itself, or what a factory function returns (``return Settings()``, a module-level
    ``_settings`` it fills and returns), followed through imports."""
    if depth > _MAX_DEPTH or not mod.facts.analyzed:
        return None
    if "." not in func and _is_class(mod, func):
        return mod, func
    found = project_function(an, mod, func)
    if found is not None:
        return _returned_class(an, found[0], found[1], depth)
    root, _, rest = func.partition(".")
    target = mod.facts.imports.get(root)
    if not target:
        return None
    qual = f"{target}.{rest}" if rest else target
    owner = an.tables.owner(qual, mod.path)
    if owner is not None and qual.startswith(owner.name + "."):
        name = qual[len(owner.name) + 1:]
        if "." not in name and _is_class(owner, name):
            return owner, name
    return None


def _returned_class(an: Analysis, mod: Module, name: str, depth: int
                    ) -> tuple[Module, str] | None:
    fn = mod.facts.functions[name]
    made: dict[str, Ref] = {}
    for step in walk_steps(fn.body):
        if isinstance(step, Assign) and step.value.ref is not None and \
                step.value.ref[0] == "new" and not step.value.ref[2]:
            for t in step.targets:
                made[t] = step.value.ref
        if isinstance(step, Return) and step.value.ref is not None:
            ref: Ref | None = step.value.ref
            assert ref is not None
            if ref[0] == "name" and ref[1] in made:
                ref = made[ref[1]]
            elif ref[0] == "name":
                ref = _singleton(mod, str(ref[1]))
            if ref is not None and ref[0] == "new" and not ref[2]:
                found = instance_class(an, str(ref[1]), mod, depth + 1)
                if found is not None:
                    return found
    return None


def _singleton(mod: Module, name: str) -> Ref | None:
    """A module-level instance (``settings = Settings()``, or ``KNOBS = Knobs(model=...)``:
    a ``"made"`` ref), or one a function of the module assigns to that global (``global
    _settings; _settings = Settings()``)."""
    val = mod.facts.constants.get(name) if name in mod.facts.constant_names else None
    if val is not None and val.ref is not None and val.ref[0] in ("new", "made"):
        return val.ref
    for fname in mod.facts.function_order:
        for step in walk_steps(mod.facts.functions[fname].body):
            if isinstance(step, Assign) and name in step.targets and \
                    step.value.ref is not None and step.value.ref[0] == "new":
                return step.value.ref
    return None


def as_instance(an: Analysis, ref: Ref, mod: Module) -> tuple[Ref, Module, str] | None:
    """A ``("name", "settings.llm_model")`` whose root is an instance made at module level
    (here, or imported from the module that makes it), as ``("new", "Settings",
    "llm_model")`` (``"made"`` when the instance was made with arguments: its attributes are
    not the class's defaults), the module that makes it and the instance's name there."""
    if ref[0] != "name" or "." not in str(ref[1]):
        return None
    root, _, rest = str(ref[1]).partition(".")
    made = _singleton(mod, root) if root in mod.facts.constant_names else None
    if made is not None:
        return (made[0], made[1], rest), mod, root
    target = mod.facts.imports.get(root)
    if not target:
        return None
    parts = f"{target}.{rest}".split(".")  # ``settings.x`` or ``config_module.settings.x``
    for cut in range(len(parts) - 1, 0, -1):
        found = an.tables.constant(".".join(parts[:cut]), mod.path)
        if found is None:
            continue
        made = _singleton(found[0], found[1])
        return ((made[0], made[1], ".".join(parts[cut:])), found[0], found[1]) \
            if made is not None else None
    return None


def instance_attr(an: Analysis, ref: Ref, mod: Module) -> tuple[Module, str] | None:
    """The class attribute a ``("new", func, attr)`` ref reads: its module and its
    ``Class.attr`` name, a constant of that module when the class body gives a default
    (None when the class is not known)."""
    func, attr = str(ref[1]), str(ref[2])
    if not attr:
        return None
    found = instance_class(an, func, mod)
    if found is None:
        return None
    return found[0], f"{found[1]}.{attr}"


def self_method(an: Analysis, mod: Module, cls: str, path: str) -> str | None:
    """The function that ``self.<path>`` calls in a method of ``cls`` (qualified by its
    module): ``self.ask`` defined in the class or a base (``class Critic(BaseAgent)``, the
    base maybe imported), or ``self.llm.complete`` on an attribute whose class is known
    (``self.llm = LLMClient()``; ``self.llm = llm`` with ``llm: LLMClient`` in ``__init__``)."""
    first, _, rest = path.partition(".")
    if not rest:
        if f"{cls}.{first}" not in mod.facts.function_names and _sets_model(mod, cls):
            return None  # a base's method on the model this subclass sets: not followed
        return _method(an, mod, cls, first, 0)
    if "." in rest:
        return None
    owner = attr_class(an, mod, cls, first)
    return _method(an, owner[0], owner[1], rest, 0) if owner is not None else None


def local_method(an: Analysis, mod: Module, made_by: str, name: str) -> str | None:
    """The method ``name`` of the object a call of ``made_by`` returned (a project class
    or a factory of one, or a factory returning its own nested functions), qualified by its
    module."""
    found = instance_class(an, made_by, mod)
    if found is None:
        return closure_method(an, mod, made_by, name)
    if f"{found[1]}.{name}" not in found[0].facts.function_names and \
            _sets_model(found[0], found[1]):
        return None
    return _method(an, found[0], found[1], name, 0)


def annotated_method(an: Analysis, mod: Module, annotation: str, name: str) -> str | None:
    """The method ``name`` of the project class a parameter's annotation names
    (``client: Claude``), qualified by its module; None for any other type (an interface, a
    library's class)."""
    found = instance_class(an, annotation, mod)
    return _method(an, found[0], found[1], name, 0) if found is not None else None


def project_function(an: Analysis, mod: Module, made_by: str) -> tuple[Module, str] | None:
    """The project function a call of ``made_by`` (read in ``mod``) runs: one of the module,
    or one it imports."""
    if made_by in mod.facts.function_names:
        return mod, made_by
    root, _, rest = made_by.partition(".")
    target = mod.facts.imports.get(root)
    if not target:
        return None
    return an.tables.function_name(f"{target}.{rest}" if rest else target, mod.path)


def closure_method(an: Analysis, mod: Module, made_by: str, name: str) -> str | None:
    """``const agent = createAgent(config)`` then ``agent.run(input)``, where ``createAgent``
    returns an object of functions nested in it (``return { run, stream }``): that nested
    function, which reads the factory's parameters as they were given at that call."""
    found = project_function(an, mod, made_by)
    if found is None:
        return None
    home, factory = found
    inner = f"{factory}.{name}"
    if inner not in home.facts.function_names:
        return None
    for step in walk_steps(home.facts.functions[factory].body):
        if isinstance(step, Return) and any(
                k == name and name in v.names for k, v in step.value.keys):
            return f"{home.name}.{inner}"
    return None


def closure_function(an: Analysis, mod: Module, made_by: str) -> str | None:
    """``const judge = makeJudge("gpt-4o")`` then ``judge(text)``, where ``makeJudge`` returns
    one function nested in it (``return grade``, ``return async (t) => ...``): that function,
    which reads the factory's parameters as they were given at that call."""
    found = project_function(an, mod, made_by)
    if found is None:
        return None
    home, factory = found
    returned: set[str] = set()
    for step in walk_steps(home.facts.functions[factory].body):
        if isinstance(step, Return) and not step.value.keys:
            returned.update(n for n in step.value.names
                            if f"{factory}.{n}" in home.facts.function_names)
    return f"{home.name}.{factory}.{returned.pop()}" if len(returned) == 1 else None


def attr_class(an: Analysis, mod: Module, cls: str, attr: str) -> tuple[Module, str] | None:
    """The class of the object ``cls`` keeps in ``self.<attr>``."""
    val = mod.facts.constants.get(f"{cls}.{attr}") if f"{cls}.{attr}" in \
        mod.facts.constant_names else None
    ref = val.ref if val is not None else None
    if ref is None:
        return None
    if (ref[0] == "new" and not ref[2]) or ref[0] == "made":
        return instance_class(an, str(ref[1]), mod)
    init = mod.facts.functions.get(f"{cls}.__init__") if f"{cls}.__init__" in \
        mod.facts.function_names else None
    if ref[0] == "name" and init is not None:
        for p in init.params:
            if p.name != ref[1]:
                continue
            if p.annotation:
                return instance_class(an, p.annotation, mod)
            if p.default is not None and p.default.ref is not None and \
                    p.default.ref[0] == "new" and not p.default.ref[2]:
                return instance_class(an, str(p.default.ref[1]), mod)
    return None


def _sets_model(mod: Module, cls: str) -> bool:
    """Does the class set its own model or client (``model = "gpt-4o-mini"`` in a subclass,
    ``self.llm = ...`` in its ``__init__``)? A base's method then reads this class's value,
    which the base's code (interpreted for the base) does not show."""
    prefix = f"{cls}."
    return any(n.startswith(prefix) and set(name_tokens(n[len(prefix):])) & _MODEL_TOKENS
               for n in mod.facts.constant_names)


_MODEL_TOKENS = frozenset({"model", "llm", "client", "engine", "lm", "chat"})


def _method(an: Analysis, mod: Module, cls: str, name: str, depth: int) -> str | None:
    if f"{cls}.{name}" in mod.facts.function_names:
        return f"{mod.name}.{cls}.{name}"
    bases = mod.facts.constants.get(f"{cls}.__bases__") if f"{cls}.__bases__" in \
        mod.facts.constant_names else None
    if bases is None or depth > 4:
        return None
    for base in bases.names:
        found = instance_class(an, base, mod)
        if found is not None:
            hit = _method(an, found[0], found[1], name, depth + 1)
            if hit is not None:
                return hit
    return None
