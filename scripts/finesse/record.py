"""`Record`: the frozen records the hooks build, without the cost of `dataclasses`.

Every stop of a looping session imports the loop's records and builds them from the state
file. `dataclasses` imports `inspect` (and with it `ast`, `dis` and `tokenize`) and generates
and compiles several methods per class at import: for the Stop path's forty-odd records that
was more than half of an active stop. A `Record` subclass declares its fields the same way,
as annotations with defaults (`field(default_factory=list)` for a mutable one), and gets what
these records use of a dataclass, without generating code:

- construction by position or keyword, every field without a default required, then
  `__post_init__` when the class has one (its checks run again on every `replace`);
- frozen instances (`class Tokens(Record, frozen=False)` for the few that count up in place);
- equality within one class, a hash for frozen ones, a repr naming every field;
- `record_fields(cls)`: each field's name, annotation text and default, which
  `finesse.schema` converts with.

Type checkers see a dataclass (`dataclass_transform`). Annotations stay text (`from __future__
import annotations` in every module), never evaluated here. Standard library only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from typing_extensions import dataclass_transform

    R = TypeVar("R", bound="Record")
else:
    def dataclass_transform(**_options: object) -> object:
        return lambda cls: cls


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Field:
    """A field's default when it is not a plain value: a factory called for each record."""

    __slots__ = ("default", "default_factory")

    def __init__(self, default: object, default_factory: Callable[[], object] | None) -> None:
        self.default = default
        self.default_factory = default_factory


def field(*, default: Any = MISSING, default_factory: Callable[[], Any] | None = None) -> Any:
    """A field's default: `default_factory` for a mutable value (a new one per record)."""
    return Field(default, default_factory)


class Spec:
    """One field of a record class: its name, annotation text and default."""

    __slots__ = ("annotation", "default", "factory", "name")

    def __init__(self, name: str, annotation: str, default: object,
                 factory: Callable[[], object] | None) -> None:
        self.name = name
        self.annotation = annotation
        self.default = default
        self.factory = factory

    @property
    def required(self) -> bool:
        return self.default is MISSING and self.factory is None


class FrozenRecordError(AttributeError):
    """A field of a frozen record was assigned or deleted."""


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Record:
    __record_fields__: tuple[Spec, ...] = ()
    __record_names__: frozenset[str] = frozenset()
    __record_frozen__: bool = True

    def __init_subclass__(cls, *, frozen: bool = True, **options: Any) -> None:
        super().__init_subclass__(**options)
        specs = {spec.name: spec for spec in cls.__record_fields__}
        # Not inspect.get_annotations: importing inspect is what this module avoids.
        own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
        for name, annotation in own.items():
            if str(annotation).startswith("ClassVar"):
                continue
            value = cls.__dict__.get(name, MISSING)
            if isinstance(value, Field):
                specs[name] = Spec(name, str(annotation), value.default, value.default_factory)
                if value.default is MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, value.default)
            else:
                specs[name] = Spec(name, str(annotation), value, None)
        cls.__record_fields__ = tuple(specs.values())
        cls.__record_names__ = frozenset(specs)
        cls.__record_frozen__ = frozen
        if not frozen:
            cls.__hash__ = None  # type: ignore[assignment]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        specs = cls.__record_fields__
        if len(args) > len(specs):
            raise TypeError(f"{cls.__name__}() takes {len(specs)} positional arguments, "
                            f"{len(args)} given")
        values: dict[str, Any] = {}
        for index, value in enumerate(args):  # (no zip(strict=): `ralph doctor` runs on 3.9)
            values[specs[index].name] = value
        for name, value in kwargs.items():
            if name not in cls.__record_names__:
                raise TypeError(f"{cls.__name__}() got an unexpected argument {name!r}")
            if name in values:
                raise TypeError(f"{cls.__name__}() got two values for {name!r}")
            values[name] = value
        if len(values) < len(specs):
            for spec in specs:
                if spec.name in values:
                    continue
                if spec.factory is not None:
                    values[spec.name] = spec.factory()
                elif spec.default is not MISSING:
                    values[spec.name] = spec.default
                else:
                    raise TypeError(f"{cls.__name__}() missing the argument {spec.name!r}")
        object.__setattr__(self, "__dict__", {spec.name: values[spec.name] for spec in specs})
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:
            post_init()

    def __setattr__(self, name: str, value: Any) -> None:
        if type(self).__record_frozen__:
            raise FrozenRecordError(f"cannot assign to field {name!r} of a frozen record")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if type(self).__record_frozen__:
            raise FrozenRecordError(f"cannot delete field {name!r} of a frozen record")
        object.__delattr__(self, name)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(tuple(self.__dict__.values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"{type(self).__qualname__}({shown})"


def record_fields(cls: type[Record]) -> tuple[Spec, ...]:
    return cls.__record_fields__


def is_record(kind: object) -> bool:
    return isinstance(kind, type) and issubclass(kind, Record)


def replace(record: R, **changes: Any) -> R:
    """A copy of a record with some fields changed, checked again (`__post_init__`)."""
    return type(record)(**{**record.__dict__, **changes})
