"""A real headless Chromium (Debian's `chromium`; `tools/run_tests.py` installs it) for the
HTML report: the DOM it builds, a screenshot, and every request the page makes, as the
DevTools protocol reports them for that page (Chromium's own background requests, which
no flag quite silences, are not the page's).

The page is served by `Recorder`, which is also the browser's only proxy (loopback
included), so nothing the browser asks for leaves the machine: it answers only the page
itself. Each browser run gets a fresh profile.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import signal
import subprocess
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.helpers.local_server import LocalServer

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--disable-extensions", "--hide-scrollbars",
         "--no-pings", "--disable-domain-reliability", "--disable-client-side-phishing-detection",
         "--disable-breakpad", "--disable-component-extensions-with-background-pages",
         "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,"
         "Translate,AutofillServerCommunication,CertificateTransparencyComponentUpdater,"
         "InterestFeedContentSuggestions,SafeBrowsing,DialMediaRouteProvider",
         "--safebrowsing-disable-auto-update", "--metrics-recording-only",
         "--password-store=basic", "--use-mock-keychain", "--disable-signin-promo"]


def chromium() -> Path:
    if not CHROMIUM.exists():
        raise AssertionError(f"{CHROMIUM} is missing: the browser tests need Debian's chromium "
                             "(python3 tools/run_tests.py installs it)")
    return CHROMIUM


@dataclass
class Recorder(LocalServer):
    """Serves `pages` (path -> bytes) on 127.0.0.1 and records every request it gets."""

    pages: dict[str, bytes]
    requests: list[str] = field(default_factory=list)

    def answer(self, request: BaseHTTPRequestHandler) -> None:
        self.requests.append(f"{request.command} {request.path}")
        page = self.pages.get(urlsplit(request.path).path)
        if request.command != "GET" or page is None:
            request.send_response(403)
            request.send_header("Content-Length", "0")
            request.end_headers()
            return
        request.send_response(200)
        request.send_header("Content-Type", "text/html; charset=utf-8")
        request.send_header("Content-Length", str(len(page)))
        request.end_headers()
        request.wfile.write(page)


@dataclass
class Rendered:
    dom: str  # document.documentElement.outerHTML once the page has loaded
    requests: list[str]  # every URL the page asked for (its own document first)
    screenshot: Path


class DevTools:
    """Chromium's DevTools protocol over --remote-debugging-pipe (fd 3 in, fd 4 out, each
    message JSON ended by NUL), talking to one page through a flat session."""

    def __init__(self, profile: Path, proxy: str) -> None:
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def arrange() -> None:
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.process = subprocess.Popen(
            [str(chromium()), *FLAGS, f"--user-data-dir={profile}", f"--proxy-server={proxy}",
             "--proxy-bypass-list=<-loopback>", "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=arrange, pass_fds=(3, 4), start_new_session=True)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session = ""

    def send(self, method: str, params: dict[str, Any] | None = None,
             timeout: float = 60) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            answer = self.receive(timeout)
            if answer.get("id") == self.next_id:
                assert "error" not in answer, (method, answer)
                result: dict[str, Any] = answer.get("result", {})
                return result
            self.events.append(answer)

    def receive(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.from_chrome], [], [], max(0.0, left))
            if not ready:
                raise AssertionError("Chromium did not answer in time")
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise AssertionError("Chromium closed its DevTools pipe")
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        found: dict[str, Any] = json.loads(message)
        return found

    def wait_event(self, method: str, timeout: float = 60) -> dict[str, Any]:
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self.receive(timeout)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError):
            self.send("Browser.close", timeout=10)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        os.close(self.to_chrome)
        os.close(self.from_chrome)


def render(url: str, target: Path, profile: Path, proxy: str, *, dark: bool = False,
           size: tuple[int, int] = (1000, 1300)) -> Rendered:
    """Open `url` in a fresh headless Chromium: its DOM, the requests it made, a screenshot
    at `target`, in the light or the dark colour scheme."""
    tools = DevTools(profile, proxy)
    try:
        created = tools.send("Target.createTarget", {"url": "about:blank"})
        tools.session = tools.send("Target.attachToTarget", {
            "targetId": created["targetId"], "flatten": True})["sessionId"]
        tools.send("Network.enable")
        tools.send("Page.enable")
        tools.send("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False})
        tools.send("Emulation.setEmulatedMedia", {"features": [
            {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
        tools.events.clear()
        tools.send("Page.navigate", {"url": url})
        tools.wait_event("Page.loadEventFired")
        dom = tools.send("Runtime.evaluate", {
            "expression": "document.documentElement.outerHTML",
            "returnByValue": True})["result"]["value"]
        shot = tools.send("Page.captureScreenshot", {"format": "png"})["data"]
        target.write_bytes(base64.b64decode(shot))
        time.sleep(0.5)  # anything the page would still ask for, late
        with contextlib.suppress(AssertionError):
            while True:
                tools.events.append(tools.receive(0.2))
        requests = [event["params"]["request"]["url"] for event in tools.events
                    if event.get("method") == "Network.requestWillBeSent"
                    and event.get("sessionId") == tools.session]
        return Rendered(dom, requests, target)
    finally:
        tools.close()


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and the rows of RGB(A) bytes of an 8-bit RGB or RGBA PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, chunks, header = 8, [], b""
    while position < len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind = data[position + 4:position + 8]
        body = data[position + 8:position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
    width, height = int.from_bytes(header[0:4], "big"), int.from_bytes(header[4:8], "big")
    depth, colour = header[8], header[9]
    assert depth == 8 and colour in (2, 6), (depth, colour)
    size = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * size
    rows: list[bytes] = []
    previous = bytearray(stride)
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for index in range(stride):
            left = line[index - size] if index >= size else 0
            up = previous[index]
            corner = previous[index - size] if index >= size else 0
            if kind == 1:
                line[index] = (line[index] + left) & 0xFF
            elif kind == 2:
                line[index] = (line[index] + up) & 0xFF
            elif kind == 3:
                line[index] = (line[index] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                nearest = min((abs(guess - left), 0, left), (abs(guess - up), 1, up),
                              (abs(guess - corner), 2, corner))[2]
                line[index] = (line[index] + nearest) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def colours(path: Path) -> dict[tuple[int, int, int], int]:
    """How many pixels of each RGB colour a PNG has."""
    width, _, rows = png_pixels(path)
    size = len(rows[0]) // width
    found: dict[tuple[int, int, int], int] = {}
    for row in rows:
        for index in range(0, len(row), size):
            key = (row[index], row[index + 1], row[index + 2])
            found[key] = found.get(key, 0) + 1
    return found
