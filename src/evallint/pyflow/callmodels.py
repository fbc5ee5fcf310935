"""Which model an LLM call runs on and which tools it is given: a literal, a constant, a
parameter forwarded by a helper, or a symbolic name when nothing resolves it (EL301, EL401).

The functions here take the interpreter (:class:`evallint.pyflow.interp.Interp`) as their first
argument.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from evallint.pyflow import instances
from evallint.pyflow.ir import CallIR, Ref, Val
from evallint.pyflow.providers import CAT, model_value, qualify
from evallint.pyflow.results import SYMBOLIC, where
from evallint.pyflow.summaries import Origin, Summary

if TYPE_CHECKING:
    from evallint.pyflow.interp import Interp


_UNRESOLVED = "not resolved to a model name; "
_ONE_VARIABLE = _UNRESOLVED + "one variable picks the model of both calls"


def symbolic_model(it: Interp, val: Val | None) -> tuple[str | None, str]:
    """A model that resolves to no name but is one variable: two calls whose model is
    the same parameter, local or attribute run on the same model, whatever it is
    (``generate(task, model=model)`` and ``judge(draft, model=model)``)."""
    if val is None:
        return None, ""
    ref = it.local_ref(val.ref)
    if ref is not None and ref[0] == "each" and len(val.names) == 1:
        ref = ("name", val.names[0])  # a loop's variable whose list gives no model names
    if ref is not None and ref[0] == "fmt":  # f"openai/{model}": one variable, the same text
        inner, how = symbolic_model(it, Val(names=val.names, ref=ref[2]))
        if inner is None:
            return None, ""
        return f"{SYMBOLIC}{ref[1]}{{{inner[len(SYMBOLIC):]}}}{ref[3]}", how
    inst = (ref, it.mod, "") if ref is not None and ref[0] == "new" else None
    if ref is not None and ref[0] == "name":
        inst = instances.as_instance(it.an, ref, it.mod)
    if inst is not None:
        found = instances.instance_attr(it.an, inst[0], inst[1])
        if found is None:
            return None, ""
        # an instance made with arguments is itself the one value: name it, not its class
        field = found[1] if inst[0][0] == "new" else f"{inst[2]}.{inst[0][2]!s}"
        return (f"{SYMBOLIC}{field} in {inst[1].name if inst[0][0] == 'made' else found[0].name}",
                _UNRESOLVED + "one settings field picks the model of both calls")
    if ref is not None and ref[0] == "name":
        ref = _module_constant(it, ref)
    if ref is not None and ref[0] == "env" and ref[2] is None:
        return (f"{SYMBOLIC}${ref[1]}",
                _UNRESOLVED + "one environment variable picks the model of both calls")
    if ref is not None and ref[0] == "const":  # another module's constant, by its home
        return f"{SYMBOLIC}{ref[1]} in {ref[2]}", _ONE_VARIABLE
    if val.calls or len(val.names) != 1:
        return None, ""
    if ref is None or ref[0] not in ("param", "name"):
        return None, ""
    if ref[0] == "param":  # (a field of a parameter: ``opts.judgeModel``, not all of ``opts``)
        name, scope = it.fn.params[int(ref[1])].name, f"{it.fn.name}()"
        if len(ref) > 2 and ref[2]:
            name = f"{name}.{ref[2]}"
    else:
        name = str(ref[1])
        root = name.split(".")[0]
        if root in ("self", "cls") and it.fn.cls and "." in name:
            name, scope = f"{it.fn.cls}.{name.split('.', 1)[1]}", it.mod.name
        elif root in it.fn.locals or root in {p.name for p in it.fn.params}:
            scope = f"{it.fn.name}()"
        else:
            scope = it.mod.name
    return f"{SYMBOLIC}{name} in {scope}", _ONE_VARIABLE


def _module_constant(it: Interp, ref: Ref) -> Ref:
    """A module-level name read here that is a constant of this module or imported from
    another (``from app.config import MODEL``), as what it is made of when that is an
    environment variable with no default, else as ``("const", name, its module)``: calls in
    two modules that read one such constant run on one model."""
    path = str(ref[1])
    root, _, rest = path.partition(".")
    if root in it.fn.locals or root in ("self", "cls") or \
            root in {p.name for p in it.fn.params}:
        return ref
    facts = it.mod.facts
    home, name = it.mod, path
    if path not in facts.constant_names and root in facts.imports:
        found = it.an.tables.constant(f"{facts.imports[root]}.{rest}" if rest
                                      else facts.imports[root], it.path)
        if found is None:
            return ref
        home, name = found
    elif path not in facts.constant_names:
        return ref
    own = home.facts.constants[name].ref
    if own is not None and own[0] == "env" and own[2] is None:
        return own
    return ("const", name, home.name) if home is not it.mod else ref


def forwarded_model(it: Interp, c: CallIR) -> None:
    """``create(**kwargs)`` with this function's own ``**kwargs``: the caller's
    ``model=`` keyword picks the model (see ``llmcalls.user_call``)."""
    stars = {p.name: i for i, p in enumerate(it.fn.params) if p.star}
    plain = {p.name: i for i, p in enumerate(it.fn.params) if not p.star}
    for v in c.args:
        if len(v.names) == 1 and v.names[0] in stars and not v.calls:
            it.summary.model.param = stars[v.names[0]]
            return
        if len(v.names) == 1 and v.names[0] in plain and not v.calls and \
                it.local_ref(v.ref) == ("param", plain[v.names[0]]):
            # ``create(**request)`` with the request a parameter: its model field
            model_param(it, plain[v.names[0]], "model")
            return


def field_of(val: Val, path: str) -> Val | None:
    """The value at ``path`` of a dict or object literal (``{model: ..., messages: ...}``)."""
    for part in path.split("."):
        val_at = next((v for k, v in val.keys if k == part), None)
        if val_at is None:
            return None
        val = val_at
    return val


def field_model(it: Interp, given: Val, path: str) -> tuple[str | None, str]:
    """The model at ``path`` of a settings value given to a helper or a factory: the object
    literal's field (``ask({model: "gpt-4o", ...})``), else that field of what the value
    names (this function's own parameter: of its default, when it has one)."""
    held = field_of(given, path)
    if held is not None:
        return model_of_val(it, held)
    ref = with_path(given.ref, path)
    if ref is not None and ref[0] == "param":
        p = it.fn.params[int(ref[1])]
        ref = with_path(p.default.ref, str(ref[2])) if p.default is not None else None
    return it.an.resolve_ref(ref, it.mod, it.fn.cls) if ref is not None else (None, "")


def model_param(it: Interp, idx: int, path: str = "",
                inherited: tuple[str | None, str] = (None, "")) -> None:
    """This function's parameter ``idx`` (its field ``path``, when it is a settings object)
    picks the model; remember its default. ``inherited``: the default of the helper it hands
    the parameter to (``askJson(prompt, opts = {})`` passing ``opts`` on to a helper whose
    ``const {model = "gemini-2.5-flash"} = opts``): a field left out here is left out there."""
    it.summary.model.param = idx
    it.summary.model.path = path
    p = it.fn.params[idx]
    d: str | None = None
    if p.default is not None:
        d, how = it.an.resolve_ref(with_path(p.default.ref, path), it.mod, it.fn.cls)
        it.summary.model.default = d
        it.summary.model.default_where = (
            f"default of `{p.name}` in `{it.fn.name}()` "
            f"({where(it.path, it.fn.pos)})" + (f", {how}" if how else ""))
    if d is None and path and inherited[0] is not None:
        it.summary.model.default, it.summary.model.default_where = inherited


def passed_on(it: Interp, s: Summary, given: Val) -> bool:
    """What this function hands the parameter of helper ``s`` that picks its model is its own
    parameter (or that parameter's field, also as an options literal's field: ``{...rest,
    model}`` where ``model`` came out of its own options): its callers pick the model, and
    a field they leave out takes the helper's default. True when so (noted in the summary)."""
    held = field_of(given, s.model.path) if s.model.path else None
    ref = it.local_ref(held.ref) if held is not None else \
        with_path(it.local_ref(given.ref), s.model.path)
    if ref is None or ref[0] != "param":
        return False
    model_param(it, int(ref[1]), ref[2] if len(ref) > 2 else "",
                (s.model.default, s.model.default_where) if s.model.path else (None, ""))
    return True


def param_model(it: Interp, ctor: Origin) -> bool:
    """A model object this function builds on its parameter (``getGenerativeModel({model})``
    where ``const {model = "gemini-2.5-flash"} = opts``): the parameter picks the model of the
    run, as for an SDK call given it, so a caller's value wins over the default. Noted in the
    summary; True when so (the run then fixes no model of its own)."""
    if ctor.key[:2] != (it.path, it.fn.name) or ctor.key[2] >= len(it.fn.calls):
        return False
    made = it.fn.calls[ctor.key[2]]
    row = CAT.object_row(qualify(made.func, it.mod.facts.imports))
    val = model_value(row.model if row is not None else None, made)
    ref = it.local_ref(val.ref) if val is not None else None
    fallback = None
    if ref is not None and ref[0] == "or":
        ref, fallback = ref[1], ref[2]
    if ref is None or ref[0] != "param":
        return False
    model_param(it, int(ref[1]), str(ref[2]) if len(ref) > 2 else "")
    if fallback is not None and fallback[0] == "lit" and it.summary.model.default is None:
        it.summary.model.default = str(fallback[1])
        it.summary.model.default_where = (
            f"the default in `{it.fn.name}()` ({where(it.path, made.pos)})")
    return True


def const_tools(it: Interp, val: Val | None) -> tuple[str, ...]:
    if val is None:
        return ()
    out: list[str] = []
    for n in val.names:
        v = it.mod.facts.constants.get(n)
        if v is not None:
            out.extend(v.tool_names)
    return tuple(out)


def model_of_val(it: Interp, val: Val | None) -> tuple[str | None, str]:
    if val is None:
        return None, ""
    ref = it.local_ref(val.ref)
    return it.an.resolve_ref(ref, it.mod, it.fn.cls)


def with_path(ref: Ref | None, path: str) -> Ref | None:
    """The ref of field ``path`` of what ``ref`` names (``DEFAULT_CONFIG`` ->
    ``DEFAULT_CONFIG.models.judge``); None when it cannot be said."""
    if not path or ref is None:
        return ref
    if ref[0] == "spread":  # a field the literal leaves to the mapping it spreads
        return with_path(ref[1], path)
    if ref[0] == "name":
        return ("name", f"{ref[1]}.{path}")
    if ref[0] == "new":
        return ("new", ref[1], f"{ref[2]}.{path}" if ref[2] else path)
    if ref[0] == "param":
        return ("param", ref[1], f"{ref[2]}.{path}" if len(ref) > 2 and ref[2] else path)
    return None


def helper_model(it: Interp, s: Summary, vals: dict[int, Val]) -> tuple[str | None, str]:
    m = s.model
    if m.param is not None and m.param in vals:
        given = vals[m.param]
        if m.path:  # the field of the settings object passed
            if given.keys and m.default is not None and "." not in m.path and \
                    m.path not in {k for k, _ in given.keys} and \
                    not (given.ref is not None and given.ref[0] == "spread"):
                return m.default, m.default_where  # an options literal that leaves it out
            return field_model(it, replace(given, ref=it.local_ref(given.ref)), m.path)
        value, how = model_of_val(it, given)
        return value, how
    if m.param is not None and m.default is not None:
        return m.default, m.default_where
    return m.fixed, m.fixed_where
