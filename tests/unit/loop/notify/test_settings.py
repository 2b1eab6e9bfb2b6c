"""Who is told when a loop ends: `--notify` and `--notify-cmd` as typed, checked in one line
each; the project's config when the arguments say nothing; the state keeps it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from finesse.errors import UsageError
from finesse.loop.grammar import parse_loop_args
from finesse.loop.lifecycle import start_loop
from finesse.loop.request import start_request
from finesse.models import LoopState, Notify
from tests.helpers.states import SESSION, T0, make_state, store_for


def config(root: Path, **keys: object) -> None:
    (root / ".finesse").mkdir(exist_ok=True)
    (root / ".finesse" / "config.json").write_text(json.dumps(keys), encoding="utf-8")


def test_the_arguments_as_typed(tmp_path: Path) -> None:
    request = start_request(
        '"Fix it" --notify desktop --notify https://hooks.example.test/T0/B1?x=1 '
        "--notify-cmd \"notify-me --title 'loop ended'\" --notify desktop", tmp_path)
    assert request.notify == Notify(
        targets=["desktop", "https://hooks.example.test/T0/B1?x=1"],
        commands=["notify-me --title 'loop ended'"])
    assert request.prompt == "Fix it"


def test_nothing_given_and_no_config_tells_nobody(tmp_path: Path) -> None:
    assert start_request('"Fix it"', tmp_path).notify is None


@pytest.mark.parametrize(("typed", "error"), [
    ("--notify ftp://host/x", "--notify needs desktop or an http(s) URL, not 'ftp://host/x': "
     "for example --notify desktop or --notify https://hooks.slack.com/services/..."),
    ("--notify file:///etc/passwd", "--notify needs desktop or an http(s) URL, not "
     "'file:///etc/passwd': for example --notify desktop or --notify "
     "https://hooks.slack.com/services/..."),
    ("--notify https://", "--notify needs desktop or an http(s) URL, not 'https://': for "
     "example --notify desktop or --notify https://hooks.slack.com/services/..."),
    ("--notify Desktop", "--notify needs desktop or an http(s) URL, not 'Desktop': for "
     "example --notify desktop or --notify https://hooks.slack.com/services/..."),
    ("--notify-cmd \"say 'unclosed\"", "--notify-cmd \"say 'unclosed\" cannot be split into "
     "words (No closing quotation): check its quotes, e.g. --notify-cmd \"notify-me --title "
     "'loop ended'\""),
    ("--notify-cmd ' '", '--notify-cmd needs a command, e.g. --notify-cmd "notify-me --loop"'),
    ("--notify", "--notify needs a value: type " + (
        '/ralph-loop "PROMPT" [--max-iterations N] [--completion-promise TEXT] '
        "[--prompt-file PATH] [--completion-promise-file PATH] [--verify CMD] [--plan PATH] "
        "[--no-plan] [--quiesce-after N] [--timeout-minutes N] [--gate CMD] [--allow-dirty] "
        "[--effort LEVEL] [--max-tokens N] [--max-cost USD] [--stop-at-quota PERCENT] "
        "[--judge --criteria TEXT --protect PATH] [--notify desktop|URL] [--notify-cmd CMD]")),
])
def test_a_bad_value_is_refused_in_one_line(typed: str, error: str) -> None:
    with pytest.raises(UsageError) as refused:
        parse_loop_args(f'"Fix it" {typed}')
    assert str(refused.value) == error


def test_at_most_eight_in_all() -> None:
    with pytest.raises(UsageError) as refused:
        parse_loop_args('"x" ' + " ".join(f"--notify https://h{n}.test/" for n in range(9)))
    assert str(refused.value) == ("at most 8 --notify and --notify-cmd in all: one command "
                                  "can tell the rest")


def test_the_config_applies_when_the_arguments_say_nothing(tmp_path: Path) -> None:
    config(tmp_path, notify=["desktop", "http://127.0.0.1:9/hook"], notify_cmd="logger ended")
    assert start_request('"Fix it"', tmp_path).notify == Notify(
        targets=["desktop", "http://127.0.0.1:9/hook"], commands=["logger ended"])


def test_an_argument_replaces_the_config_s_key_of_its_kind_only(tmp_path: Path) -> None:
    config(tmp_path, notify="desktop", notify_cmd=["logger ended"])
    assert start_request('"x" --notify https://h.test/a', tmp_path).notify == Notify(
        targets=["https://h.test/a"], commands=["logger ended"])
    assert start_request('"x" --notify-cmd "echo hi"', tmp_path).notify == Notify(
        targets=["desktop"], commands=["echo hi"])


@pytest.mark.parametrize(("keys", "error"), [
    ({"notify": "smtp://mail"}, '.finesse/config.json "notify" needs desktop or an http(s) '
     "URL, not 'smtp://mail': for example --notify desktop or --notify "
     "https://hooks.slack.com/services/..."),
    ({"notify": 3}, '.finesse/config.json: "notify" must be a string or a list of strings; '
     "fix it or remove it"),
    ({"notify_cmd": ["ok", 1]}, '.finesse/config.json: "notify_cmd" must be a string or a '
     "list of strings; fix it or remove it"),
])
def test_a_bad_config_is_refused_in_one_line_before_anything_starts(
        tmp_path: Path, keys: dict[str, object], error: str) -> None:
    config(tmp_path, **keys)
    with pytest.raises(UsageError) as refused:
        start_request('"Fix it"', tmp_path)
    assert str(refused.value) == error
    assert not (tmp_path / ".claude").exists()


def test_a_config_that_is_a_fifo_is_refused_never_opened(tmp_path: Path) -> None:
    (tmp_path / ".finesse").mkdir()
    os.mkfifo(tmp_path / ".finesse" / "config.json")
    with pytest.raises(UsageError) as refused:
        start_request('"Fix it"', tmp_path)
    assert str(refused.value) == (".finesse/config.json: not a regular file (a FIFO, device "
                                  "or socket); give a plain file")


def test_the_state_keeps_it_and_an_old_state_file_without_it_loads(tmp_path: Path) -> None:
    store = store_for(tmp_path)
    request = start_request('"Fix it" --notify desktop --notify-cmd "echo hi"', tmp_path)
    with store.locked(SESSION):
        state = start_loop(store, SESSION, request, T0)
    assert store.load(SESSION) == state
    assert state.notify == Notify(targets=["desktop"], commands=["echo hi"])
    old = json.loads(make_state(tmp_path).to_json())
    del old["notify"]
    assert LoopState.from_json(json.dumps(old)) == make_state(tmp_path)
