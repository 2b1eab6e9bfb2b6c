"""`validate_prompt`: does a Ralph loop prompt carry the ten attributes a loop needs?

Deterministic (regular expressions over the Markdown structure), no model calls; only
`read_text` and `validate_file` touch the disk. Each attribute's result names the line that
shows it (or shows what is wrong) and, when it fails, says in one line how to fix it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from finesse.authoring.prompt_check.attributes import ATTRIBUTES
from finesse.authoring.prompt_check.structure import Prompt
from finesse.errors import UsageError

MAX_TEXT_BYTES = 1024 * 1024


class AttributeResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int
    key: str
    passed: bool
    evidence: str | None  # "line N: <that line, trimmed>"
    fix: str  # one line; "" when the attribute passed


class ValidationReport(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    passed: bool
    attributes: list[AttributeResult]

    @property
    def failed(self) -> list[AttributeResult]:
        return [result for result in self.attributes if not result.passed]


def validate_prompt(text: str, *, promise: str | None = None) -> ValidationReport:
    """Check a loop prompt; with `promise`, its completion promise must be that text."""
    prompt = Prompt(text, promise)
    results = []
    for attribute in ATTRIBUTES:
        verdict = attribute.check(prompt)
        results.append(AttributeResult(
            id=attribute.id,
            key=attribute.key,
            passed=verdict.passed,
            evidence=verdict.line.evidence() if verdict.line else None,
            fix="" if verdict.passed else verdict.fix,
        ))
    return ValidationReport(passed=all(r.passed for r in results), attributes=results)


def read_text(path: Path, what: str = "prompt file") -> str:
    """A UTF-8 file's text, or a UsageError naming `what` and saying what to do instead."""
    shown = str(path) if str(path).isprintable() else repr(str(path))
    where = f"{what} {shown}"
    try:
        with open(path, encoding="utf-8") as handle:
            # Bounded: a device such as /dev/zero never ends.
            text = handle.read(MAX_TEXT_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"{where}: no such file; give the path of an existing file") from None
    except IsADirectoryError:
        raise UsageError(f"{where}: that is a directory; give a file") from None
    except UnicodeDecodeError:
        raise UsageError(f"{where}: not UTF-8 text; save it as UTF-8") from None
    except OSError as err:
        raise UsageError(f"{where}: cannot read it ({err.strerror})") from None
    except ValueError:  # an embedded NUL byte in the name
        raise UsageError(f"{where}: not a usable file name") from None
    if len(text) > MAX_TEXT_BYTES:
        raise UsageError(f"{where}: over 1 MiB; a loop prompt should be far shorter")
    return text


def validate_file(path: Path | str, *, promise: str | None = None) -> ValidationReport:
    """`validate_prompt` on a file; a UsageError when the file cannot be read."""
    return validate_prompt(read_text(Path(path)), promise=promise)
