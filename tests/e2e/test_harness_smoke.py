"""Proves the e2e harness and the fake Messages API against the real CLI.

Also pins down CLI behaviour the plugin's own e2e tests lean on: how a blocking
Stop hook continues a session, how ``--resume`` carries a conversation on, and
how ``--max-turns`` ends a run whose Stop hook never lets it stop.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fakeapi import (
    COMPACT_SUMMARY,
    EXHAUSTED_TEXT,
    FakeModel,
    bash,
    last_user_text,
    text,
    tool_use,
)
from tests.e2e.harness import SCRIPTS, SMOKE_PLUGIN, ClaudeRun, ClaudeRunner, claude_env

pytestmark = pytest.mark.e2e


def _post(url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        status, payload = err.code, err.read()
        err.close()
        return status, payload


def _sse_events(payload: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :])
        for line in payload.decode().splitlines()
        if line.startswith("data: ")
    ]


def _ok(run: ClaudeRun) -> None:
    assert run.returncode == 0, run.describe()
    assert run.result is not None, run.describe()
    assert run.result.get("is_error") is False, run.describe()


# -- the fake server on its own ---------------------------------------------


def test_fake_api_streams_script_and_records_calls() -> None:
    with FakeModel([[bash("echo x"), text("after")], [text("second")]]) as model:
        assert model.base_url.startswith("http://127.0.0.1:")
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 32000,
            "stream": True,
            "tools": [{"name": "Bash"}],
            "messages": [{"role": "user", "content": "go"}],
        }
        status, payload = _post(model.base_url + "/v1/messages?beta=true", body)
        assert status == 200
        events = _sse_events(payload)
        assert [e["type"] for e in events] == [
            "message_start",
            *["content_block_start", "content_block_delta", "content_block_stop"] * 2,
            "message_delta",
            "message_stop",
        ]
        assert events[1]["content_block"]["name"] == "Bash"
        assert json.loads(events[2]["delta"]["partial_json"]) == {
            "command": "echo x",
            "description": "run",
        }
        assert events[-2]["delta"]["stop_reason"] == "tool_use"

        reply_to: dict[str, Any] = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x out"}],
        }
        status, payload = _post(
            model.base_url + "/v1/messages",
            dict(body, stream=False, messages=[reply_to]),
        )
        message = json.loads(payload)
        assert message["content"] == [{"type": "text", "text": "second"}]
        assert message["stop_reason"] == "end_turn"

        _, payload = _post(model.base_url + "/v1/messages", dict(body, stream=False))
        assert json.loads(payload)["content"][0]["text"] == EXHAUSTED_TEXT

        status, payload = _post(model.base_url + "/v1/messages/count_tokens", body)
        assert status == 200 and json.loads(payload)["input_tokens"] > 0
        status, _ = _post(model.base_url + "/v1/other", body)
        assert status == 404

    assert model.call_count == 3
    assert model.exhausted
    assert model.last_user_text(1) == "x out"
    assert len(model.unhandled) == 1
    assert model.side_calls == []


def test_fake_api_side_calls_do_not_consume_the_script() -> None:
    base = {"model": "claude-sonnet-4-5", "max_tokens": 32000, "tools": [{"name": "Bash"}]}
    with FakeModel([[text("main")]]) as model:
        _post(
            model.base_url + "/v1/messages",
            dict(base, max_tokens=1, messages=[{"role": "user", "content": "quota"}]),
        )
        _post(
            model.base_url + "/v1/messages",
            dict(
                base,
                tools=[],
                output_config={"format": {"type": "json_schema"}},
                messages=[{"role": "user", "content": "judge"}],
            ),
        )
        _post(
            model.base_url + "/v1/messages",
            dict(
                base,
                messages=[
                    {
                        "role": "user",
                        "content": "please create a detailed summary of the conversation",
                    }
                ],
            ),
        )
        _, payload = _post(
            model.base_url + "/v1/messages",
            dict(base, messages=[{"role": "user", "content": "real"}]),
        )
    assert json.loads(payload)["content"][0]["text"] == "main"
    assert model.call_count == 1
    assert len(model.side_calls) == 3
    assert [r.kind for r in model.requests] == ["side", "side", "compact", "main"]


def test_fake_api_callable_entry_and_its_errors() -> None:
    def react(body: dict[str, Any]) -> list[dict[str, Any]]:
        return [text("you said " + body["messages"][-1]["content"])]

    def broken(body: dict[str, Any]) -> list[dict[str, Any]]:
        raise ValueError("boom")

    base = {"model": "m", "max_tokens": 32000, "messages": [{"role": "user", "content": "hey"}]}
    with FakeModel([react]) as model:
        _, payload = _post(model.base_url + "/v1/messages", base)
    assert json.loads(payload)["content"][0]["text"] == "you said hey"

    with pytest.raises(AssertionError, match="boom"), FakeModel([broken]) as model:
        _post(model.base_url + "/v1/messages", base)


def test_env_hides_the_real_setup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "real-token")
    monkeypatch.setenv("CLAUDE_CODE_USE_BEDROCK", "1")
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    env = claude_env(home=tmp_path, base_url="http://127.0.0.1:1234", extra={"X_TEST": "1"})
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:1234"
    assert "ANTHROPIC_AUTH_TOKEN" not in env
    assert "CLAUDE_CODE_USE_BEDROCK" not in env
    assert "CLAUDECODE" not in env
    assert env["HOME"] == str(tmp_path)
    assert env["PATH"].split(":")[0] == str(Path(sys.executable).parent)
    assert env["PYTHONPATH"].split(":") == [str(SCRIPTS), "/elsewhere"]
    assert env["FINESSE_RUNTIME"] == "inherit"
    assert env["X_TEST"] == "1"
    assert "IS_SANDBOX" not in env
    bypass = claude_env(home=tmp_path, base_url="x", permission_mode="bypassPermissions")
    assert bypass["IS_SANDBOX"] == "1"


# -- the real CLI ----------------------------------------------------------


def test_scripted_bash_really_runs(run_claude: ClaudeRunner, project: Path) -> None:
    with FakeModel([[bash("echo hi > made.txt")], [text("made it")]]) as model:
        run = run_claude("make the file", cwd=project, model=model, plugin_dir=None)
    _ok(run)
    assert (project / "made.txt").read_text() == "hi\n"
    assert model.call_count == 2, model.calls
    assert not model.exhausted
    assert "make the file" in model.last_user_text(0)
    assert run.text == "made it"
    assert run.session_id
    assert run.transcript_path is not None and run.transcript_path.exists()


def test_prompt_is_passed_verbatim(run_claude: ClaudeRunner, project: Path) -> None:
    prompt = "--looks-like-an-option; $(touch pwned) 'quoted'"
    with FakeModel([[text("ok")]]) as model:
        run = run_claude(prompt, cwd=project, model=model, plugin_dir=None)
    _ok(run)
    assert model.last_user_text(0).rstrip().endswith(prompt)
    assert not (project / "pwned").exists()


def test_stop_hook_blocks_once(run_claude: ClaudeRunner, project: Path, tmp_path: Path) -> None:
    log = tmp_path / "hook.jsonl"
    with FakeModel([[text("first stop")], [text("second stop")]]) as model:
        run = run_claude(
            "hello",
            cwd=project,
            model=model,
            plugin_dir=SMOKE_PLUGIN,
            env={"SMOKE_HOOK_LOG": str(log)},
        )
    _ok(run)
    assert model.call_count == 2, model.calls
    assert "SMOKE-CONTINUE" in model.last_user_text(1)
    assert "SMOKE-CONTINUE" not in model.last_user_text(0)
    assert run.text == "second stop"

    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert [s["input"]["stop_hook_active"] for s in seen] == [False, True]
    assert [s["input"]["last_assistant_message"] for s in seen] == ["first stop", "second stop"]
    # `python3` on the hook's PATH is the interpreter running the tests.
    assert Path(seen[0]["python"]).parent == Path(sys.executable).parent
    assert seen[0]["env"]["FINESSE_RUNTIME"] == "inherit"
    assert seen[0]["env"]["PYTHONPATH"].split(":")[0].endswith("scripts")


def test_resume_continues_the_session(run_claude: ClaudeRunner, project: Path) -> None:
    with FakeModel([[text("first answer")], [text("second answer")]]) as model:
        first = run_claude("first prompt", cwd=project, model=model, plugin_dir=None)
        _ok(first)
        assert first.session_id
        second = run_claude(
            "second prompt", cwd=project, model=model, plugin_dir=None, resume=first.session_id
        )
    _ok(second)
    assert second.session_id == first.session_id
    assert second.text == "second answer"
    assert model.call_count == 2
    history = model.calls[1]["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert "first prompt" in model.all_text(1)
    assert "first answer" in model.all_text(1)
    assert model.last_user_text(1).rstrip().endswith("second prompt")


def test_max_turns_ends_a_run_whose_stop_hook_keeps_blocking(
    run_claude: ClaudeRunner, project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "hook.jsonl"
    script = [[text(f"reply {i}")] for i in range(10)]
    with FakeModel(script) as model:
        run = run_claude(
            "loop",
            cwd=project,
            model=model,
            plugin_dir=SMOKE_PLUGIN,
            extra_args=["--max-turns", "3"],
            env={"SMOKE_STOP_MODE": "always", "SMOKE_HOOK_LOG": str(log)},
        )
    assert model.call_count == 3, run.describe()
    # The hook still ran after the last reply; the cap overrode its block.
    assert len(log.read_text().splitlines()) == 3
    assert run.returncode == 1, run.describe()
    assert run.result is not None
    assert run.result["subtype"] == "error_max_turns"
    assert run.result["terminal_reason"] == "max_turns"
    assert run.result["is_error"] is True
    assert "result" not in run.result
    # The CLI reports one turn more than the model calls it made.
    assert run.result["num_turns"] == 4


def test_max_turns_counts_tool_rounds_too(run_claude: ClaudeRunner, project: Path) -> None:
    script = [[bash(f"echo {i} >> log.txt")] for i in range(5)]
    with FakeModel(script) as model:
        run = run_claude(
            "work", cwd=project, model=model, plugin_dir=None, extra_args=["--max-turns", "2"]
        )
    assert model.call_count == 2, run.describe()
    assert (project / "log.txt").read_text() == "0\n1\n"
    assert run.result is not None and run.result["subtype"] == "error_max_turns"


def test_prompt_hook_evaluation_is_a_side_call(run_claude: ClaudeRunner, project: Path) -> None:
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "Done? $ARGUMENTS"}]}]}}
    with FakeModel([[text("the only reply")]]) as model:
        run = run_claude(
            "hi",
            cwd=project,
            model=model,
            plugin_dir=None,
            extra_args=["--settings", json.dumps(settings)],
        )
    _ok(run)
    assert model.call_count == 1
    assert [r.kind for r in model.requests] == ["main", "side"]


def test_compact_is_not_a_main_call(run_claude: ClaudeRunner, project: Path) -> None:
    with FakeModel([[text("before")], [text("after")]]) as model:
        first = run_claude("one", cwd=project, model=model, plugin_dir=None)
        _ok(first)
        compact = run_claude(
            "/compact", cwd=project, model=model, plugin_dir=None, resume=first.session_id
        )
        _ok(compact)
        after = run_claude(
            "two", cwd=project, model=model, plugin_dir=None, resume=first.session_id
        )
    _ok(after)
    assert model.call_count == 2
    assert [r.kind for r in model.requests] == ["main", "compact", "main"]
    assert "Fake summary" in model.all_text(1)
    assert "Fake summary" in COMPACT_SUMMARY


def test_subagent_turns_use_their_own_script(run_claude: ClaudeRunner, project: Path) -> None:
    agent = tool_use(
        "Agent",
        {"description": "sub", "prompt": "do the sub thing", "subagent_type": "general-purpose"},
    )
    with FakeModel(
        [[agent], [text("waiting")], [text("main done")]],
        subagent_script=[[text("sub result")]],
    ) as model:
        run = run_claude(
            "delegate",
            cwd=project,
            model=model,
            plugin_dir=None,
            extra_args=["--allowedTools", "Agent"],
        )
    _ok(run)
    assert len(model.subagent_calls) == 1
    assert "do the sub thing" in last_user_text(model.subagent_calls[0])
    # The agent runs in the background: the main model hears of its result in
    # a turn of its own, after the turn that launched it has ended.
    assert model.call_count == 3, model.replies
    assert "sub result" in model.last_user_text(2)


def test_bypass_permissions_works_as_root(run_claude: ClaudeRunner, project: Path) -> None:
    target = project / "written.txt"
    write = tool_use("Write", {"file_path": str(target), "content": "by write\n"})
    with FakeModel([[write], [text("denied")]]) as model:
        denied = run_claude("write it", cwd=project, model=model, plugin_dir=None)
    _ok(denied)
    assert not target.exists()
    assert denied.result is not None and denied.result["permission_denials"]

    write = tool_use("Write", {"file_path": str(target), "content": "by write\n"})
    with FakeModel([[write], [text("written")]]) as model:
        run = run_claude(
            "write it",
            cwd=project,
            model=model,
            plugin_dir=None,
            permission_mode="bypassPermissions",
        )
    _ok(run)
    assert target.read_text() == "by write\n"
