"""core.valueclass makes the methods dataclasses.dataclass would: each class here is made both ways, from one
text, and the two answer alike (construction, defaults, factories, equality, hashing, repr, frozen fields)."""

from __future__ import annotations

import dataclasses

import pytest

from archcurator.core import valueclass

SOURCE = '''
@value_class
class Plain:
    name: str
    size: int = 3
    tags: list = field(default_factory=list)
    derived: frozenset = field(default=frozenset(), init=False)
    _hidden: tuple = ("a",)

    def __post_init__(self):
        self.derived = frozenset(self.tags)


@value_class(frozen=True)
class Frozen:
    """A doc."""

    shape: tuple | None = None
    dtype: str = "float32"

    @property
    def rank(self):
        return None if self.shape is None else len(self.shape)


@value_class(frozen=True)
class FrozenPost:
    rule: object
    nodes: tuple

    def __post_init__(self):
        object.__setattr__(self, "rule", str(self.rule))
'''


def _make(value_class, field) -> dict:
    env: dict = {"value_class": value_class, "field": field, "__name__": __name__}
    exec(SOURCE, env)  # noqa: S102 - the test's own text
    return env


OURS = _make(valueclass.value_class, valueclass.field)
REFERENCE = _make(dataclasses.dataclass, dataclasses.field)


def _both(cls: str, /, *args, **kwargs):
    return OURS[cls](*args, **kwargs), REFERENCE[cls](*args, **kwargs)


@pytest.mark.parametrize("args,kwargs", [(("x",), {}), (("x", 5), {}), (("x",), {"tags": [1, 2]}),
                                         ((), {"name": "y", "size": 0, "_hidden": ()})])
def test_a_mutable_class_is_made_as_dataclasses_makes_it(args, kwargs):
    ours, ref = _both("Plain", *args, **kwargs)
    assert vars(ours) == vars(ref)
    assert repr(ours) == repr(ref)
    assert ours == OURS["Plain"](*args, **kwargs) and ours != ref  # alike within a class, never across
    assert OURS["Plain"].__hash__ is None and REFERENCE["Plain"].__hash__ is None
    assert OURS["Plain"].__match_args__ == REFERENCE["Plain"].__match_args__
    assert OURS["Plain"].size == REFERENCE["Plain"].size == 3 and not hasattr(OURS["Plain"], "tags")
    assert OURS["Plain"]("a").tags is not OURS["Plain"]("a").tags  # a fresh list each time
    ours.size = 9
    assert ours.size == 9
    with pytest.raises(TypeError):
        OURS["Plain"]()
    with pytest.raises(TypeError):
        OURS["Plain"]("x", derived=frozenset())


def test_a_frozen_class_is_made_as_dataclasses_makes_it():
    for args in [(), ((1, 2),), ((1,), "int64")]:
        ours, ref = _both("Frozen", *args)
        assert vars(ours) == vars(ref) and repr(ours) == repr(ref) and hash(ours) == hash(ref)
        assert ours.rank == ref.rank
        assert ours == OURS["Frozen"](*args) and {ours: 1}[OURS["Frozen"](*args)] == 1
        with pytest.raises(AttributeError):
            ours.dtype = "x"
        with pytest.raises(AttributeError):
            del ours.shape
    assert OURS["Frozen"].__doc__ == "A doc."
    post, ref_post = _both("FrozenPost", 7, ("a",))
    assert post.rule == ref_post.rule == "7" and hash(post) == hash(ref_post)


def test_a_default_before_a_required_field_is_refused_as_dataclasses_refuses_it():
    text = "@value_class\nclass Bad:\n    a: int = 1\n    b: int\n"
    for value_class, field in [(valueclass.value_class, valueclass.field), (dataclasses.dataclass, dataclasses.field)]:
        with pytest.raises(TypeError):
            exec(text, {"value_class": value_class, "field": field, "__name__": __name__})  # noqa: S102
