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
from typing import Any, TypeVar

T = TypeVar("T")


def fast_init(cls: type[T]) -> type[T]:
    """Give the frozen dataclass ``cls`` the direct-writing ``__init__`` (a class decorator,
    applied over ``@dataclass``)."""
    env: dict[str, Any] = {"_MISSING": dataclasses.MISSING}
    params: list[str] = []
    body: list[str] = []
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
            continue  # (else set by __post_init__)
        if f.default is not dataclasses.MISSING:
            env[f"_default_{name}"] = f.default
            params.append(f"{name}=_default_{name}")
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_factory_{name}"] = f.default_factory
            params.append(f"{name}=_MISSING")
            body.append(f"if {name} is _MISSING: {name} = _factory_{name}()")
        else:
            params.append(name)
        if slots:
            # (the slot's own descriptor: it does not go through the frozen __setattr__)
            env[f"_set_{name}"] = getattr(cls, name).__set__
            body.append(f"_set_{name}(self, {name})")
        else:
            body.append(f"d[{name!r}] = {name}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + "".join(f"    {b}\n" for b in body)
    namespace: dict[str, Any] = {}
    exec(source, env, namespace)  # noqa: S102 - built from the field names above only
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = getattr(cls.__init__, "__doc__", None)
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
