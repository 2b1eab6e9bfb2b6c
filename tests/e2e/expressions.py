"""GitHub Actions' `${{ }}` expressions, as far as the workflows `ralph ci` writes use them:
context paths (`needs.merge-1.outputs.commit`), string and number literals, `!`, `==`, `!=`
(strings compared without case, as GitHub does), `&&` and `||` (which give an operand, not a
boolean: `inputs.base || github.ref_name`), parentheses, `contains()` and the status
functions. Anything else raises, so a workflow that uses more fails its test."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+)|(?P<op>==|!=|&&|\|\||[!(),])"
                    r"|(?P<name>[A-Za-z_][\w.-]*))")
STATUS = ("success", "failure", "always", "cancelled")


def _tokens(text: str) -> list[tuple[str, str]]:
    found, at = [], 0
    while at < len(text.rstrip()):
        match = _TOKEN.match(text, at)
        if match is None:
            raise AssertionError(f"expression stand-in: cannot read {text[at:]!r} in {text!r}")
        kind = match.lastgroup or ""
        found.append((kind, match.group(kind)))
        at = match.end()
    return found


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "")


def _number(value: Any) -> float:
    """GitHub's coercion of a value of another type for `==`: null 0, a boolean 1 or 0, a
    string its number ('' is 0, a word NaN)."""
    if value is None:
        return 0.0
    if isinstance(value, bool | int | float):
        return float(value)
    try:
        return float(str(value).strip() or 0)
    except ValueError:
        return float("nan")


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        return left.lower() == right.lower()
    if type(left) is type(right):
        return bool(left == right)
    return _number(left) == _number(right)


class Expression:
    """One `${{ }}` expression, evaluated against `contexts` and `status` (the functions)."""

    def __init__(self, text: str, contexts: Mapping[str, Any],
                 status: Mapping[str, bool]) -> None:
        self.tokens = _tokens(text)
        self.at = 0
        self.text = text
        self.contexts = contexts
        self.status = status

    def value(self) -> Any:
        result = self._or()
        if self.at != len(self.tokens):
            raise AssertionError(f"expression stand-in: trailing {self.tokens[self.at:]!r}")
        return result

    def _peek(self) -> str:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else ""

    def _take(self, wanted: str | None = None) -> tuple[str, str]:
        token = self.tokens[self.at]
        if wanted is not None and token[1] != wanted:
            raise AssertionError(f"expression stand-in: expected {wanted} in {self.text!r}")
        self.at += 1
        return token

    def _or(self) -> Any:
        left = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            left = left if _truthy(left) else right
        return left

    def _and(self) -> Any:
        left = self._compare()
        while self._peek() == "&&":
            self._take()
            right = self._compare()
            left = right if _truthy(left) else left
        return left

    def _compare(self) -> Any:
        left = self._unary()
        while self._peek() in ("==", "!="):
            op = self._take()[1]
            right = self._unary()
            left = _equal(left, right) if op == "==" else not _equal(left, right)
        return left

    def _unary(self) -> Any:
        if self._peek() == "!":
            self._take()
            return not _truthy(self._unary())
        return self._primary()

    def _primary(self) -> Any:
        kind, text = self._take()
        if text == "(":
            inner = self._or()
            self._take(")")
            return inner
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return int(text)
        if kind != "name":
            raise AssertionError(f"expression stand-in: unexpected {text!r} in {self.text!r}")
        if text in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[text]
        if self._peek() == "(":
            return self._call(text)
        value: Any = self.contexts
        for part in text.split("."):
            if value is None:
                break  # a property of nothing is nothing, as in GitHub's expressions
            if not isinstance(value, Mapping):
                raise AssertionError(f"expression stand-in: {text} is not a context path")
            value = value.get(part)
        return value

    def _call(self, name: str) -> Any:
        self._take("(")
        args = []
        while self._peek() != ")":
            args.append(self._or())
            if self._peek() == ",":
                self._take()
        self._take(")")
        if name in STATUS and not args:
            return self.status[name]
        if name == "contains" and len(args) == 2:
            return str(args[1]).lower() in str(args[0]).lower()
        raise AssertionError(f"expression stand-in: no function {name}() with {len(args)} args")


def evaluate(text: str, contexts: Mapping[str, Any], status: Mapping[str, bool]) -> Any:
    return Expression(text, contexts, status).value()


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def interpolate(value: Any, contexts: Mapping[str, Any], status: Mapping[str, bool]) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _shown(evaluate(m.group(1), contexts, status)),
                  _shown(value))


def condition(value: Any, contexts: Mapping[str, Any], status: Mapping[str, bool]) -> bool:
    """An `if:`; without a status function in it, `success() &&` it, as GitHub reads it."""
    if value is None:
        return status["success"]
    text = str(value).strip()
    found = re.fullmatch(r"\$\{\{(.*)\}\}", text, re.DOTALL)
    expression = found.group(1) if found else text
    if not any(re.search(rf"\b{name}\s*\(", expression) for name in STATUS):
        expression = f"success() && ({expression})"
    return _truthy(evaluate(expression, contexts, status))


