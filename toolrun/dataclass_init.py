"""A cheaper ``__init__`` for the frozen dataclasses built once per call (a plan's calls, a
decision's parts, what a result read and wrote).

A frozen dataclass sets each field through ``object.__setattr__`` (looked up and called
by name for every field): about a tenth of a new call's decision went there. The
``__init__`` made here has the same signature, defaults and ``__post_init__``, and
writes each field straight into its slot (or the instance dict); everything else of
the dataclass stays as it was (frozen, equality, hash, repr, ``replace``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from toolrun.dataclass_code import exec_generated

T = TypeVar("T")


def fast_init(cls: type[T]) -> type[T]:
    """Give the frozen dataclass ``cls`` the direct-writing ``__init__`` (a class decorator,
    applied over ``@dataclass``).

    A slots class is filled as its :func:`slots_twin` (plain attribute stores, then the
    class switched back: about 30% less than a slot setter's call a field, for the dozen
    of them a decision makes); an instance of a subclass, whose layout may differ, through
    each slot's setter."""
    env: dict[str, Any] = {"_MISSING": dataclasses.MISSING}
    params: list[str] = []
    prelude: list[str] = []  # (defaults made for the fields that asked for a factory)
    body: list[str] = []  # the stores, through each slot's setter (or the instance dict)
    stores: list[str] = []  # the same stores, as plain attribute stores (into the twin)
    slots = "__slots__" in cls.__dict__
    if not slots:
        body.append("d = self.__dict__")
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.kw_only:
            raise TypeError(f"fast_init does not handle the field {cls.__name__}.{f.name}")
        name = f.name
        if not f.init:
            if f.default_factory is not dataclasses.MISSING or not slots:
                raise TypeError(f"fast_init does not handle the field {cls.__name__}.{name}")
            if f.default is not dataclasses.MISSING:  # (a cache: set to its default)
                env[f"_default_{name}"] = f.default
                env[f"_set_{name}"] = getattr(cls, name).__set__
                body.append(f"_set_{name}(self, _default_{name})")
                stores.append(f"self.{name} = _default_{name}")
            continue  # (else set by __post_init__)
        if f.default is not dataclasses.MISSING:
            env[f"_default_{name}"] = f.default
            params.append(f"{name}=_default_{name}")
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_factory_{name}"] = f.default_factory
            params.append(f"{name}=_MISSING")
            prelude.append(f"if {name} is _MISSING: {name} = _factory_{name}()")
        else:
            params.append(name)
        if slots:
            # (the slot's own descriptor: it does not go through the frozen __setattr__)
            env[f"_set_{name}"] = getattr(cls, name).__set__
            body.append(f"_set_{name}(self, {name})")
            stores.append(f"self.{name} = {name}")
        else:
            body.append(f"d[{name!r}] = {name}")
    twin = slots_twin(cls) if slots and stores else None
    if twin is not None:
        env.update(_cls=cls, _twin=twin, _switch=object.__setattr__)
        body = [
            "if type(self) is _cls:",
            '    _switch(self, "__class__", _twin)',
            *(f"    {store}" for store in stores),
            "    self.__class__ = _cls",
            "else:",
            *(f"    {line}" for line in body),
        ]
    body = prelude + body
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + "".join(f"    {b}\n" for b in body)
    namespace: dict[str, Any] = {}
    exec_generated(source, env, namespace)  # (built from the field names above only)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = getattr(cls.__init__, "__doc__", None)
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


def slots_twin(cls: type) -> type | None:
    """A class with the slots of the frozen slots dataclass ``cls``, and none of its
    methods: an object made as a twin has its fields set by plain attribute stores (a
    slot's own store, the cheapest write there is, which the frozen class's
    ``__setattr__`` forbids), then becomes a ``cls`` (``obj.__class__ = cls``: the same
    layout, which Python checks). None when ``cls`` is not such a class or Python refuses
    the switch."""
    slots = cls.__dict__.get("__slots__")
    if not dataclasses.is_dataclass(cls) or not isinstance(slots, tuple):
        return None
    twin = type(cls.__name__, cls.__bases__, {"__slots__": slots, "__module__": cls.__module__})
    probe: Any = object.__new__(twin)
    try:
        probe.__class__ = cls
    except TypeError:  # pragma: no cover - a layout Python does not take as the same
        return None
    return twin


def slots_builder(cls: type[T]) -> Callable[..., T]:
    """A function making the frozen slots dataclass ``cls`` from every field's value, in
    order (no defaults, no ``__post_init__``), through :func:`slots_twin`: a third of
    what ``cls(...)`` costs, even with :func:`fast_init` (whose slot setters are calls).
    ``cls`` itself when that cannot be done."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    twin = slots_twin(cls)
    if twin is None or hasattr(cls, "__post_init__") or not all(f.init for f in fields):
        return cls
    names = [f.name for f in fields]
    source = f"def build({', '.join(names)}):\n    self = _new(_twin)\n"
    source += "".join(f"    self.{name} = {name}\n" for name in names)
    source += "    self.__class__ = _cls\n    return self\n"
    namespace: dict[str, Any] = {}
    env = {"_new": object.__new__, "_twin": twin, "_cls": cls}
    exec_generated(source, env, namespace)  # (from the field names above only)
    build: Callable[..., T] = namespace["build"]
    build.__qualname__ = f"{cls.__qualname__}.<build>"
    return build
