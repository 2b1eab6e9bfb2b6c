"""JSON read so that excessive nesting is malformed text like any other.

`json.loads` follows nesting with the interpreter's stack: a file 100,000 levels deep ends
in RecursionError, which no reader expects. `loads` raises ValueError instead (what every
caller already treats as a corrupt file), so such a file is moved aside or refused in one
line, as its kind of file has it. Standard library only: hooks read with it.
"""

from __future__ import annotations

import json
from typing import Any


class TooDeep(ValueError):
    def __init__(self) -> None:
        super().__init__("nested too deeply")


def loads(text: str | bytes | bytearray, **options: Any) -> Any:
    try:
        return json.loads(text, **options)
    except RecursionError:
        raise TooDeep() from None
