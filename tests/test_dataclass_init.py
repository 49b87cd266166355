"""fast_init: the cheaper constructor of per-call frozen dataclasses builds what the
dataclass's own would (defaults, factories, __post_init__), and they stay frozen."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import FrozenInstanceError, dataclass, field

import pytest

from toolrun.dataclass_init import fast_init
from toolrun.permissions.bash import Redirect, SimpleCommand, analyse
from toolrun.permissions.decision import DecidedBy, Decision, TargetVerdict
from toolrun.permissions.paths import ResolvedPath
from toolrun.permissions.rules import Subject
from toolrun.permissions.words import Word


def _sample(*, fast: bool) -> type:
    """The same frozen dataclass, as ``@dataclass`` makes it or with ``fast_init`` on top
    (made twice: ``fast_init`` changes the class it is given)."""

    @dataclass(frozen=True, slots=True)
    class Sample:
        a: str
        b: int = 2
        c: list[int] = field(default_factory=list)
        d: str = field(init=False, compare=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "d", self.a * self.b)

    return fast_init(Sample) if fast else Sample


Plain, Fast = _sample(fast=False), _sample(fast=True)


@fast_init
@dataclass(frozen=True)
class FastDict:
    a: str
    b: tuple[int, ...] = ()


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [(("x",), {}), (("x", 3), {}), (("x",), {"b": 4, "c": [1]}), ((), {"a": "y", "c": [2]})],
)
def test_it_builds_what_the_dataclass_builds(args: tuple[object, ...], kwargs: dict[str, object]
                                             ) -> None:
    plain, fast = Plain(*args, **kwargs), Fast(*args, **kwargs)  # type: ignore[arg-type]
    assert [getattr(fast, f.name) for f in dataclasses.fields(Fast)] == [
        getattr(plain, f.name) for f in dataclasses.fields(Plain)
    ]
    assert repr(fast) == repr(plain)
    # (and it is fast_init's constructor: each slot written by its own descriptor)
    assert "_set_a" in Fast.__init__.__code__.co_names
    assert "_set_a" not in Plain.__init__.__code__.co_names


def test_a_default_factory_is_called_for_each_object() -> None:
    assert Fast("x").c is not Fast("x").c


def test_missing_or_extra_arguments_are_refused_as_before() -> None:
    with pytest.raises(TypeError):
        Fast()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Fast("x", 1, [], "d")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Fast("x", e=1)  # type: ignore[call-arg]


@pytest.mark.parametrize("obj", [Fast("x"), FastDict("x"), Word("a", "a"), DecidedBy("rule")])
def test_the_objects_stay_frozen(obj: object) -> None:
    for f in dataclasses.fields(obj):  # type: ignore[arg-type]
        with pytest.raises(FrozenInstanceError):
            setattr(obj, f.name, "z")


def test_equality_hash_and_replace_are_the_dataclasses() -> None:
    assert FastDict("x", (1,)) == FastDict("x", (1,))
    assert hash(FastDict("x", (1,))) == hash(FastDict("x", (1,)))
    assert dataclasses.replace(Fast("x"), b=3).d == "xxx"
    assert dataclasses.replace(Word("a", "a"), value=None) == Word("a", None)


@pytest.mark.parametrize(
    "cls", [Subject, SimpleCommand, Redirect, Decision, TargetVerdict, ResolvedPath, Word]
)
def test_the_signature_is_the_dataclasses(cls: type) -> None:
    params = inspect.signature(cls).parameters
    init_fields = [f for f in dataclasses.fields(cls) if f.init]
    assert list(params) == [f.name for f in init_fields]
    for f in init_fields:
        if f.default is not dataclasses.MISSING:
            assert params[f.name].default is f.default


def test_a_parsed_command_has_its_name_worked_out() -> None:
    (command,) = analyse("FOO=1 git status > out").commands
    assert command.name == "git"
    assert command.redirects == (Redirect(">", Word("out", "out")),)


def test_a_field_it_cannot_build_is_refused() -> None:
    with pytest.raises(TypeError, match="KwOnly.a"):
        @fast_init
        @dataclass(frozen=True)
        class KwOnly:
            a: int = field(kw_only=True)


@dataclass(frozen=True, slots=True)
class PlainCache:
    a: str
    cache: str | None = field(default=None, init=False, compare=False)


@fast_init
@dataclass(frozen=True, slots=True)
class FastCache:
    a: str
    cache: str | None = field(default=None, init=False, compare=False)


def test_a_field_outside_init_starts_at_its_default_as_the_dataclass_sets_it() -> None:
    import pickle

    plain, fast = PlainCache("x"), FastCache("x")
    assert plain.cache is None and fast.cache is None
    FastCache.__dict__["cache"].__set__(fast, "made")  # (a cache filled in later)
    assert dataclasses.replace(fast).cache is None  # a copy starts without it
    assert pickle.loads(pickle.dumps(fast)).cache == "made"
    assert fast == FastCache("x")


class Base:
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Slotted(Base):
    a: str
    b: int = 2
    c: tuple[int, ...] = ()


def test_a_slots_builder_makes_what_the_constructor_makes() -> None:
    import pickle

    from toolrun.dataclass_init import slots_builder
    from toolrun.errors import Location

    for cls, values in [(Slotted, ("x", 3, (1,))), (Location, ("f", 1, 2))]:
        built = slots_builder(cls)(*values)
        made = cls(*values)
        assert type(built) is cls and built == made and repr(built) == repr(made)
        assert hash(built) == hash(made)
        assert pickle.loads(pickle.dumps(built)) == made
        assert dataclasses.replace(built) == made
        for f in dataclasses.fields(cls):
            with pytest.raises(FrozenInstanceError):
                setattr(built, f.name, "z")


def test_a_class_a_slots_builder_cannot_make_is_its_own_builder() -> None:
    from toolrun.dataclass_init import slots_builder, slots_twin

    # no slots, a field set by __post_init__, a field outside __init__: its constructor
    assert slots_builder(FastDict) is FastDict and slots_twin(FastDict) is None
    assert slots_builder(Plain) is Plain
    assert slots_builder(PlainCache) is PlainCache


def test_a_slots_class_is_filled_as_its_twin_and_a_subclass_through_its_setters() -> None:
    """Plain stores into a twin of the same layout, then the class switched back: the
    object is the class's own; a subclass (another layout, maybe) keeps its class."""

    class Sub(Fast):  # type: ignore[misc, valid-type]
        pass

    assert "_twin" in Fast.__init__.__code__.co_names
    fast, sub = Fast("x", 3), Sub("x", 3)
    assert type(fast) is Fast and type(sub) is Sub
    assert (fast.a, fast.b, fast.c, fast.d) == (sub.a, sub.b, sub.c, sub.d) == ("x", 3, [], "xxx")
    assert FastCache("y").cache is None and type(FastCache("y")) is FastCache
    for obj in (fast, sub):
        with pytest.raises(FrozenInstanceError):
            obj.a = "z"  # type: ignore[misc]
