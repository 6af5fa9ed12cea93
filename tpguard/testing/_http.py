"""The HTTP side of tpguard's loopback OpenAI-compatible servers (``tpguard serve-model`` and the
scripted test server): a threading stdlib server that can really stop, the OpenAI error envelope
and server-sent events.

``ThreadingHTTPServer`` alone leaves keep-alive connections (which real clients such as httpx hold
open) blocked in their handler threads after ``shutdown()``; :class:`LoopbackHTTPServer` tracks the
accepted sockets, shuts them down on close and joins the handler threads.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["MAX_BODY", "ApiError", "LoopbackHTTPServer", "Reply", "RequestHandler", "Route",
           "error_body", "sse"]

MAX_BODY = 16 * 1024 * 1024
LOOPBACK = "127.0.0.1"

class ApiError(Exception):
    """An error answered in OpenAI's envelope with an HTTP status."""

    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code


def error_body(err: ApiError) -> dict[str, Any]:
    """OpenAI's error envelope ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": err.message, "type": err.type, "param": err.param, "code": err.code}}


def sse(event: dict[str, Any] | str) -> bytes:
    data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
    return f"data: {data}\n\n".encode()


# A route gets (method, path, body-or-None, headers) and returns a Reply.
Route = Callable[[str, str, bytes | None, dict[str, str]], "Reply"]


class Reply:
    """A JSON document, or a stream of server-sent events when ``events`` is given."""

    def __init__(self, status: int = 200, body: Any = None,
                 events: Iterable[dict[str, Any]] | None = None) -> None:
        self.status, self.body, self.events = status, body, events

    @classmethod
    def error(cls, err: ApiError) -> Reply:
        return cls(err.status, error_body(err))


class LoopbackHTTPServer(ThreadingHTTPServer):
    """Listens on 127.0.0.1 only; ``close()`` ends every open connection and joins its thread."""

    daemon_threads = False  # tracked and joined by server_close()
    block_on_close = True

    def __init__(self, port: int, route: Route) -> None:
        self.route = route
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        super().__init__((LOOPBACK, port), RequestHandler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conns_lock:
            self._conns.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conns_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up is not an error worth a traceback on stderr."""

    def close(self) -> None:
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.server_close()


class RequestHandler(BaseHTTPRequestHandler):
    """Reads a request, asks the route for a reply, writes JSON or chunked SSE."""

    protocol_version = "HTTP/1.1"  # keep-alive, as the OpenAI SDK's httpx client expects
    server_version = "tpguard-openai/1"
    timeout = 60  # an idle keep-alive connection cannot hold a handler thread forever
    server: LoopbackHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: request lines are not worth logging and bodies may carry private values."""

    def do_GET(self) -> None:
        self._dispatch(None)

    def do_POST(self) -> None:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self.close_connection = True
            self._send(Reply.error(ApiError(411, "A Content-Length header is required.")))
            return
        if int(length) > MAX_BODY:
            self.close_connection = True
            self._send(Reply.error(ApiError(413, "The request body is too large.")))
            return
        self._dispatch(self.rfile.read(int(length)))

    def _other(self) -> None:
        self._dispatch(b"", method_override=self.command)

    do_PUT = do_DELETE = do_PATCH = _other

    def _dispatch(self, body: bytes | None, method_override: str | None = None) -> None:
        method = method_override or self.command
        path = self.path.split("?", 1)[0].rstrip("/")
        headers = {k.lower(): v for k, v in self.headers.items()}
        self._send(self.server.route(method, path, body, headers))

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        if reply.status >= 400:
            self.send_header("x-should-retry", "false")  # the OpenAI SDK honours this header
        if reply.events is None:
            data = json.dumps(reply.body, ensure_ascii=False).encode()
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in reply.events:
            self._chunk(sse(event))
        self._chunk(sse("[DONE]"))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()
