"""Strict conversion between JSON and dataclasses, with the standard library alone.

The Stop hook reads and writes loop state on every stop of a looping session. Importing
pydantic there costs several times the interpreter's whole start-up, so the loop's own
records are dataclasses checked by this module instead, with the same rules: our own files
refuse unknown fields (`strict=True`), hook inputs ignore them (Claude Code adds fields).
Errors name the field, e.g. `iterations[2].number: expected an integer >= 1`.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from datetime import datetime
from functools import cache
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

T = TypeVar("T")


class SchemaError(ValueError):
    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where or 'the file'}: {problem}")
        self.where = where
        self.problem = problem


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _join(where: str, name: str | int) -> str:
    if isinstance(name, int):
        return f"{where}[{name}]"
    return f"{where}.{name}" if where else name


def _convert(kind: Any, value: Any, where: str, strict: bool) -> Any:
    origin = get_origin(kind)
    if kind is Any:
        return value
    if origin is Union or origin is types.UnionType:
        options = get_args(kind)
        if value is None:
            if type(None) in options:
                return None
            raise SchemaError(where, "may not be null")
        problems = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _convert(option, value, where, strict)
            except SchemaError as err:
                problems.append(err.problem)
        raise SchemaError(where, " or ".join(problems))
    if origin is Literal:
        if value in get_args(kind):
            return value
        allowed = ", ".join(repr(option) for option in get_args(kind))
        raise SchemaError(where, f"expected one of {allowed}, not {value!r}")
    if origin is list:
        if not isinstance(value, list):
            raise SchemaError(where, "expected a list")
        (item,) = get_args(kind)
        return [_convert(item, entry, _join(where, i), strict) for i, entry in enumerate(value)]
    if origin is dict:  # a JSON object kept as it is (judge mode's contract objects)
        if not isinstance(value, dict):
            raise SchemaError(where, "expected an object")
        return dict(value)
    if dataclasses.is_dataclass(kind):
        return from_dict(typing.cast(type, kind), value, strict=strict, where=where)
    if kind is datetime:
        if isinstance(value, str):
            try:
                parsed = datetime.fromisoformat(value)
            except ValueError:
                pass
            else:
                if parsed.tzinfo is not None:
                    return parsed
        raise SchemaError(where, "expected an ISO 8601 time with a time zone")
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise SchemaError(where, "expected true or false")
    if kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise SchemaError(where, "expected an integer")
    if kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise SchemaError(where, "expected a number")
    if kind is str:
        if isinstance(value, str):
            return value
        raise SchemaError(where, "expected a string")
    raise TypeError(f"schema: unsupported field type {kind!r} at {where}")


def from_dict(cls: type[T], data: Any, *, strict: bool = True, where: str = "") -> T:
    """Build `cls` from parsed JSON; raises SchemaError naming the first bad field."""
    if not isinstance(data, dict):
        raise SchemaError(where, "expected an object")
    fields = {field.name: field for field in dataclasses.fields(typing.cast(Any, cls))}
    if strict:
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise SchemaError(_join(where, unknown[0]), "unknown field")
    hints = _hints(typing.cast(Any, cls))
    values: dict[str, Any] = {}
    for name, field in fields.items():
        if name in data:
            values[name] = _convert(hints[name], data[name], _join(where, name), strict)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
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
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name))
                for field in dataclasses.fields(value)}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def to_dict(record: Any) -> dict[str, Any]:
    """The JSON-ready form of a dataclass record."""
    plain = _plain(record)
    assert isinstance(plain, dict)
    return plain


def to_json(record: Any) -> str:
    # ASCII with escapes: any text (a lone surrogate, a name that is not UTF-8) is storable.
    return json.dumps(to_dict(record), indent=2, ensure_ascii=True)
