"""A scripted stand-in for the Anthropic Messages API, for driving the real CLI.

Stdlib only; binds 127.0.0.1 on an ephemeral port and nothing else::

    with FakeModel([[text("hi")], [bash("echo x > f.txt"), text("working")]]) as model:
        run_claude("do it", cwd=project, model=model)
    assert model.call_count == 2

Each script entry is one model reply: a list of content blocks (``text``,
``tool_use``, ``bash``), or a callable ``(request_body) -> blocks`` that can
react to what the CLI sent. A reply holding a tool_use block stops with
``tool_use``, any other with ``end_turn``. Once the script is used up every
further main call is answered with ``EXHAUSTED_TEXT`` and still recorded, so
over-calls are visible in ``calls``. A callable that raises gets the CLI a
placeholder reply, and the exception is re-raised when the ``with`` block ends.

``errors`` are HTTP error replies (``HttpError``, e.g. a 429 with rate-limit headers),
one per main request, sent before the script's replies; each is recorded in
``http_errors_sent``.

Routes: ``POST /v1/messages`` (SSE when the body has ``"stream": true``, JSON
otherwise), ``POST /v1/messages/count_tokens`` (``{"input_tokens": N}``). Any
other request is a 404 and lands in ``unhandled``.

What CLI 2.1.328 sends (seen with this server, ``-p``, ``--output-format
json``, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1):

* Only main-conversation turns, one ``POST /v1/messages?beta=true`` per model
  turn, always streamed, ``max_tokens`` 32000, the model from ``--model``. No
  title, topic, quota or haiku calls, no count_tokens: not for plain prompts,
  tool use, Stop hooks, ``--resume``, nor ``--max-turns``. Without the
  nonessential-traffic switch the only extra is a ``HEAD /api/hello``
  connectivity probe (404 here; the CLI carries on).
* Other requests appear only when a test asks for them. They share the
  session id header, metadata and model of the main turns, so they are told
  apart by content (see ``classify``):

  - ``subagent``: turns of an ``Agent`` tool subagent carry the header
    ``x-claude-code-agent-id`` and ``cc_is_subagent=true`` in the billing line
    of the system prompt. The agent runs in the background, interleaved with
    main turns, so it is answered from ``subagent_script`` instead of the main
    script (which would make the order of replies racy).
  - ``compact``: ``/compact`` sends the main system prompt, tools and history
    plus a user message asking to "create a detailed summary of the
    conversation". It is answered with ``COMPACT_SUMMARY``; a reply without
    ``<summary>`` makes the CLI retry.
  - ``side``: a ``type: "prompt"`` hook is judged by a request with
    ``output_config.format`` (a JSON schema wanting ``ok`` and ``reason``),
    ``tools: []`` and a system prompt "You are evaluating a stop-condition
    hook ...". Probes named in the binary but never sent in ``-p`` (quota
    check, model validation) ask for ``max_tokens`` of 1 or so. Side calls
    get the canned ``SIDE_REPLY_TEXT``, which passes hook evaluation.

  Everything not recognised counts as a main turn, so a new kind of request
  shows up as an extra call rather than being swallowed. Shapes that are
  *not* side-call signs: ``tools: []`` (``--tools ""`` main turns have it),
  a missing ``context_management`` or a ``temperature`` (main turns with
  MAX_THINKING_TOKENS=0), ``output_config: {"effort": ...}`` and
  ``max_tokens`` 128000 (main turns of the default model when ``--model``
  is not given), a schema from ``--json-schema`` (sent as a tool, not as
  ``output_config``).

All non-main bodies are kept in ``side_calls`` (the kind is in ``requests``).
"""

from __future__ import annotations

import copy
import gzip
import json
import threading
import traceback
import uuid
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

Block = dict[str, Any]
Reply = list[Block]
ScriptEntry = Reply | Callable[[dict[str, Any]], Reply]

EXHAUSTED_TEXT = "(fake model: script exhausted)"
SUBAGENT_EXHAUSTED_TEXT = "(fake model: subagent script exhausted)"
COMPACT_SUMMARY = (
    "<analysis>fake analysis</analysis>\n"
    "<summary>Fake summary of the conversation so far.</summary>"
)
SIDE_REPLY_TEXT = '{"ok": true, "reason": "fake model: side call"}'

# Markers of non-main requests; see the module docstring for where each was seen.
SUBAGENT_HEADER = "x-claude-code-agent-id"
SUBAGENT_SYSTEM_MARK = "cc_is_subagent=true"
COMPACT_MARK = "create a detailed summary of the conversation"
SIDE_SYSTEM_MARKS = (
    "You are evaluating a",  # prompt and agent hooks
    "Generate a concise",  # session titles (interactive)
    "new conversation topic",  # topic detection (interactive)
)
# Main turns ask for tens of thousands of output tokens, probes for a handful.
SIDE_MAX_TOKENS = 1024


def text(s: str) -> Block:
    """A text content block."""
    return {"type": "text", "text": s}


def tool_use(name: str, input: dict[str, Any]) -> Block:
    """A tool_use content block; its reply then stops with ``tool_use``."""
    return {"type": "tool_use", "id": _tool_id(), "name": name, "input": dict(input)}


@dataclass
class HttpError:
    """An HTTP error reply to one main request: status, JSON body, extra headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] | None = None


def rate_limited(headers: dict[str, str] | None = None,
                 message: str = "This request would exceed your rate limit.") -> HttpError:
    """A 429 ``rate_limit_error``, as the API sends it when a limit refuses a request."""
    return HttpError(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                      "message": message}}, headers)


def usage(input: int = 0, output: int = 0, cache_creation: int = 0,
          cache_read: int = 0) -> Block:
    """Not a content block: put it in a reply to set the usage that reply reports (the CLI
    writes it into the transcript, where the plugin counts it)."""
    return {"type": "usage", "input_tokens": input, "output_tokens": output,
            "cache_creation_input_tokens": cache_creation, "cache_read_input_tokens": cache_read}


def bash(cmd: str) -> Block:
    """A call of the Bash tool."""
    return tool_use("Bash", {"command": cmd, "description": "run"})


def _tool_id() -> str:
    return "toolu_" + uuid.uuid4().hex[:24]


def message_text(content: Any) -> list[str]:
    """Every piece of text in a message's content, tool results included."""
    if isinstance(content, str):
        return [content]
    parts: list[str] = []
    if not isinstance(content, list):
        return parts
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "tool_result":
            parts.extend(message_text(block.get("content", "")))
    return parts


def last_user_text(body: dict[str, Any]) -> str:
    """All text of the last user message of a request body, joined by newlines."""
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return "\n".join(message_text(message.get("content")))
    return ""


def _system_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    return "\n".join(message_text(system))


def classify(headers: dict[str, str], body: dict[str, Any]) -> str:
    """Say what a ``POST /v1/messages`` is: "main", "subagent", "compact" or "side"."""
    system = _system_text(body)
    if SUBAGENT_HEADER in {k.lower() for k in headers} or SUBAGENT_SYSTEM_MARK in system:
        return "subagent"
    if COMPACT_MARK in last_user_text(body):
        return "compact"
    output_config = body.get("output_config")
    if isinstance(output_config, dict) and "format" in output_config:
        return "side"
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens < SIDE_MAX_TOKENS:
        return "side"
    if any(mark in system for mark in SIDE_SYSTEM_MARKS):
        return "side"
    if last_user_text(body).strip() == "quota":
        return "side"
    return "main"


@dataclass
class RecordedRequest:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    kind: str = "unhandled"  # main, subagent, compact, side, count_tokens, unhandled
    reply: Reply | None = None


class _Script:
    """A list of replies consumed in order, thread-safe."""

    def __init__(self, entries: Sequence[ScriptEntry], exhausted_text: str) -> None:
        self.entries: list[ScriptEntry] = list(entries)
        self.exhausted_text = exhausted_text
        self.next = 0

    def take(self) -> tuple[int, ScriptEntry | None]:
        index = self.next
        self.next += 1
        return index, self.entries[index] if index < len(self.entries) else None


class FakeModel:
    """The scripted Messages API server. Use it as a context manager."""

    def __init__(
        self,
        script: Sequence[ScriptEntry] = (),
        *,
        subagent_script: Sequence[ScriptEntry] = (),
        headers: dict[str, str] | None = None,
        side_answer: Callable[[dict[str, Any]], Reply] | None = None,
        errors: Sequence[HttpError] = (),
    ) -> None:
        self.script: list[ScriptEntry] = list(script)
        self.calls: list[dict[str, Any]] = []
        self.replies: list[Reply] = []
        self.side_calls: list[dict[str, Any]] = []
        self.subagent_calls: list[dict[str, Any]] = []
        self.requests: list[RecordedRequest] = []
        self.unhandled: list[RecordedRequest] = []
        self.errors: list[str] = []
        self._main = _Script(self.script, EXHAUSTED_TEXT)
        self._subagent = _Script(subagent_script, SUBAGENT_EXHAUSTED_TEXT)
        self._lock = threading.Lock()
        self._used_tool_ids: set[str] = set()
        # Sent with every /v1/messages reply (e.g. the rate-limit headers the CLI reads).
        self.headers: dict[str, str] = dict(headers or {})
        # Answers side calls (the /goal judge, prompt hooks) instead of SIDE_REPLY_TEXT.
        self.side_answer = side_answer
        # HTTP errors answering the next main requests, in order, before the script.
        self.http_errors: list[HttpError] = list(errors)
        self.http_errors_sent: list[HttpError] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> FakeModel:
        if self._server is not None:
            return self
        server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        server.daemon_threads = True
        self._server = server
        # A short poll interval keeps stop() fast; shutdown() waits for a poll.
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-messages-api",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        # A failing callable only gave the CLI a placeholder reply; fail the
        # test here with the real cause unless it is already failing.
        if exc_type is None and self.errors:
            raise AssertionError("fake model script raised:\n" + "\n".join(self.errors))

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeModel is not running; use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- inspection --------------------------------------------------------

    @property
    def call_count(self) -> int:
        return len(self.calls)

    @property
    def exhausted(self) -> bool:
        """True once the model was called more often than the script has replies."""
        return self.call_count > len(self.script)

    def last_user_text(self, i: int = -1) -> str:
        """All text of the last user message of main call ``i``, tool results included."""
        return last_user_text(self.calls[i])

    def all_text(self, i: int = -1) -> str:
        """All text of every message of main call ``i``: the conversation so far."""
        return "\n".join(
            piece
            for message in self.calls[i].get("messages", [])
            for piece in message_text(message.get("content"))
        )

    def reply_text(self, i: int = -1) -> str:
        """The text this server sent as reply ``i`` of the main conversation."""
        return "\n".join(message_text(self.replies[i]))

    # -- serving -----------------------------------------------------------

    def _answer(self, kind: str, body: dict[str, Any]) -> Reply:
        if kind == "compact":
            return [text(COMPACT_SUMMARY)]
        if kind == "side":
            return list(self.side_answer(body)) if self.side_answer else [text(SIDE_REPLY_TEXT)]
        script = self._main if kind == "main" else self._subagent
        with self._lock:
            index, entry = script.take()
            (self.calls if kind == "main" else self.subagent_calls).append(body)
        if entry is None:
            reply = [text(script.exhausted_text)]
        elif callable(entry):
            try:
                reply = list(entry(body))
            except Exception:
                self.errors.append(f"{kind} script entry {index}:\n{traceback.format_exc()}")
                reply = [text(f"(fake model: {kind} script entry {index} raised)")]
        else:
            reply = list(entry)
        reply = self._fresh_ids(reply)
        if kind == "main":
            with self._lock:
                self.replies.append(reply)
        return reply

    def _fresh_ids(self, reply: Reply) -> Reply:
        # The CLI pairs tool results with calls by id, so a block object that a
        # script sends twice must not repeat its id.
        out: Reply = []
        with self._lock:
            for block in reply:
                block = copy.deepcopy(block)
                if block.get("type") == "tool_use":
                    if not block.get("id") or block["id"] in self._used_tool_ids:
                        block["id"] = _tool_id()
                    self._used_tool_ids.add(block["id"])
                out.append(block)
        return out


def _estimate_tokens(obj: Any) -> int:
    return max(1, len(json.dumps(obj)) // 4)


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if any(b.get("type") == "tool_use" for b in reply) else "end_turn"


def _message(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    content = [block for block in reply if block.get("type") != "usage"]
    scripted = next((block for block in reply if block.get("type") == "usage"), None)
    figures = {
        "input_tokens": _estimate_tokens(body.get("messages", [])),
        "output_tokens": _estimate_tokens(content),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    if scripted is not None:
        figures = {key: value for key, value in scripted.items() if key != "type"}
    return {
        "id": "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-sonnet-4-5"),
        "content": content,
        "stop_reason": _stop_reason(content),
        "stop_sequence": None,
        "usage": figures,
    }


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _stream(body: dict[str, Any], reply: Reply) -> bytes:
    message = _message(body, reply)
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    events = [_sse("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        if block.get("type") == "tool_use":
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        elif block.get("type") == "text":
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            raise ValueError(f"fake model cannot stream a {block.get('type')!r} block")
        events += [
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            ),
            _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
            _sse("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                # The final figures, all of them: the CLI records these in the transcript.
                "usage": dict(message["usage"]),
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(events)


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _make_handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # The CLI keeps connections alive; every reply therefore carries a
        # Content-Length (SSE bodies are sent whole, which the CLI accepts).
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _read_body(self) -> Any:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                raw = self._read_chunked()
            else:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            encoding = self.headers.get("Content-Encoding", "").lower()
            if encoding == "gzip":
                raw = gzip.decompress(raw)
            elif encoding == "deflate":
                raw = zlib.decompress(raw)
            if not raw:
                return None
            try:
                return json.loads(raw)
            except ValueError:
                return raw.decode("utf-8", "replace")

        def _read_chunked(self) -> bytes:
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()

        def _send(self, status: int, payload: bytes, content_type: str,
                  headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("request-id", "req_fake" + uuid.uuid4().hex[:16])
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def _send_json(self, status: int, obj: Any) -> None:
            self._send(status, json.dumps(obj).encode(), "application/json")

        def _record(self, body: Any, kind: str) -> RecordedRequest:
            rec = RecordedRequest(
                method=self.command,
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                kind=kind,
            )
            with model._lock:
                model.requests.append(rec)
                if kind == "unhandled":
                    model.unhandled.append(rec)
                elif kind in ("side", "compact", "subagent"):
                    model.side_calls.append(body)
            return rec

        def _not_found(self, body: Any = None) -> None:
            self._record(body, "unhandled")
            self._send_json(404, _error("not_found_error", f"fake API has no {self.path}"))

        def do_GET(self) -> None:
            self._not_found()

        def do_HEAD(self) -> None:
            self._not_found()

        def do_PUT(self) -> None:
            self._not_found(self._read_body())

        def do_DELETE(self) -> None:
            self._not_found()

        def do_POST(self) -> None:
            route = self.path.split("?", 1)[0]
            body = self._read_body()
            if route == "/v1/messages/count_tokens":
                self._record(body, "count_tokens")
                self._send_json(200, {"input_tokens": _estimate_tokens(body)})
                return
            if route != "/v1/messages":
                self._not_found(body)
                return
            if not isinstance(body, dict):
                self._record(body, "unhandled")
                self._send_json(400, _error("invalid_request_error", "body is not a JSON object"))
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            kind = classify(headers, body)
            rec = self._record(body, kind)
            with model._lock:
                error = model.http_errors.pop(0) if kind == "main" and model.http_errors else None
                if error is not None:
                    model.http_errors_sent.append(error)
            if error is not None:
                self._send(error.status, json.dumps(error.body).encode(), "application/json",
                           error.headers)
                return
            reply = model._answer(kind, body)
            rec.reply = reply
            if body.get("stream"):
                self._send(200, _stream(body, reply), "text/event-stream", model.headers)
            else:
                self._send(200, json.dumps(_message(body, reply)).encode(), "application/json",
                           model.headers)

    return Handler
