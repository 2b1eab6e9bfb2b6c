"""An HTTP server on 127.0.0.1 (an ephemeral port, daemon threads) for a test's own use:
a subclass answers each request in `answer`; `with` starts and stops it."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


class LocalServer:
    _server: ThreadingHTTPServer | None = None

    @property
    def origin(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def answer(self, request: BaseHTTPRequestHandler) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _any(self) -> None:
                owner.answer(self)

            do_GET = do_POST = do_HEAD = do_CONNECT = do_PUT = do_OPTIONS = _any

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
