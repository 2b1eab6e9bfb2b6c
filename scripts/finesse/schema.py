"""Strict conversion between JSON and records (`finesse.record`), standard library alone.

The Stop hook reads and writes loop state on every stop of a looping session. Importing
pydantic there costs several times the interpreter's whole start-up, so the loop's own
records are checked by this module instead, with the same rules: our own files refuse
unknown fields (`strict=True`), hook inputs ignore them (Claude Code adds fields). Errors
name the field, e.g. `iterations[2].number: expected an integer >= 1`.

A field's type is read from its annotation text once per class and process, by a small
parser of the forms records use (`int`, `str | None`, `list[CommandResult]`, `tuple[str,
...]`, `dict[str, Any]`, `Literal['a', 'b']`, a record class, a type alias whose value is
such a text); nothing is evaluated.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime

from finesse.record import Record, is_record, record_fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeAlias, TypeVar

    T = TypeVar("T", bound=Record)
    # A type, parsed: (kind, argument). Kinds: any, none, bool, int, float, str, datetime,
    # object (a JSON object kept as it is), list and tuple (of one type), union (of types),
    # literal (of values), record (a class).
    Kind: TypeAlias = tuple[str, Any]


class SchemaError(ValueError):
    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where or 'the file'}: {problem}")
        self.where = where
        self.problem = problem


def _join(where: str, name: str | int) -> str:
    if isinstance(name, int):
        return f"{where}[{name}]"
    return f"{where}.{name}" if where else name


_SCALARS = {"Any": ("any", None), "None": ("none", None), "bool": ("bool", None),
            "int": ("int", None), "float": ("float", None), "str": ("str", None),
            "datetime": ("datetime", None), "object": ("any", None)}


def _tokens(text: str) -> list[str]:
    found: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char.isspace():
            index += 1
        elif char in "[],|":
            found.append(char)
            index += 1
        elif char in "'\"":
            end = text.index(char, index + 1)
            found.append(text[index:end + 1])
            index = end + 1
        else:
            end = index
            while end < len(text) and (text[end].isalnum() or text[end] in "_.-"):
                end += 1
            if end == index:
                raise TypeError(f"schema: cannot read the type {text!r}")
            found.append(text[index:end])
            index = end
    return found


class _Parser:
    def __init__(self, text: str, names: dict[str, Any]) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.at = 0
        self.names = names

    def parse(self) -> Kind:
        kind = self.union()
        if self.at != len(self.tokens):
            raise TypeError(f"schema: cannot read the type {self.text!r}")
        return kind

    def union(self) -> Kind:
        options = [self.atom()]
        while self.at < len(self.tokens) and self.tokens[self.at] == "|":
            self.at += 1
            options.append(self.atom())
        return options[0] if len(options) == 1 else ("union", tuple(options))

    def _arguments(self) -> list[Kind | str]:
        self.at += 1  # "["
        found: list[Kind | str] = []
        while self.tokens[self.at] != "]":
            token = self.tokens[self.at]
            if token == "..." or token[0] in "'\"" or token.lstrip("-").isdigit():
                found.append(token)
                self.at += 1
            else:
                found.append(self.union())
            if self.tokens[self.at] == ",":
                self.at += 1
        self.at += 1  # "]"
        return found

    def atom(self) -> Kind:
        name = self.tokens[self.at]
        self.at += 1
        arguments = (self._arguments() if self.at < len(self.tokens)
                     and self.tokens[self.at] == "[" else None)
        if name == "Literal" and arguments is not None:
            return ("literal", tuple(_literal(str(value)) for value in arguments))
        if name in ("list", "tuple") and arguments:
            item = arguments[0]
            assert not isinstance(item, str), self.text
            return (name, item)
        if name == "dict":
            return ("object", None)
        if name in _SCALARS:
            return _SCALARS[name]
        value = self.names.get(name)
        if is_record(value):
            return ("record", value)
        if isinstance(value, str):  # a type alias written as text (`Outcome`)
            return _Parser(value, self.names).parse()
        raise TypeError(f"schema: unknown type {name!r} in {self.text!r}")


def _literal(token: str) -> object:
    if token[0] in "'\"":
        return token[1:-1]
    return int(token)


_KINDS: dict[type, tuple[tuple[str, Kind, bool], ...]] = {}


def _fields_of(cls: type[Record]) -> tuple[tuple[str, Kind, bool], ...]:
    """(name, parsed type, required) of each field of a record class."""
    known = _KINDS.get(cls)
    if known is None:
        names = vars(sys.modules[cls.__module__])
        known = tuple((spec.name, _Parser(spec.annotation, names).parse(), spec.required)
                      for spec in record_fields(cls))
        _KINDS[cls] = known
    return known


def _convert(kind: Kind, value: Any, where: str, strict: bool) -> Any:
    name, argument = kind
    if name == "union":
        options = [option for option in argument if option[0] != "none"]
        if value is None:
            if len(options) < len(argument):
                return None
            raise SchemaError(where, "may not be null")
        if len(options) == 1:  # X | None: X's own error, naming the field inside X
            return _convert(options[0], value, where, strict)
        problems = []
        for option in options:
            try:
                return _convert(option, value, where, strict)
            except SchemaError as err:
                problems.append(err.problem)
        raise SchemaError(where, " or ".join(problems))
    if name == "any":
        return value
    if name == "literal":
        if value in argument and type(value) in (str, int):
            return value
        shown = ", ".join(repr(option) for option in argument)
        raise SchemaError(where, f"expected one of {shown}, not {value!r}")
    if name in ("list", "tuple"):
        if not isinstance(value, list):
            raise SchemaError(where, "expected a list")
        items = [_convert(argument, entry, _join(where, i), strict)
                 for i, entry in enumerate(value)]
        return tuple(items) if name == "tuple" else items
    if name == "record":
        return from_dict(argument, value, strict=strict, where=where)
    if name == "datetime":
        return _datetime(value, where)
    if name == "object":
        if not isinstance(value, dict):
            raise SchemaError(where, "expected an object")
        return dict(value)
    accepts, problem = _PLAIN[name]
    if not accepts(value):
        raise SchemaError(where, problem)
    return float(value) if name == "float" else value


def _datetime(value: Any, where: str) -> datetime:
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if parsed.tzinfo is not None:
                return parsed
    raise SchemaError(where, "expected an ISO 8601 time with a time zone")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_PLAIN: dict[str, tuple[Callable[[Any], bool], str]] = {
    "bool": (lambda value: isinstance(value, bool), "expected true or false"),
    "int": (lambda value: isinstance(value, int) and not isinstance(value, bool),
            "expected an integer"),
    "float": (_number, "expected a number"),
    "str": (lambda value: isinstance(value, str), "expected a string"),
    "none": (lambda value: value is None, "expected null"),
}


def from_dict(cls: type[T], data: Any, *, strict: bool = True, where: str = "") -> T:
    """Build `cls` from parsed JSON; raises SchemaError naming the first bad field."""
    if not isinstance(data, dict):
        raise SchemaError(where, "expected an object")
    fields = _fields_of(cls)
    if strict:
        unknown = sorted(set(data) - cls.__record_names__)
        if unknown:
            raise SchemaError(_join(where, unknown[0]), "unknown field")
    values: dict[str, Any] = {}
    for name, kind, required in fields:
        if name in data:
            values[name] = _convert(kind, data[name], _join(where, name), strict)
        elif required:
            raise SchemaError(_join(where, name), "missing")
    try:
        return cls(**values)
    except ValueError as err:  # a __post_init__ check: ValueError(field name, problem)
        name, problem = err.args if len(err.args) == 2 else ("", str(err))
        raise SchemaError(_join(where, name) if name else where, problem) from None


def from_json(cls: type[T], raw: str | bytes, *, strict: bool = True) -> T:
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as err:
        raise SchemaError("", f"not valid JSON ({err})") from None
    except RecursionError:
        raise SchemaError("", "nested too deeply to be a loop state") from None
    return from_dict(cls, data, strict=strict)


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return {name: _plain(item) for name, item in value.__dict__.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def to_dict(record: Record) -> dict[str, Any]:
    """The JSON-ready form of a record."""
    plain = _plain(record)
    assert isinstance(plain, dict)
    return plain


def to_json(record: Record) -> str:
    # ASCII with escapes: any text (a lone surrogate, a name that is not UTF-8) is storable.
    return json.dumps(to_dict(record), indent=2, ensure_ascii=True)


def literal_values(alias: str) -> tuple[object, ...]:
    """The values of a `Literal[...]` type alias written as text (`models.Outcome`)."""
    kind = _Parser(alias, {}).parse()
    if kind[0] != "literal":
        raise TypeError(f"schema: {alias!r} is not a Literal")
    values: tuple[object, ...] = kind[1]
    return values
