"""The shell of the workflow's `run:` steps (bash, as GitHub runs it: `-e`, `-o pipefail`).

Values from the workflow's expressions reach a script only through its `env:`, never pasted
into it, so nothing a person types into the dispatch form is ever run as shell. Every other
word written here is quoted by `shlex`. A step that stops the run says why with an
`::error::` line, which GitHub shows on the run's page.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from finesse.headless.ci.install import CLAUDE_CODE_PACKAGE, CLAUDE_CODE_VERSION
from finesse.headless.ci.plan import CiPlan, CiTask

LINE = 92  # a long command is wrapped at about this width
LOOP_JSON = "$RUNNER_TEMP/ralph-run.json"  # what `ralph run --json` prints, for --end-task
KEEP = "ralph-report"  # under $RUNNER_TEMP: what a sub-workflow's job uploads
REPORTS = "ralph-reports"  # under $RUNNER_TEMP: what a merge job downloads
BOT_NAME = "github-actions[bot]"
BOT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com"


class Shell(str):
    """A word already written as shell (a quoted variable, a redirection): kept as it is."""


def command(words: Sequence[str], indent: str = "") -> list[str]:
    """`words` quoted as one command, an option and its values kept together, wrapped
    before an option once a line is long."""
    units: list[list[str]] = []
    for word in words:
        quoted = word if isinstance(word, Shell) else shlex.quote(word)
        if not units or word.startswith(("--", ">")):
            units.append([quoted])
        else:
            units[-1].append(quoted)
    lines = [indent + " ".join(units[0])]
    for unit in units[1:]:
        text = " ".join(unit)
        if len(lines[-1]) + 1 + len(text) > LINE:
            lines[-1] += " \\"
            lines.append(f"{indent}  {text}")
        else:
            lines[-1] += " " + text
    return lines


def _error(message: str) -> str:
    """`echo` of a GitHub error line: `$TASK`, `$BASE`, `$file` and `$wave` in `message` are
    those shell variables' values, every other character is literal."""
    # A command in a message is in double quotes: backticks in it would read as shell to a
    # reader of the script (and to shellcheck).
    message = message.replace("`", '"')
    parts = re.split(r"(\$(?:TASK|BASE|file|wave)\b)", "::error::" + message)
    return "echo " + "".join(f'"{part}"' if part.startswith("$") else shlex.quote(part)
                             for part in parts if part)


def ralph_ci(plan: CiPlan, *words: str) -> list[str]:
    """`ralph ci PLAN_DIR ...`, in the project (`--project .` when it is not the top)."""
    return [*(["--project", "."] if plan.project != "." else []), plan.plan_dir, *words]


def again(plan: CiPlan, *words: str) -> str:
    """The `ralph ci` command a workflow's error asks the user to run, from the repository's
    top where they read it: `--project` names a monorepo's project folder."""
    project = ["--project", plan.project] if plan.project != "." else []
    return shlex.join(["ralph", "ci", *project, plan.plan_dir, *words])


def credential_check(plan: CiPlan) -> str:
    secret = plan.settings.secret
    how = ("make one with `claude setup-token`, then add it" if plan.settings.auth == "oauth"
           else "add it")
    other = (("api-key", "ANTHROPIC_API_KEY (an API key)") if plan.settings.auth == "oauth"
             else ("oauth", "CLAUDE_CODE_OAUTH_TOKEN (a subscription)"))
    return "\n".join([
        'if [ "$CREDENTIAL_SET" != true ]; then',
        "  " + _error(f"The repository secret {secret} is not set: {how} (Settings, Secrets "
                      "and variables, Actions), or write the workflow again with "
                      f"`{again(plan, '--auth', other[0])}` to use "
                      f"{other[1]} instead."),
        "  exit 1",
        "fi", ""])


def plan_check(plan: CiPlan) -> str:
    """Check that the plan on the base branch is the one the workflow was written from, and
    turn the `waves` input into `,1,2,` for the jobs' conditions."""
    numbers = [str(wave[0].wave) for wave in plan.waves]
    lines = ["plan_files=(", *(f"  {shlex.quote(name)}" for name in plan.fingerprinted), ")",
             'for file in "${plan_files[@]}"; do',
             '  if [ ! -f "$file" ]; then',
             "    " + _error(f"$file is not on $BASE: commit and push the plan folder "
                             f"{plan.plan_dir}/, then run this workflow again."),
             "    exit 1", "  fi", "done",
             'fingerprint=$(cat "${plan_files[@]}" | tr -d \'\\r\' | sha256sum | '
             "cut -d ' ' -f 1)",
             f'if [ "$fingerprint" != {plan.fingerprint} ]; then',
             "  " + _error(f"The plan {plan.plan_dir}/ has changed since this workflow was "
                           f"written: run `{again(plan)}` again, then commit and push the "
                           "workflow."),
             "  exit 1", "fi",
             "selected=,",
             "IFS=', ' read -r -a chosen <<< \"$WAVES\"",
             'for wave in "${chosen[@]}"; do',
             '  case "$wave" in',
             f'    {"|".join(numbers)}) selected="$selected$wave," ;;',
             "    *)",
             "      " + _error(f"There is no wave $wave in this plan: give some of "
                               f"{', '.join(numbers)} (such as {','.join(numbers)}), or "
                               "nothing for every wave."),
             "      exit 1", "      ;;", "  esac", "done",
             'if [ "$selected" = , ]; then',
             f"  selected=,{','.join(numbers)},", "fi",
             "{", '  echo "base=$BASE"', '  echo "commit=$(git rev-parse HEAD)"',
             '  echo "waves=$selected"', '} >> "$GITHUB_OUTPUT"', ""]
    return "\n".join(lines)


def install(cli: bool) -> str:
    npm = ["npm", "install", "-g", f"{CLAUDE_CODE_PACKAGE}@{CLAUDE_CODE_VERSION}"]
    return "\n".join([*([shlex.join(npm)] if cli else []), 'pip install "$FINESSE"', ""])


def identity() -> str:
    return "\n".join([shlex.join(["git", "config", "user.name", BOT_NAME]),
                      shlex.join(["git", "config", "user.email", BOT_EMAIL]), ""])


def begin(plan: CiPlan) -> str:
    return "\n".join([*command(["ralph", "ci", *ralph_ci(plan, "--begin-task"),
                                Shell('"$TASK"')]), ""])


def run_loop(plan: CiPlan, wave: tuple[CiTask, ...]) -> str:
    """`ralph run` with the sub-workflow's own arguments, chosen by the matrix's task."""
    project = ["--project", "."] if plan.project != "." else []
    lines = ['case "$TASK" in']
    for task in wave:
        lines.append(f"  {task.name})")
        if any("$" in word or "`" in word for word in task.words):
            lines += ["    # The plan's commands go to ralph run as they are, unexpanded:",
                      "    # shellcheck disable=SC2016"]
        lines += command(["ralph", "run", *project, *task.words, Shell(f'> "{LOOP_JSON}"')],
                         indent="    ")
        lines.append("    ;;")
    lines += ["  *)",
              "    " + _error(f"This workflow has no sub-workflow $TASK in wave "
                              f"{wave[0].wave}: run `{again(plan)}` again."),
              "    exit 1", "    ;;", "esac", ""]
    return "\n".join(lines)


def end(plan: CiPlan) -> str:
    words = ["ralph", "ci", *ralph_ci(plan, "--end-task"), Shell('"$TASK"'), "--loop-json",
             Shell(f'"{LOOP_JSON}"'), "--keep", Shell(f'"$RUNNER_TEMP/{KEEP}"')]
    return "\n".join([*command(words), ""])


def merge(plan: CiPlan, wave: int) -> str:
    words = ["ralph", "ci", *ralph_ci(plan, "--merge-wave", str(wave)), "--reports",
             Shell(f'"$RUNNER_TEMP/{REPORTS}"'), "--waves", Shell('"$WAVES"')]
    return "\n".join([*command(words), ""])
