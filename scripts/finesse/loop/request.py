"""A loop's start request: the parsed arguments with the files they name read, relative to
the project root: the prompt file, the promise file and the written plan (whose
verification and gate commands join `--verify` and `--gate`)."""

from __future__ import annotations

from pathlib import Path

from finesse.errors import UsageError
from finesse.loop.grammar import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_PROMISE,
    DEFAULT_QUIESCE_AFTER,
    JUDGE_MAX_ITERATIONS,
    LOOP_USAGE,
    WARN_ABOVE_ITERATIONS,
    LoopArgs,
    check_promise_file,
    parse_loop_args,
)
from finesse.loop.judge_watch import check_protect
from finesse.loop.notify.settings import project_notify
from finesse.loop.todo.sections import (
    ATTEMPTS,
    acceptance_criteria,
    check_plan,
    gate_commands,
    parse_sections,
)
from finesse.models import Budgets, Notify
from finesse.record import Record, field
from finesse.results import Price
from finesse.spend import DEFAULT_PRICES
from finesse.support.files import MAX_TEXT_BYTES, read_text, shown_name


class StartRequest(Record, frozen=False):
    """A validated request to start a loop, before it becomes state."""

    prompt: str
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    promise: str = DEFAULT_PROMISE
    verify: list[str] = field(default_factory=list)
    prompt_file: str | None = None
    promise_file: str | None = None
    plan_file: str | None = None
    quiesce_after: int = DEFAULT_QUIESCE_AFTER
    timeout_minutes: int | None = None
    force: bool = False
    gate: list[str] = field(default_factory=list)
    allow_dirty: bool = False
    effort: str | None = None
    notebook: str | None = None  # where the loop writes its attempts and review
    budgets: Budgets = field(default_factory=Budgets)
    prices: list[Price] = field(default_factory=list)
    judge: bool = False  # judge mode: its criteria and protected paths
    criteria: list[str] = field(default_factory=list)
    protect: list[str] = field(default_factory=list)
    notify: Notify | None = None  # who is told when it ends

    @property
    def warnings(self) -> list[str]:
        judge_default = self.judge and self.max_iterations == JUDGE_MAX_ITERATIONS
        if self.max_iterations > WARN_ABOVE_ITERATIONS and not judge_default:
            return [
                f"--max-iterations {self.max_iterations} is above {WARN_ABOVE_ITERATIONS}: "
                "long loops burn quota; /cancel-ralph stops it at any time"
            ]
        return []


def read_project_file(root: Path, name: str, flag: str) -> str:
    """A text file named by an option, relative to the project root; a one-line UsageError
    naming the option when it cannot be read (a FIFO or device is refused, never read)."""
    try:
        path = Path(name).expanduser()
    except RuntimeError:  # `~someone` with no such user, or no home directory
        raise UsageError(f"{flag} {shown_name(name)}: cannot find that home directory; "
                         "give a path relative to the project root") from None
    return read_text(path if path.is_absolute() else root / path,
                     subject=f"{flag} {shown_name(name)}",
                     missing=f" under {root}; give a path relative to the project root")


def _check_plan_inside(root: Path, name: str) -> None:
    """The loop writes to its plan (each iteration's entry): the plan must be a file of the
    project, where its path and any link on the way lead, never a file elsewhere."""
    import os

    path = Path(name).expanduser()
    top = os.path.realpath(root)
    where = os.path.realpath(path if path.is_absolute() else root / path)
    if os.path.commonpath([top, where]) != top:
        raise UsageError(f"--plan {shown_name(name)} is outside the project, and the loop "
                         f"writes to its plan: copy it under {root} (tasks/todo.md, say)")


NOTEBOOK = "tasks/todo.md"
CONFIG = ".finesse/config.json"


def project_prices(root: Path) -> list[Price]:
    """The price table a loop's cost estimate uses: the package's (finesse.spend), with the
    families the project sets under `prices` in .finesse/config.json laid over it
    (`{"claude-opus": {"input": 5, "output": 25, "cache_write": 6.25, "cache_read": 0.5}}`,
    dollars per million tokens)."""
    from finesse.support import json_text

    try:
        text = read_text(root / CONFIG, subject=CONFIG, limit=256 * 1024)
    except UsageError as err:
        if getattr(err, "kind", "") == "missing":
            return list(DEFAULT_PRICES)
        raise
    try:
        table = json_text.loads(text).get("prices", {})
        custom = [Price(family, float(fields["input"]), float(fields["output"]),
                        float(fields["cache_write"]), float(fields["cache_read"]))
                  for family, fields in table.items()]
    except (ValueError, TypeError, KeyError, AttributeError):
        raise UsageError(f'{CONFIG}: "prices" must map a model family to '
                         '{"input", "output", "cache_write", "cache_read"} dollars per million '
                         "tokens; fix it or remove it") from None
    named = {price.family for price in custom}
    return custom + [price for price in DEFAULT_PRICES if price.family not in named]


def find_notebook(root: Path) -> str | None:
    """`tasks/todo.md` when the project has one with the seed's `## Attempts` heading: the
    loop then records its attempts and review there too. A file without that heading, not
    a regular file, or unreadable is never touched. Its presence never starts a loop."""
    try:
        text = read_text(root / NOTEBOOK, subject=NOTEBOOK)
    except UsageError:
        return None
    return NOTEBOOK if ATTEMPTS in parse_sections(text) else None


def plan_prompt(plan_file: str) -> str:
    return (
        f"Work through the plan in {plan_file}: read it, take the first incomplete, unblocked "
        "task, do it (test first for behaviour changes), run its verification, and tick it "
        "off in the plan."
    )


def resolve(args: LoopArgs, root: Path) -> StartRequest:
    """Read the files the arguments name and make the start request."""
    request = StartRequest(
        prompt=args.prompt, max_iterations=args.max_iterations, verify=list(args.verify),
        gate=list(args.gate), quiesce_after=args.quiesce_after,
        timeout_minutes=args.timeout_minutes, force=args.force, allow_dirty=args.allow_dirty,
        effort=args.effort, budgets=args.budgets, judge=args.judge,
        criteria=list(args.criteria),
    )
    if args.budgets.max_cost is not None or args.budgets.max_tokens is not None:
        request.prices = project_prices(root)
    request.notify = project_notify(args.notify, args.notify_cmd, root)
    if args.promise is not None:
        request.promise = args.promise
    elif args.promise_file is not None:
        text = read_project_file(root, args.promise_file, "--completion-promise-file")
        request.promise = check_promise_file(
            text, f"--completion-promise-file {shown_name(args.promise_file)}")
        request.promise_file = args.promise_file
    if args.prompt_file is not None:
        request.prompt = read_project_file(root, args.prompt_file, "--prompt-file").strip()
        request.prompt_file = args.prompt_file
        if not request.prompt:
            raise UsageError(
                f"--prompt-file {shown_name(args.prompt_file)} is empty: write the task in it"
            )
    if args.plan_file is not None:
        text = read_project_file(root, args.plan_file, "--plan")
        _check_plan_inside(root, args.plan_file)
        for command in check_plan(text, path=args.plan_file, extra_verify=request.verify):
            if command not in request.verify:
                request.verify.append(command)
        request.gate += [command for command in gate_commands(text)
                         if command not in request.gate]
        request.plan_file = args.plan_file
        if args.judge:
            request.criteria += [criterion for criterion in acceptance_criteria(text)
                                 if criterion not in request.criteria]
        if not request.prompt:
            request.prompt = plan_prompt(args.plan_file)
    if not request.prompt:
        raise UsageError(f"the prompt is empty: type {LOOP_USAGE}")
    size = len(request.prompt.encode("utf-8", errors="surrogatepass"))
    if size > MAX_TEXT_BYTES:
        raise UsageError(f"the prompt is {size:,} bytes, over the 1 MiB a loop carries into "
                         "every iteration: shorten it, or point at the long part from a file")
    request.notebook = request.plan_file or (None if args.no_plan else find_notebook(root))
    if request.allow_dirty and not request.gate:
        raise UsageError("--allow-dirty is for gate mode: add --gate CMD, or drop it")
    if args.judge:
        _check_judge(request, args, root)
    return request


def _check_judge(request: StartRequest, args: LoopArgs, root: Path) -> None:
    """Judge mode refuses to start, in one line, without a criterion to judge against and a
    verifier to prove it; its protected paths must exist inside the project."""
    if not request.criteria:
        raise UsageError('judge mode needs at least one acceptance criterion: add --criteria '
                         '"TEXT", or a plan (--plan) with items under ## Acceptance Criteria')
    if not request.verify:
        raise UsageError('judge mode needs at least one verifier: add --verify "CMD", or a '
                         "plan (--plan) with commands under ## Verification Commands")
    request.protect = check_protect(root, args.protect)


def start_request(args: str, root: Path, *, command: str = "ralph-loop") -> StartRequest:
    """`/ralph-loop` (or `/finesse-execute`) arguments as typed, to a start request."""
    return resolve(parse_loop_args(args, command=command), root)
