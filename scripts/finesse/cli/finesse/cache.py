"""`finesse cache`: show, add to, prune and clear the exploration cache of a project.

Paths given here are relative to the current directory and stored relative to the git top
level. The domain work is in `finesse.authoring.cache`; this module parses and prints.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NoReturn

import click

from finesse.authoring.cache.model import Baseline, CacheEntry, ExplorationCache
from finesse.authoring.cache.store import CacheStore, CacheView, GitHistory
from finesse.errors import UsageError
from finesse.state.paths import find_project_root
from finesse.state.store import utcnow

project_option = click.option(
    "--project", type=click.Path(file_okay=False), default=None,
    help="Project root (default: $CLAUDE_PROJECT_DIR, else the git top level of the cwd).",
)


def _store(project: str | None) -> CacheStore:
    root = Path(project).resolve() if project else find_project_root(os.environ, os.getcwd())
    return CacheStore(root)


def _warn(view: CacheView) -> None:
    if view.notice:
        click.echo(f"warning: {view.notice}", err=True)


@click.group("cache", invoke_without_command=True)
@click.pass_context
def command(ctx: click.Context) -> None:
    """The exploration cache: what planning learned about this project, while still true."""
    # Help by hand: the group's no-args UsageError would be squeezed into one error line.
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@command.command()
@project_option
@click.option("--json", "as_json", is_flag=True, help="Print the cache as JSON.")
def show(project: str | None, as_json: bool) -> None:
    """The cache without its stale entries (the file is left as it is)."""
    store = _store(project)
    enabled = store.config.cache_enabled
    view = store.load() if enabled else CacheView(ExplorationCache())
    _warn(view)
    if as_json:
        click.echo(json.dumps({
            "path": str(store.path),
            "enabled": enabled,
            "cache": view.cache.model_dump(mode="json"),
            "stale": view.dropped,
            "discarded": view.discarded,
        }, indent=2, ensure_ascii=False))
        return
    if not enabled:
        click.echo("The exploration cache is off (cache_enabled is false in "
                   ".finesse/config.json).")
        return
    click.echo(render(store.path, view))


def render(path: Path, view: CacheView) -> str:
    lines = [f"Exploration cache: {path}"]
    baseline = view.cache.baseline
    if baseline is not None:
        lines.append(f"Baseline at {baseline.commit_hash[:7]}, confirmed "
                     f"{baseline.last_confirmed:%Y-%m-%d %H:%M} UTC")
        for label, value in (("test framework", baseline.test_framework),
                             ("architecture", baseline.architecture_style),
                             ("key directories", ", ".join(
                                 f"{directory} ({role})"
                                 for directory, role in baseline.key_directories.items())),
                             ("file structure", ", ".join(baseline.file_structure_patterns)),
                             ("naming", ", ".join(baseline.naming_conventions))):
            if value:
                lines.append(f"  {label}: {value}")
    for key, entry in view.cache.entries.items():
        lines.append(f"{key} (at {entry.commit_hash[:7]}; "
                     f"keywords: {', '.join(entry.keywords)})")
        lines.append(f"  {entry.summary}")
        lines.append(f"  files: {', '.join(entry.referenced_files)}")
    if baseline is None and not view.cache.entries:
        lines.append("Empty.")
    if view.discarded:
        lines.append(f"Stale as a whole: {view.discarded}. "
                     "Run `finesse cache prune` to drop it.")
    elif view.dropped:
        them = "it" if len(view.dropped) == 1 else "them"
        lines.append(f"{_entries(len(view.dropped), 'stale ')} left out; "
                     f"`finesse cache prune` drops {them}:")
        lines += [f"  {key}: {why}" for key, why in view.dropped.items()]
    return "\n".join(lines)


@command.command()
@project_option
@click.option("--scope", required=True, metavar="DIR", help="The directory the entry is about.")
@click.option("--keyword", "keywords", required=True, multiple=True,
              help="What the entry is about; the first one names it (<scope>:<keyword>).")
@click.option("--summary", required=True, help="What was learned, in a few sentences.")
@click.option("--file", "files", required=True, multiple=True, metavar="PATH",
              help="A file the summary depends on; the entry goes stale when one changes.")
def add(project: str | None, scope: str, keywords: tuple[str, ...], summary: str,
        files: tuple[str, ...]) -> None:
    """Add an entry, confirmed at HEAD; an entry with the same key is replaced."""
    store = _store(project)
    with GitHistory(store.root) as history:
        scope_path = Path(scope)
        if not scope_path.is_dir():
            raise UsageError(f"--scope {scope!r} is not a directory; give the directory the "
                             "entry is about, relative to the current directory")
        for name in files:
            if not Path(name).is_file():
                raise UsageError(f"--file {name!r} is not a file; name files that exist, "
                                 "relative to the current directory")
        entry = CacheEntry(
            summary=summary.strip() or _refuse_empty("--summary"),
            referenced_files=[history.relative(Path(name)) for name in files],
            keywords=[word.strip() or _refuse_empty("--keyword") for word in keywords],
            directory_scope=history.relative(scope_path),
            last_confirmed=utcnow(),
            commit_hash=history.head(),
        )
        view = store.add([entry], history=history)
    _warn(view)
    verb = "Replaced" if entry.key in view.replaced else "Added"
    click.echo(f"{verb} {entry.key} ({len(entry.referenced_files)} "
               f"file{'s' if len(entry.referenced_files) != 1 else ''}, "
               f"at {entry.commit_hash[:7]}).")


@command.command()
@project_option
@click.option("--test-framework", default=None, help="e.g. pytest.")
@click.option("--architecture", default=None, help="The architecture style, in a phrase.")
@click.option("--pattern", "patterns", multiple=True, help="A file structure pattern.")
@click.option("--naming", "naming", multiple=True, help="A naming convention.")
@click.option("--key-dir", "key_dirs", multiple=True, metavar="DIR=RESPONSIBILITY",
              help="A key directory and what it is responsible for, e.g. "
                   "'src/api=HTTP handlers'.")
def baseline(project: str | None, test_framework: str | None, architecture: str | None,
             patterns: tuple[str, ...], naming: tuple[str, ...],
             key_dirs: tuple[str, ...]) -> None:
    """Record a full exploration's baseline at HEAD, replacing the old one whole."""
    store = _store(project)
    with GitHistory(store.root) as history:
        new = Baseline(
            commit_hash=history.head(), last_confirmed=utcnow(),
            file_structure_patterns=list(patterns), test_framework=test_framework,
            naming_conventions=list(naming), architecture_style=architecture,
            key_directories=dict(_key_dir(text) for text in key_dirs),
        )
        view = store.add([], baseline=new, history=history)
    _warn(view)
    click.echo(f"Baseline recorded at {new.commit_hash[:7]}.")


@command.command()
@project_option
def prune(project: str | None) -> None:
    """Drop the stale entries from the file, and say which went and why."""
    store = _store(project)
    view = store.prune()
    _warn(view)
    if view.discarded:
        click.echo(f"Discarded the whole cache ({_entries(len(view.dropped))} and the "
                   f"baseline): {view.discarded}.")
    elif view.dropped:
        click.echo(f"Dropped {_entries(len(view.dropped), 'stale ')}:")
        for key, why in view.dropped.items():
            click.echo(f"  {key}: {why}")
    else:
        click.echo(f"Nothing stale; {_entries(len(view.cache.entries))} kept.")


@command.command()
@project_option
def clear(project: str | None) -> None:
    """Delete the cache: entries and baseline."""
    store = _store(project)
    if store.clear():
        click.echo(f"Cleared the exploration cache ({store.path}).")
    else:
        click.echo(f"No exploration cache at {store.path}.")



def _key_dir(text: str) -> tuple[str, str]:
    directory, _, role = text.partition("=")
    if not directory.strip() or not role.strip():
        raise UsageError(f"--key-dir takes DIR=RESPONSIBILITY, e.g. --key-dir 'src/api=HTTP "
                         f"handlers'; not {text!r}")
    return directory.strip(), role.strip()


def _entries(count: int, adjective: str = "") -> str:
    return f"{count} {adjective}entr{'y' if count == 1 else 'ies'}"


def _refuse_empty(flag: str) -> NoReturn:
    raise UsageError(f"{flag} is empty; give it some text")

