"""A webhook receiver on 127.0.0.1 for the notification tests: it records every request
(method, path, headers, body) and answers each as told: `status`, or `hang` seconds of
silence first (bounded, so it always stops by itself)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.helpers.local_server import LocalServer


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic() when it arrived

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Webhook(LocalServer):
    status: int = 200
    hang: float = 0.0  # seconds to wait before answering (at most 30)
    location: str = ""  # a redirect's Location
    received: list[Received] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.origin

    def answer(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        self.received.append(Received(request.command, request.path,
                                      {k.lower(): v for k, v in request.headers.items()},
                                      body, time.monotonic()))
        time.sleep(min(self.hang, 30.0))
        try:
            request.send_response(self.status)
            if self.location:
                request.send_header("Location", self.location)
            request.send_header("Content-Length", "2")
            request.end_headers()
            request.wfile.write(b"ok")
        except OSError:
            pass  # the client gave up while this one hung

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return list(self.received)
