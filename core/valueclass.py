"""`@value_class`: what `dataclasses.dataclass` gives the classes `verify` loads, without importing dataclasses.

`import dataclasses` imports inspect, and with it ast, dis and tokenize (7 ms), and each decoration then
compiles six methods one by one and asks inspect for the class's signature (0.3-1 ms a class): together
a third of `archcurator verify FILE --json`'s start-up, a command scripts run once per design. Here one
`__init__` is compiled per class (the code dataclasses would write) and the other methods are closures.

What it supports is what those classes use: fields from the class's own annotations, in order; a default
as the class attribute, or `field(default=..., default_factory=..., init=False)`; `frozen=True`; and
`__post_init__`. It makes `__init__`, `__repr__`, `__eq__` (the fields in order, the classes alike) and,
frozen, `__hash__` (of the fields' tuple), `__setattr__` and `__delattr__` (which raise
`FrozenInstanceError`, an AttributeError), as dataclasses does; a method the class writes itself is kept.
It sets no `__dataclass_fields__`: `dataclasses.replace` / `asdict` do not take these classes (nothing
gives them one). Type checkers read `dataclasses.dataclass` itself (the TYPE_CHECKING branch);
tests/test_valueclass.py holds the two alike.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads this name the same)
if TYPE_CHECKING:
    from dataclasses import dataclass as value_class
    from dataclasses import field
else:
    from operator import attrgetter

    _MISSING = object()

    class FrozenInstanceError(AttributeError):
        """An assignment to a field of a frozen value class."""

    class _Field:
        __slots__ = ("default", "default_factory", "init")

        def __init__(self, default, default_factory, init):
            self.default, self.default_factory, self.init = default, default_factory, init

    def field(*, default=_MISSING, default_factory=_MISSING, init=True):
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        return _Field(default, default_factory, init)

    def value_class(cls=None, /, *, frozen=False):
        def wrap(c):
            return _process(c, frozen)

        return wrap if cls is None else wrap(cls)

    def _process(cls, frozen):
        env = {"_MISSING": _MISSING, "_object_setattr": object.__setattr__}
        set_to = ("_object_setattr(self, {!r}, {})" if frozen else "self.{} = {}").format
        names, params, body = [], [], []
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if isinstance(annotation, str) and annotation.startswith(("ClassVar", "typing.ClassVar")):
                raise TypeError(f"{cls.__name__}.{name}: ClassVar is not supported here")
            value = cls.__dict__.get(name, _MISSING)
            spec = value if isinstance(value, _Field) else _Field(value, _MISSING, True)
            if isinstance(spec.default, (list, dict, set)):
                raise ValueError(f"mutable default {type(spec.default)} for field {name} is not allowed: "
                                 "use default_factory")
            if isinstance(value, _Field):  # as dataclasses leaves it: the class attribute is the default, or none
                if spec.default is _MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, spec.default)
            names.append(name)
            if spec.default_factory is not _MISSING:
                env[f"_factory_{name}"] = spec.default_factory
                given = f"_factory_{name}() if {name} is _MISSING else {name}"
                param, start = f"{name}=_MISSING", f"_factory_{name}()"
            elif spec.default is not _MISSING:
                env[f"_default_{name}"] = spec.default
                given, param, start = name, f"{name}=_default_{name}", f"_default_{name}"
            else:
                if spec.init and params and "=" in params[-1]:
                    raise TypeError(f"non-default argument {name!r} follows default argument")
                given, param, start = name, name, None
            if spec.init:
                params.append(param)
                body.append(set_to(name, given))
            elif start is not None:  # a field left out of __init__ starts at its default (none: left unset)
                body.append(set_to(name, start))
        if hasattr(cls, "__post_init__"):
            body.append("self.__post_init__()")
        exec(f"def __init__(self, {', '.join(params)}):\n" + "".join(f"    {b}\n" for b in body or ["pass"]), env)  # noqa: S102
        methods = {"__init__": env["__init__"], **_compare_and_show(cls, tuple(names), frozen)}
        for name, fn in methods.items():
            if name not in cls.__dict__:  # a method the class writes itself is kept, as dataclasses keeps it
                fn.__qualname__ = f"{cls.__qualname__}.{name}"
                fn.__module__ = cls.__module__
                setattr(cls, name, fn)
        if not frozen:
            cls.__hash__ = None  # eq without frozen: unhashable, as dataclasses makes it
        cls.__match_args__ = tuple(p.partition("=")[0] for p in params)
        return cls

    def _compare_and_show(cls, names, frozen):
        """__eq__, __repr__ and, frozen, __hash__, __setattr__, __delattr__ over the fields, as dataclasses makes
        them: one __init__ is compiled per class, these are shared closures (compiling them cost as much)."""
        values = attrgetter(*names) if len(names) > 1 else (lambda obj: (getattr(obj, names[0]),)) if names \
            else (lambda obj: ())

        def __eq__(self, other):  # noqa: N807
            if other.__class__ is self.__class__:
                return values(self) == values(other)
            return NotImplemented

        def __repr__(self):  # noqa: N807
            shown = ", ".join(f"{n}={v!r}" for n, v in zip(names, values(self)))
            return f"{self.__class__.__qualname__}({shown})"

        methods = {"__eq__": __eq__, "__repr__": __repr__}
        if frozen:
            fields = frozenset(names)

            def __hash__(self):  # noqa: N807
                return hash(values(self))

            def __setattr__(self, name, value):  # noqa: N807
                if type(self) is cls or name in fields:
                    raise FrozenInstanceError(f"cannot assign to field {name!r}")
                super(cls, self).__setattr__(name, value)

            def __delattr__(self, name):  # noqa: N807
                if type(self) is cls or name in fields:
                    raise FrozenInstanceError(f"cannot delete field {name!r}")
                super(cls, self).__delattr__(name)

            methods.update(__hash__=__hash__, __setattr__=__setattr__, __delattr__=__delattr__)
        return methods


__all__ = ["field", "value_class"]
