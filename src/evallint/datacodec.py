"""Plain-data encoding of evallint's own fact and finding objects, for the result cache.

The cache must never deserialise anything that can run code (``pickle`` can), so entries are
JSON. Every container is a tagged array (but the empty tuple, the commonest value of a code
tree, is ``[]``), so decoding is a walk over lists and strings that can only build:
str/int/float/bool/None, lists, tuples, sets, dicts, members of evallint's own enums,
instances of evallint's own dataclasses, and :class:`LazyMap` (string keys, each value a JSON
text decoded by the same rules when it is first read). A dataclass is built by its generated
``__init__`` when that only stores the fields, else as a bare instance with its fields set one
by one: no method the class defines itself (``__post_init__``, properties) runs. Anything
else in an entry (an unknown tag, a class outside the ``evallint`` package, a field count that
does not match, a JSON object, a segment out of bounds) raises :class:`CodecError`, which the
cache treats as a miss.

What stays encoded until it is read (a class's lazy fields, a lazy map's values) is not a JSON
string inside the entry but a *segment* after it: an entry is one line of JSON,
``[classes, body]`` or ``[classes, body, lengths]``, then a newline and the segments' bytes
end to end, ``lengths`` long; the body names a segment by its index. Reading an entry parses
that line only, and a segment is sliced out when its value is first read: most of a module's
entry is its code tree, which a run after an edit mostly never reads.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import operator
from collections.abc import Callable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from enum import Enum
from typing import Any

_PACKAGE = "evallint."
_MAX_DEPTH = 400  # deeper than any fact tree the front-ends build (their walks are bounded)


LAZY_ATTR = "_lazy_encoded"


class CodecError(ValueError):
    """The data is not an encoding this module wrote."""


_FIELDS: dict[type, tuple[str, ...]] = {}


_NO_DEFAULT = object()
_DEFAULTS: dict[type, tuple[Any, ...]] = {}


def _plain_defaults(cls: type) -> tuple[Any, ...]:
    """Each field's default, for leaving trailing defaults out of an encoding; the decoder's
    ``cls(*values)`` puts them back. A ``default_factory`` field's default is what its
    factory makes, when that is always the same (see :func:`_made_default`). A class whose
    ``__init__`` does more than store its fields has none: it is decoded field by field."""
    found = _DEFAULTS.get(cls)
    if found is None:
        fields = dataclasses.fields(cls)
        if not _plain_init(cls):
            found = (_NO_DEFAULT,) * len(fields)
        else:
            found = tuple(f.default if f.default is not dataclasses.MISSING
                          else _made_default(f.default_factory) for f in fields)
        _DEFAULTS[cls] = found
    return found


def _made_default(factory: Any) -> Any:
    """What ``factory()`` makes, when every call makes an equal value: an empty dict, list
    or set, or one of our plain dataclasses whose fields all have such defaults (empty
    ``{}`` or ``ModelInfo()``: the commonest values of a summary). Else no default."""
    if factory in (dict, list, set):
        return factory()
    if isinstance(factory, type) and dataclasses.is_dataclass(factory) and \
            factory.__module__.startswith(_PACKAGE) and _plain_init(factory) and \
            _NO_DEFAULT not in _plain_defaults(factory):
        return factory()
    return _NO_DEFAULT


def _is_default(value: Any, default: Any) -> bool:
    if default is _NO_DEFAULT:
        return False
    return value is default or (type(value) is type(default) and value == default)


DETACHED_ATTR = "_lazy_detached"  # a loader of a lazy part stored apart (see encode_parts)
DETACH_MIN = 1024  # a lazy part encoded in at least this many bytes is stored apart


def load_lazy(obj: Any, keep: bool = False) -> bool:
    """Decode the fields a class lists in ``__lazy_fields__`` (kept encoded by :func:`decode`
    until first use: a warm run whose project analysis is cached never needs them). False when
    ``obj`` holds no such encoding; CodecError when it is broken (it was authenticated, so that
    is a bug, not an attack). ``keep``: the encoding stays, to decode again after the fields
    are dropped. A part stored apart (:func:`encode_parts`) is read through the loader that
    :func:`attach` left on ``obj``."""
    blob = obj.__dict__.get(LAZY_ATTR) if keep else obj.__dict__.pop(LAZY_ATTR, None)
    names: tuple[str, ...] = type(obj).__lazy_fields__
    if blob is None:
        if DETACHED_ATTR not in obj.__dict__:
            return False
        load = obj.__dict__[DETACHED_ATTR]
        if load is None:
            raise CodecError(f"{type(obj).__name__}: its lazy part is stored apart, no loader")
        values = load()
    else:
        values = decode(blob)
    if not isinstance(values, tuple) or len(values) != len(names):
        raise CodecError(f"{type(obj).__name__}: bad lazy part")
    for name, value in zip(names, values, strict=True):
        object.__setattr__(obj, name, value)
    return True


def detached(obj: Any) -> bool:
    """Whether ``obj`` was decoded from an entry that left its lazy part out (see
    :func:`encode_parts`): its lazy fields can be read only once :func:`attach` gives it a
    loader."""
    state = getattr(obj, "__dict__", None)
    return state is not None and state.get(DETACHED_ATTR, False) is None


def attach(obj: Any, load: Callable[[], Any]) -> None:
    """Give a :func:`detached` object the loader of its lazy part: a call that returns the
    part's values (what :func:`decode` makes of the part :func:`encode_parts` set apart)."""
    obj.__dict__[DETACHED_ATTR] = load


def lazy_values(obj: Any) -> tuple[Any, ...]:
    """The values of ``obj``'s lazy fields (decoded if need be), as a loader returns them."""
    return tuple(getattr(obj, name) for name in type(obj).__lazy_fields__)


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls))
        _FIELDS[cls] = names
    return names


_SCALARS = (str, int, float, bool, type(None))


class _Items:
    """Marks a mapping to encode as a lazy map (a class's ``__lazy_maps__`` fields)."""

    __slots__ = ("mapping",)

    def __init__(self, mapping: Mapping[str, Any]) -> None:
        self.mapping = mapping


class LazyMap(Mapping[str, Any]):
    """A mapping read from the cache whose values stay JSON text until read, each decoded
    once: a module's functions, of which a solve after an edit runs a few (the others replay,
    see :mod:`evallint.pyflow.replay`). Its keys are known without decoding anything."""

    __slots__ = ("_blob", "_decoder", "_done", "_raw")

    def __init__(self, decoder: _Decoder, blob: bytes, raw: dict[str, tuple[int, int]]) -> None:
        self._decoder = decoder
        self._blob = blob
        self._raw = raw  # key -> where its value's JSON text is in ``blob``
        self._done: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        try:
            return self._done[key]
        except KeyError:
            pass
        start, end = self._raw[key]
        try:
            data = json.loads(self._blob[start:end], object_hook=_no_objects)
            value = self._decoder.dec(data) if type(data) is list else data
        except (ValueError, TypeError, RecursionError) as exc:  # CodecError is a ValueError
            raise CodecError(f"lazy map entry {key!r}: {exc}") from exc
        self._done[key] = value
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (dict(self.items()),)  # a plain dict for pickle (all decoded)


class _Encoder:
    """Encodes by exact type through a table of per-type handlers (built once per class), the
    hot path of writing the cache."""

    def __init__(self, detach: bool = False, canonical: bool = False) -> None:
        self.classes: list[str] = []
        # canonical: for a digest, not for decoding: equal values give equal bytes (a set's
        # members sorted, a class named rather than numbered by first use)
        self.canonical = canonical
        self.segments: list[bytes] = []
        self.detach = detach
        self.detached: list[bytes] = []  # lazy parts left out of the entry (encode_parts)
        self.index: dict[type, int] = {}
        enc = self.enc
        self.handlers: dict[type, Callable[[Any], Any]] = {
            list: lambda o: ["L", *map(enc, o)],
            tuple: lambda o: ["T", *map(enc, o)],
            frozenset: lambda o: ["F", *self._members(o)],
            set: lambda o: ["S", *self._members(o)],
            dict: self._dict,
            _Items: self._items,
        }

    def _members(self, obj: AbstractSet[Any]) -> list[Any]:
        """A set's members: in its own order (which depends on its history and the hash
        seed), or sorted by their encoding for a digest."""
        out = list(map(self.enc, obj))
        if self.canonical:
            out.sort(key=lambda x: json.dumps(x, separators=(",", ":"), ensure_ascii=False))
        return out

    def cls(self, cls: type) -> int | str:
        if self.canonical:
            return f"{cls.__module__}:{cls.__qualname__}"
        i = self.index.get(cls)
        if i is None:
            module = cls.__module__
            if not module.startswith(_PACKAGE):
                raise CodecError(f"{module}.{cls.__qualname__} is not an evallint type")
            i = self.index[cls] = len(self.classes)
            self.classes.append(f"{module}:{cls.__qualname__}")
        return i

    def _dict(self, obj: dict[Any, Any]) -> list[Any]:
        enc = self.enc
        flat: list[Any] = ["D"]
        for k, v in obj.items():
            flat.append(enc(k))
            flat.append(enc(v))
        return flat

    def segment(self, data: bytes) -> int:
        self.segments.append(data)
        return len(self.segments) - 1

    def _items(self, obj: _Items) -> list[Any]:
        """A mapping whose values are each kept as their own JSON text (over this encoding's
        class table, in a segment), decoded one by one when read: see :class:`LazyMap`."""
        flat: list[Any] = ["M"]
        for k, v in obj.mapping.items():
            if type(k) is not str:
                raise CodecError("a lazy map's keys are strings")
            flat.append(k)
            flat.append(self.segment(json.dumps(
                self.enc(v), separators=(",", ":"), ensure_ascii=False,
                allow_nan=False).encode("utf-8", "surrogatepass")))
        return flat

    def _handler(self, t: type) -> Callable[[Any], Any]:
        enc = self.enc
        if issubclass(t, Enum):  # str-valued enums are str subclasses: before the scalars
            i = self.cls(t)
            handler: Callable[[Any], Any] = lambda o: ["E", i, o.value]  # noqa: E731
        elif dataclasses.is_dataclass(t):
            i = self.cls(t)
            lazy: tuple[str, ...] = getattr(t, "__lazy_fields__", ())
            maps: tuple[str, ...] = getattr(t, "__lazy_maps__", ())
            names = [n for n in _field_names(t) if n not in lazy]
            if lazy:
                def handler(o: Any) -> Any:
                    inner = (canonical if self.canonical else encode)(tuple(
                        _Items(getattr(o, n)) if n in maps else getattr(o, n) for n in lazy))
                    if self.detach and len(inner) >= DETACH_MIN:
                        self.detached.append(inner)
                        return ["C", i, *[enc(getattr(o, n)) for n in names], None]
                    return ["C", i, *[enc(getattr(o, n)) for n in names], self.segment(inner)]
            else:
                defaults = _plain_defaults(t)
                fields = operator.attrgetter(*names) if len(names) > 1 else None
                only = names[0] if names else ""

                def handler(o: Any) -> Any:
                    raw = fields(o) if fields is not None else (
                        (getattr(o, only),) if only else ())
                    k = len(raw)  # trailing fields at their defaults are left out
                    while k and _is_default(raw[k - 1], defaults[k - 1]):
                        k -= 1
                    return ["C", i, *map(enc, raw[:k])]
        elif issubclass(t, _SCALARS) or t in self.handlers:
            raise CodecError(f"cannot encode a subclass {t.__name__}")
        else:
            raise CodecError(f"cannot encode a {t.__name__}")
        self.handlers[t] = handler
        return handler

    def enc(self, obj: Any) -> Any:
        t = type(obj)
        if t is str or t is int or t is bool or t is float or obj is None:
            return obj
        if t is tuple and not obj:  # the most common value of an IR field: decoded in place
            return []
        handler = self.handlers.get(t)
        if handler is None:
            handler = self._handler(t)
        return handler(obj)


def encode(obj: Any) -> bytes:
    """``obj`` as JSON bytes; CodecError for anything that is not evallint plain data."""
    return _encode(_Encoder(), obj)


def canonical(obj: Any) -> bytes:
    """Bytes that are equal for equal values (not decodable): what a digest of state reads.
    :func:`encode` writes a set's members in iteration order, which differs between two equal
    sets built in different orders (one decoded from the cache, say)."""
    return _encode(_Encoder(canonical=True), obj)


def encode_parts(obj: Any) -> tuple[bytes, list[bytes]]:
    """``obj`` encoded without its large lazy parts (a module's code tree), and those parts,
    each an encoding of its own: an entry that is read often need not carry (nor have its
    reader authenticate) what is decoded rarely. :func:`decode` leaves such an object
    :func:`detached`."""
    enc = _Encoder(detach=True)
    return _encode(enc, obj), enc.detached


def _encode(enc: _Encoder, obj: Any) -> bytes:
    try:
        body = enc.enc(obj)
        head: list[Any] = [enc.classes, body]
        if enc.segments:
            head.append([len(seg) for seg in enc.segments])
        text = json.dumps(head, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (ValueError, RecursionError) as exc:  # NaN, absurd nesting
        raise CodecError(str(exc)) from exc
    line = text.encode("utf-8", "surrogatepass")  # no newline: JSON escapes it in strings
    return line if not enc.segments else b"\n".join((line, b"".join(enc.segments)))


def _resolve(name: Any) -> type:
    if not isinstance(name, str) or ":" not in name:
        raise CodecError("bad class reference")
    module_name, _, qualname = name.partition(":")
    if not module_name.startswith(_PACKAGE) or "." in qualname:
        raise CodecError(f"class {name} is not allowed")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CodecError(f"no module {module_name}") from exc
    cls = getattr(module, qualname, None)
    if not isinstance(cls, type) or cls.__module__ != module_name:
        raise CodecError(f"no class {name}")
    if not (dataclasses.is_dataclass(cls) or issubclass(cls, Enum)):
        raise CodecError(f"{name} is neither a dataclass nor an enum")
    return cls


def _plain_init(cls: type) -> bool:
    """Whether ``cls(*values)`` only stores its fields: a dataclass-generated ``__init__`` over
    every field, no ``__post_init__``, no lazy part. Then construction is one call (the hot path
    of reading the cache); otherwise fields are set one by one on a bare instance."""
    params = getattr(cls, "__dataclass_params__", None)
    return (params is not None and params.init and not hasattr(cls, "__post_init__")
            and not getattr(cls, "__lazy_fields__", ())
            and all(f.init for f in dataclasses.fields(cls)))


# Class references already checked by ``_resolve`` (each with ``_plain_init``): a warm run
# decodes a thousand entries that name the same few dozen classes.
_RESOLVED: dict[str, tuple[type, bool]] = {}


def _resolved(name: Any) -> tuple[type, bool]:
    hit = _RESOLVED.get(name) if isinstance(name, str) else None
    if hit is None:
        cls = _resolve(name)
        hit = cls, _plain_init(cls) if dataclasses.is_dataclass(cls) else False
        _RESOLVED[name] = hit
    return hit


class _Decoder:
    def __init__(self, classes: Any) -> None:
        if not isinstance(classes, list):
            raise CodecError("bad class table")
        found = [_resolved(c) for c in classes]
        self.classes = [c for c, _ in found]
        self.plain = [p for _, p in found]
        # for a plain class, how many values it takes at most (-1: built field by field)
        self.arity = [len(_field_names(c)) if p else -1 for c, p in found]
        # the segments of the entry being decoded (see :func:`decode`)
        self.blob = b""
        self.spans: list[tuple[int, int]] = []

    def span(self, i: Any) -> tuple[int, int]:
        if type(i) is not int or not 0 <= i < len(self.spans):
            raise CodecError("bad segment index")
        return self.spans[i]

    def cls(self, i: Any) -> int:
        if type(i) is not int or not 0 <= i < len(self.classes):
            raise CodecError("bad class index")
        return i

    def dec(self, data: Any, depth: int = 0) -> Any:
        """``data`` is a list (scalars never reach here: callers pass them through)."""
        if depth > _MAX_DEPTH:
            raise CodecError("too deeply nested")
        if not data:
            return ()  # the empty tuple (the walk above takes it in place)
        if type(data[0]) is not str:
            raise CodecError("untagged array")
        tag = data[0]
        d = depth + 1
        dec = self.dec
        if tag == "C" and len(data) >= 2:
            i = data[1]
            if type(i) is not int or not 0 <= i < len(self.classes):
                raise CodecError("bad class index")
            cls = self.classes[i]
            values = [x if type(x) is not list else dec(x, d) if x else () for x in data[2:]]
            arity = self.arity[i]
            if arity >= 0:  # a plain class: trailing fields left out take their defaults
                if len(values) > arity:
                    raise CodecError(f"{cls.__name__}: {len(values)} values for {arity} fields")
                return cls(*values)
            return self._build(cls, values, data)
        if tag == "T":
            if len(data) == 1:
                return ()
            return tuple([x if type(x) is not list else dec(x, d) if x else () for x in data[1:]])
        if tag == "L":
            return [x if type(x) is not list else dec(x, d) if x else () for x in data[1:]]
        if tag == "D":
            if len(data) % 2 != 1:
                raise CodecError("odd dict")
            flat = [x if type(x) is not list else dec(x, d) if x else () for x in data[1:]]
            it = iter(flat)
            return dict(zip(it, it, strict=True))
        if tag == "F":
            return frozenset([x if type(x) is not list else dec(x, d) if x else ()
                              for x in data[1:]])
        if tag == "S":
            return {x if type(x) is not list else dec(x, d) if x else () for x in data[1:]}
        if tag == "M":
            if len(data) % 2 != 1 or not all(type(x) is str for x in data[1::2]):
                raise CodecError("bad lazy map")
            keys: list[str] = data[1::2]
            return LazyMap(self, self.blob,
                           dict(zip(keys, map(self.span, data[2::2]), strict=True)))
        if tag == "E" and len(data) == 3:
            cls = self.classes[self.cls(data[1])]
            if not issubclass(cls, Enum):
                raise CodecError("not an enum")
            member = cls._value2member_map_.get(data[2]) if type(data[2]) is str else None
            if member is not None:  # (the members by value: no call of the enum class)
                return member
            try:
                return cls(data[2])
            except ValueError as exc:
                raise CodecError(str(exc)) from exc
        raise CodecError(f"unknown tag {tag!r}")

    def _build(self, cls: type, values: list[Any], data: list[Any]) -> Any:
        """A dataclass whose ``__init__`` does more than store fields, or with a lazy part:
        a bare instance with its fields set one by one (none of its methods runs)."""
        shape = _SHAPES.get(cls)
        if shape is None:
            if not dataclasses.is_dataclass(cls):
                raise CodecError("not a dataclass")
            lazy_names: tuple[str, ...] = getattr(cls, "__lazy_fields__", ())
            shape = _SHAPES[cls] = (
                tuple(n for n in _field_names(cls) if n not in lazy_names), bool(lazy_names),
                hasattr(object.__new__(cls), "__dict__"))
        names, lazy, has_dict = shape
        start = end = -1
        if lazy:
            if not values or not (type(data[-1]) is int or data[-1] is None):
                raise CodecError(f"{cls.__name__}: no lazy part")
            if data[-1] is not None:  # else stored apart: see encode_parts
                start, end = self.span(data[-1])
            values = values[:-1]
        if len(values) != len(names):
            raise CodecError(f"{cls.__name__}: {len(values)} values for {len(names)} fields")
        obj: Any = object.__new__(cls)
        if has_dict:  # what object.__setattr__ would do for each field, in one call
            obj.__dict__.update(zip(names, values, strict=True))
        else:
            for name, value in zip(names, values, strict=True):
                object.__setattr__(obj, name, value)
        if lazy:
            if start < 0:
                obj.__dict__[DETACHED_ATTR] = None  # no loader yet: see attach
            else:
                obj.__dict__[LAZY_ATTR] = self.blob[start:end]
        return obj


# Per class built field by field: its eagerly encoded fields, whether it has a lazy part, and
# whether its instances keep their fields in a ``__dict__`` (not slots).
_SHAPES: dict[type, tuple[tuple[str, ...], bool, bool]] = {}

# Decoders by class table: the entries of a run name the same few tables again and again.
_DECODERS: dict[tuple[Any, ...], _Decoder] = {}


def _decoder(classes: Any) -> _Decoder:
    if not isinstance(classes, list):
        raise CodecError("bad class table")
    key = tuple(classes)  # unhashable members (a nested list): TypeError, a CodecError
    found = _DECODERS.get(key)
    if found is None:
        found = _Decoder(classes)
        if len(_DECODERS) < 1024:
            _DECODERS[key] = found
    return found


def _no_objects(pairs: Any) -> Any:
    raise CodecError("JSON object in an evallint encoding")


def decode(blob: bytes) -> Any:
    """The object :func:`encode` made; CodecError for anything else (never runs code)."""
    blob = bytes(blob)
    cut = blob.find(b"\n")
    line = blob if cut == -1 else blob[:cut]
    try:
        top = json.loads(line.decode("utf-8", "surrogatepass"), object_hook=_no_objects)
    except (ValueError, RecursionError) as exc:
        raise CodecError(f"not JSON: {exc}") from exc
    if not isinstance(top, list) or len(top) != (2 if cut == -1 else 3):
        raise CodecError("not an evallint encoding")
    spans: list[tuple[int, int]] = []
    if cut != -1:
        lengths = top[2]
        if not isinstance(lengths, list) or not all(type(n) is int and n >= 0 for n in lengths):
            raise CodecError("bad segment lengths")
        at = cut + 1
        for n in lengths:
            spans.append((at, at + n))
            at += n
        if at != len(blob):
            raise CodecError("segments do not fill the entry")
    body = top[1]
    if type(body) is not list:
        return body
    try:
        decoder = _decoder(top[0])
        saved = decoder.blob, decoder.spans
        decoder.blob, decoder.spans = blob, spans
        try:
            return decoder.dec(body)
        finally:
            decoder.blob, decoder.spans = saved
    except (TypeError, ValueError, RecursionError) as exc:  # unhashable keys, bad arity, nesting
        raise CodecError(str(exc)) from exc
