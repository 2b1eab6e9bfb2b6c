"""Docs that cannot drift: what the README and docs/ name exists, what exists is in them, and
every relative link between them resolves (anchors included)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from finesse.cli.ralph import SUBCOMMANDS as RALPH_SUBCOMMANDS
from finesse.loop.grammar import _VALUE_FLAGS, COMMANDS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PAGES = {path.name: path.read_text(encoding="utf-8") for path in (ROOT / "docs").glob("*.md")}
# The README and every page: what "the docs" document.
DOCS = "\n".join([README, *PAGES.values()])
LOOPS = PAGES["loops.md"]  # the page for loops: the terminal commands and how arguments split


def _frontmatter_name(path: Path) -> str:
    found = re.search(r"^name: (\S+)$", path.read_text(), re.MULTILINE)
    assert found, f"{path} has no name: frontmatter"
    return found.group(1)


def test_every_command_file_is_documented_and_every_documented_command_exists() -> None:
    files = {_frontmatter_name(path) for path in (ROOT / "commands").glob("*.md")}
    documented = set(re.findall(
        r"(?<![\w.-])/(?:finesse:)?((?:ralph|cancel)-[a-z-]+|finesse(?:-[a-z]+)?)\b", DOCS))
    assert documented == files
    # The README shows the everyday ones itself.
    for name in ("ralph-loop", "ralph-status", "cancel-ralph", "ralph-abort", "ralph-resume",
                 "ralph-help", "finesse"):
        assert f"/{name}" in README, name
    assert set(COMMANDS) <= files  # the hook answers only commands that have a file


# Commands the model runs itself: their arguments are plain text in the prompt, which is safe
# only because no command file has a shell block.
MODEL_INVOKED = {"finesse"}


def test_command_files_are_named_after_their_frontmatter_and_no_shell_sees_arguments() -> None:
    for path in (ROOT / "commands").glob("*.md"):
        text = path.read_text()
        assert _frontmatter_name(path) == path.stem
        assert "```!" not in text and "!`" not in text, path
        if path.stem in MODEL_INVOKED:
            assert "disable-model-invocation" not in text, path
        else:
            assert "disable-model-invocation: true" in text, path
            assert "$ARGUMENTS" not in text, path


def test_ralph_subcommands_match_the_loops_page() -> None:
    documented = set(re.findall(r"^ralph ([a-z]+)", LOOPS, re.MULTILINE))
    assert documented == set(RALPH_SUBCOMMANDS)


def test_loop_flags_match_the_reference() -> None:
    table = PAGES["reference.md"].split("### /ralph-loop arguments")[1].split("\n\n")[2]
    documented = set(re.findall(r"`(--[a-z-]+)", table))
    assert documented == {*_VALUE_FLAGS, "--allow-dirty", "--no-plan", "--judge"}


def test_hooks_are_exec_form_python_launchers_that_exist() -> None:
    config = json.loads((ROOT / "hooks" / "hooks.json").read_text())
    for event, groups in config["hooks"].items():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["command"] == "python3", event
                launcher = hook["args"][1].replace("${CLAUDE_PLUGIN_ROOT}", str(ROOT))
                assert Path(launcher).is_file(), launcher
                assert hook["args"][0] == "-S", event
    assert set(config["hooks"]) == {"UserPromptSubmit", "Stop", "SessionStart", "SessionEnd",
                                    "PreToolUse", "SubagentStart", "SubagentStop"}


def test_runtime_requirements_are_the_package_dependencies() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    required = (ROOT / "scripts" / "requirements.txt").read_text().split()
    assert sorted(required) == sorted(declared)


def test_versions_agree() -> None:
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    import finesse

    assert {plugin["version"], market["plugins"][0]["version"], project["version"],
            finesse.__version__} == {"0.1.0"}


def test_the_spend_sample_is_what_a_report_renders() -> None:
    from finesse.hooks.statusline import describe
    from finesse.loop.final_report import spend_section
    from finesse.models import IterationRecord
    from finesse.record import replace as changed
    from finesse.results import ModelUsage
    from tests.helpers.states import T0, command_result, make_state

    def made(number: int, result: str, tokens: int, reads: int, cost: float) -> IterationRecord:
        return IterationRecord(number=number, started_at=T0, ended_at=T0, result=result,
                               usage=[ModelUsage("claude-sonnet-4-5", tokens, 0, 0, reads)],
                               cost=cost)

    state = make_state(ROOT, outcome="success", verified=True, iteration=3, iterations=[
        made(1, "rejected", 18_400, 52_000, 0.13), made(2, "continue", 9_100, 70_000, 0.08),
        made(3, "success", 7_300, 79_000, 0.07)])
    rendered = "\n".join(spend_section(state)[3:-1])
    assert rendered in PAGES["spend.md"]
    red = [command_result("pytest -q", 1)]
    line = describe(changed(state, iteration=3, outcome=None, last_verification=red), None)
    assert line.startswith("ralph 3/8 · verify red · ")
    assert re.search(r"`ralph \d+/\d+ · verify red · [\d.]+k tok ~\$[\d.]+ est · 5h \d+% · "
                     r"7d \d+%`", PAGES["spend.md"])

# How arguments are split, as /ralph-help and the loops page say it: each example the text gives,
# as typed (the text must hold it), and the words it must split into.
SPLIT_EXAMPLES = {
    "\\d+": ["\\d+"],
    "C:\\Users\\me": ["C:\\Users\\me"],
    "don't": ["don't"],
    "O'Brien's": ["O'Brien's"],
    "the users'": ["the", "users'"],
    '\\"': ['"'],
    "\\'": ["'"],
    "\"it's\"": ["it's"],
    "'\"hi\"'": ['"hi"'],
}
DOCUMENTED_SPLIT = ("\\d+", "C:\\Users\\me", "don't", "O'Brien's", '\\"', "\\'", "\"it's\"",
                "'\"hi\"'")


def test_the_splitting_rules_in_the_help_and_the_docs_hold() -> None:
    from finesse.hooks.prompt_submit import HELP
    from finesse.loop.words import split_words

    for typed, words in SPLIT_EXAMPLES.items():
        assert typed in HELP, typed
        assert split_words(typed) == words, typed
    for typed in DOCUMENTED_SPLIT:
        assert f"`{typed}`" in LOOPS, typed
    # What the help states in words: quoted and escaped, inside double quotes, inside single.
    assert split_words('"a \\" b" "C:\\\\x \\d" \'a\\\' \'x y\'') == [
        'a " b', "C:\\x \\d", "a\\", "x y"]
    # "An apostrophe between letters" is kept even with a quote later in the line.
    assert split_words("don't 'x y'") == ["don't", "x y"]


def test_the_prompt_limit_in_the_help_and_the_docs_is_the_code_s(tmp_path: Path) -> None:
    from finesse.errors import UsageError
    from finesse.hooks.prompt_submit import HELP
    from finesse.loop.request import start_request
    from finesse.support.files import MAX_TEXT_BYTES

    assert MAX_TEXT_BYTES == 1024 * 1024
    said = " ".join(HELP.split())
    assert "A prompt holds at most 1 MiB, typed or read with --prompt-file PATH" in said
    assert "A prompt holds at most 1 MiB, typed or read with `--prompt-file`" in " ".join(
        LOOPS.split())
    (tmp_path / "exact.md").write_text("x" * MAX_TEXT_BYTES)
    assert len(start_request("--prompt-file exact.md", tmp_path).prompt) == MAX_TEXT_BYTES
    (tmp_path / "over.md").write_text("x" * (MAX_TEXT_BYTES + 1))
    for args in ("--prompt-file over.md", "x" * (MAX_TEXT_BYTES + 1)):
        try:
            start_request(args, tmp_path)
        except UsageError as err:
            assert "1 MiB" in str(err) and "\n" not in str(err)
        else:
            raise AssertionError(f"{args[:20]}: over 1 MiB, and not refused")


# --- links ------------------------------------------------------------------------------------

_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """The text without fenced blocks and inline code, where a link is only an example."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def _anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to
    hyphens, a repeated one suffixed -1, -2..."""
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", _FENCE.sub("", text), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _broken_links(page: Path) -> list[str]:
    broken = []
    for target in _LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (linked.suffix != ".md" or anchor not in _anchors(
                linked.read_text(encoding="utf-8"))):
            broken.append(f"{target}: no heading with that anchor in {linked.name}")
    return broken


def test_every_relative_link_resolves_anchors_included() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = {page.name: found for page in pages if (found := _broken_links(page))}
    assert broken == {}


def test_the_link_check_finds_a_broken_file_and_a_broken_anchor(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# The `ralph ci` page\n\n## Same\n\n## Same\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#the-ralph-ci-page) [ok](other.md#same-1) [ok](#top)\n"
                    "[gone](missing.md) [bad](other.md#nowhere) `[code](missing.md)`\n"
                    "```\n[fenced](missing.md)\n```\n\n# Top\n")
    assert _broken_links(page) == ["missing.md: no such file",
                                   "other.md#nowhere: no heading with that anchor in other.md"]
