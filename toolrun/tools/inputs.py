"""The built-in tools' inputs without pydantic on the common path.

A built-in tool's validated input is a frozen slots object (:class:`Params`) with the
field names its pydantic model has, so the tool's code reads ``input.command`` either way.
Each tool declares its fields once (:class:`InputSpec`): a fast validator takes an input
only when it can tell that pydantic would take it *unchanged* (exact types, bounds,
choices, no unknown or doubled keys, every required key there). Anything else, a lax
coercion pydantic would make as much as an error, goes to the pydantic model, whose
answer (or whose error, messages and locations) is kept and converted to the same
object. Importing pydantic costs about 50 ms, most of a one-call run's start-up; the
models stay the authority on the JSON schemas and on every message.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from toolrun.dataclass_code import exec_generated
from toolrun.dataclass_init import slots_twin
from toolrun.validation import validate

if TYPE_CHECKING:
    from pydantic import BaseModel

    from toolrun.tools.base import Tool

#: The largest int taken without pydantic: beyond 64 bits it is pydantic's to judge.
_INT_LIMIT = 1 << 63
_MISSING: Any = object()  # what a check gives for a value only pydantic can judge
_REQUIRED: Any = object()  # a field without a default; a key not in the input
_MODELS = "toolrun.tools.builtins._models"


class Params:
    """Base of the built-in tools' validated inputs (frozen slots dataclasses)."""

    __slots__ = ()


P = TypeVar("P", bound=Params)
#: a check gives the value as the params object holds it, or _MISSING (defer to pydantic)
Check = Callable[[object], object]


#: A check's test as Python source, for the validator :class:`InputSpec` compiles: given
#: the value's variable and a way to name a constant, a condition that holds exactly when
#: the check takes the value unchanged (a check without one is called instead)
Inline = Callable[[str, Callable[[object], str]], str]
_INLINE: dict[Check, Inline] = {}


def string(value: object) -> object:
    return value if type(value) is str else _MISSING


def boolean(value: object) -> object:
    return value if type(value) is bool else _MISSING


_INLINE[string] = lambda v, const: f"type({v}) is str"
_INLINE[boolean] = lambda v, const: f"type({v}) is bool"


def optional(check: Check) -> Check:
    def check_optional(value: object) -> object:
        return None if value is None else check(value)

    inner = _INLINE.get(check)
    if inner is not None:
        _INLINE[check_optional] = lambda v, const: f"{v} is None or ({inner(v, const)})"
    return check_optional


def integer(*, ge: int | None = None, le: int | None = None) -> Check:
    """An int (never a bool: pydantic would take True as 1) within the bounds."""
    low = -_INT_LIMIT if ge is None else ge
    high = _INT_LIMIT - 1 if le is None else le

    def check_int(value: object) -> object:
        if type(value) is int and low <= value <= high:
            return value
        return _MISSING

    _INLINE[check_int] = lambda v, const: f"type({v}) is int and {low!r} <= {v} <= {high!r}"
    return check_int


def choice(*choices: str) -> Check:
    def check_choice(value: object) -> object:
        return value if type(value) is str and value in choices else _MISSING

    _INLINE[check_choice] = lambda v, const: f"type({v}) is str and {v} in {const(choices)}"
    return check_choice


def items(check: Check, *, min_length: int = 0) -> Check:
    """A list whose every item passes ``check``: held as a tuple."""

    def check_items(value: object) -> object:
        if type(value) is not list or len(value) < min_length:
            return _MISSING
        out = tuple(check(item) for item in value)
        return _MISSING if any(item is _MISSING for item in out) else out

    return check_items


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One input field: its check, the other keys (aliases) it is also written as, and
    for a list of nested models the Params class each item becomes."""

    check: Check
    aliases: tuple[str, ...] = ()
    nested: type[Params] | None = None


class InputSpec:
    """How one tool's input is validated: ``params`` (a Params dataclass) built from
    ``fields`` (by attribute name: a check, or a :class:`FieldSpec` for aliases and
    nesting), with ``model`` (the class name in :mod:`toolrun.tools.builtins._models`,
    or ``module:Class``) as the authority."""

    def __init__(self, params: type[Params], model: str, **fields: Check | FieldSpec) -> None:
        self.params = params
        self.model_target = model if ":" in model else f"{_MODELS}:{model}"
        self.fields = {
            name: spec if isinstance(spec, FieldSpec) else FieldSpec(spec)
            for name, spec in fields.items()
        }
        defaults: dict[str, Any] = {}
        for f in dataclasses.fields(cast("Any", params)):
            if f.default is not dataclasses.MISSING:
                defaults[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                defaults[f.name] = f.default_factory()
        self.defaults = defaults
        # key as written -> attribute name (each key of a field, aliases first)
        self.keys: dict[str, str] = {}
        for name, spec in self.fields.items():
            for key in (*spec.aliases, name):
                self.keys[key] = name
        self._model: type[BaseModel] | None = None
        #: ``data`` as pydantic would validate it, or None when only pydantic can tell: a
        #: function written for this spec, compiled on first use (:meth:`compiled`)
        self.fast: Callable[[object], Params | None] = self._compile_first
        self._compiled: Callable[[object], Params | None] | None = None
        _SPECS[params] = self

    @property
    def model(self) -> type[BaseModel]:
        """The pydantic model (imported on first use)."""
        if self._model is None:
            module, attr = self.model_target.split(":")
            self._model = getattr(importlib.import_module(module), attr)
        assert self._model is not None
        return self._model

    def _compile_first(self, data: object) -> Params | None:
        return self.compiled()(data)

    def compiled(self) -> Callable[[object], Params | None]:
        """:attr:`fast` itself, compiled now if it was not (for a caller that keeps it)."""
        if self._compiled is None:
            self._compiled = self.fast = _compile_fast(self)
        return self._compiled

    def check(self, value: object) -> object:
        """:meth:`fast` as a field check (a nested model's item)."""
        found = self.fast(value)
        return _MISSING if found is None else found

    def replaced(self, params: Params, update: Mapping[str, object]) -> Params:
        """``params`` with some fields set to values of their own type (a rebased path)."""
        return cast("Params", dataclasses.replace(cast("Any", params), **update))

    def from_model(self, model: BaseModel) -> Params:
        """The params object of a validated pydantic model (lists as tuples)."""
        values: dict[str, object] = {}
        for name, spec in self.fields.items():
            value = getattr(model, name)
            if isinstance(value, list):
                nested = spec.nested
                value = tuple(_copied(nested, v) for v in value) if nested else tuple(value)
            values[name] = value
        return self.params(**values)

    def validate(self, data: object) -> Params:
        """The params of ``data``; :class:`toolrun.validation.Invalid` when not valid."""
        found = self.fast(data)
        if found is not None:
            return found
        return self.from_model(validate(self.model, data))


def _compile_fast(spec: InputSpec) -> Callable[[object], Params | None]:
    """``spec``'s fast validator written out for it, as ``@dataclass`` writes an
    ``__init__``: each key looked up, each check inline (or called, for lists and nested
    models) and each field set, without a loop or a call per field (a generic loop over
    the fields was most of the cost of loading a big plan's calls). None for an unknown
    key, a field written twice (by its name and an alias), a missing required key or a
    value its check would not take unchanged: pydantic's to judge."""
    env: dict[str, object] = {
        "_R": _REQUIRED,
        "_M": _MISSING,
        "_new": object.__new__,
        "_params": spec.params,
        "_keys": frozenset(spec.keys),
    }

    def const(value: object) -> str:
        name = f"_c{len(env)}"
        env[name] = value
        return name

    lines = ["def fast(data):", "    if type(data) is not dict or not _keys.issuperset(data):"]
    lines += ["        return None", "    left = len(data)"]
    for i, (name, field) in enumerate(spec.fields.items()):
        v = f"v{i}"
        inline = _INLINE.get(field.check)
        if inline is not None:
            bad = f"not ({inline(v, const)})"
        else:
            bad = f"({v} := {const(field.check)}({v})) is _M"
        default = spec.defaults.get(name, _REQUIRED)
        # ``left``: the input's keys not yet taken; at 0 the other fields are defaults,
        # without looking each of their keys up (an input names few of a tool's fields)
        block = [f"{v} = data.get({name!r}, _R)"]
        for alias in field.aliases:
            block += [f"a = data.get({alias!r}, _R)", "if a is not _R:"]
            block += [f"    if {v} is not _R:", "        return None", f"    {v} = a"]
        if default is _REQUIRED:
            block += [f"if {v} is _R or {bad}:", "    return None", "left -= 1"]
            lines += [f"    {b}" for b in block]
            continue
        default_name = const(default)
        block += [f"if {v} is _R:", f"    {v} = {default_name}", f"elif {bad}:"]
        block += ["    return None", "else:", "    left -= 1"]
        lines += ["    if left:", *(f"        {b}" for b in block), "    else:"]
        lines.append(f"        {v} = {default_name}")
    # (a frozen dataclass's __init__ sets fields through object.__setattr__, which cost
    # more than the whole validation: the params are made as their slots twin instead)
    twin = slots_twin(spec.params)
    if twin is None:  # pragma: no cover - each slot's own setter
        lines.append("    p = _new(_params)")
        lines += [
            f"    {const(getattr(spec.params, name).__set__)}(p, v{i})"
            for i, name in enumerate(spec.fields)
        ]
    else:
        lines.append(f"    p = _new({const(twin)})")
        lines += [f"    p.{name} = v{i}" for i, name in enumerate(spec.fields)]
        lines.append("    p.__class__ = _params")
    lines.append("    return p")
    namespace: dict[str, Any] = {}
    # (from the spec's field names and keys, as literals, and its constants, by name)
    exec_generated("\n".join(lines) + "\n", env, namespace)
    fast: Callable[[object], Params | None] = namespace["fast"]
    fast.__qualname__ = f"InputSpec.fast.<{spec.params.__name__}>"
    return fast


#: each Params class's spec
_SPECS: dict[type[Params], InputSpec] = {}


def spec_of(params: Params) -> InputSpec:
    """The spec ``params`` was validated by."""
    return _SPECS[type(params)]


def _copied(cls: type[Params], model: object) -> Params:
    return cls(**{f.name: getattr(model, f.name) for f in dataclasses.fields(cast("Any", cls))})


def validate_input(tool: Tool[Any], data: Mapping[str, Any]) -> Params | BaseModel:
    """A call's validated input: a built-in tool's :class:`Params`, another tool's model
    instance. :class:`toolrun.validation.Invalid` when the input is not valid."""
    spec: InputSpec | None = getattr(tool, "input_spec", None)
    if spec is not None:
        return spec.validate(data)
    return validate(tool.input_model, data)


def as_dict(params: Params | BaseModel) -> dict[str, Any]:
    """The fields of a validated input by name (as ``model_dump()`` gives them)."""
    if isinstance(params, Params):
        return {
            f.name: _plain(getattr(params, f.name)) for f in dataclasses.fields(cast("Any", params))
        }
    return params.model_dump()


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Params):
        return as_dict(value)
    return value


class LazyModel:
    """A tool's ``input_model`` that is its spec's pydantic model, imported on first access
    (set by :class:`toolrun.tools.base.BaseTool` for a tool with an ``input_spec``)."""

    def __init__(self, spec: InputSpec) -> None:
        self.spec = spec

    def __get__(self, obj: object, owner: type | None = None) -> type[BaseModel]:
        return self.spec.model


def pydantic_models(*names: str) -> Callable[[str], Any]:
    """A tool module's ``__getattr__`` giving its pydantic input models (``names``) from
    :mod:`toolrun.tools.builtins._models`, which is imported on first use."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module has no attribute {name!r}")
        return getattr(importlib.import_module(_MODELS), name)

    return __getattr__
