"""The one pydantic base for finesse's strict models: the Finesse specs, the exploration
cache and config, the judge-mode contracts, plan and graph records. Unknown fields are
refused and a model, once made, does not change (`model_copy(update=...)` makes another).

The loop's own state is not here: it is read on every stop, where pydantic's import costs
too much, so it is standard-library dataclasses checked by `finesse.schema`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, ValidationError


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def problems(err: ValidationError, *, most: int = 1, top: str = "the top level") -> str:
    """The first `most` problems of a validation error, one line: `field.path: message`,
    joined by "; ", with how many more there were."""
    parts = []
    for problem in err.errors()[:most]:
        where = ".".join(str(part) for part in problem["loc"]) or top
        parts.append(f"{where}: {str(problem['msg']).removeprefix('Value error, ')}")
    more = len(err.errors()) - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
