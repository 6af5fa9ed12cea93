"""Real OTLP trace receivers on 127.0.0.1, for tests: what an exporter sends is what you assert on.

    with OtlpHttpReceiver() as rx:                       # or OtlpGrpcReceiver()
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.endpoint)
        provider = tpguard.telemetry.configure()
        ...                                              # guarded tool calls
        provider.force_flush()
        spans = rx.wait_for(3)                           # dicts shaped like ``span_to_dict``
        assert b"415-555-0199" not in rx.payload()       # every byte that arrived

Both receivers keep the request bodies as they arrived (``raw_bodies``; for HTTP before gzip/deflate
decoding), the decoded protobuf bytes (``bodies``) and the decoded ``ExportTraceServiceRequest``
messages (``requests``). They need the ``otlp`` extra plus ``opentelemetry-proto`` (and ``grpcio`` for
gRPC), so they are imported from this module, not from ``tpguard.testing``.
"""

from __future__ import annotations

import gzip
import threading
import time
import zlib
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

__all__ = ["OtlpGrpcReceiver", "OtlpHttpReceiver", "decode_any_value", "request_to_span_dicts"]

_TRACE_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"


def decode_any_value(value: AnyValue) -> Any:
    """An OTLP ``AnyValue`` as the Python value the SDK was given (arrays as lists)."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [decode_any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    return getattr(value, kind)


def _attributes(kvs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    kv: KeyValue
    for kv in kvs:
        out[kv.key] = decode_any_value(kv.value)
    return out


def _enum_name(enum_type: Any, number: int, prefix: str) -> str:
    return str(enum_type.Name(number)).removeprefix(prefix)


def request_to_span_dicts(request: ExportTraceServiceRequest) -> list[dict[str, Any]]:
    """Spans of one export request, in the shape of :func:`tpguard.telemetry.span_to_dict`
    (plus ``scope``), so code that reads JSONL span files reads received spans too."""
    out: list[dict[str, Any]] = []
    for rs in request.resource_spans:
        resource = _attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            for span in ss.spans:
                kind_enum = type(span).SpanKind
                status_enum = type(span.status).StatusCode
                out.append({
                    "name": span.name,
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex() or None,
                    "kind": _enum_name(kind_enum, span.kind, "SPAN_KIND_"),
                    "start_time_unix_nano": span.start_time_unix_nano,
                    "end_time_unix_nano": span.end_time_unix_nano,
                    "status": {
                        "code": _enum_name(status_enum, span.status.code, "STATUS_CODE_"),
                        "description": span.status.message or None,
                    },
                    "attributes": _attributes(span.attributes),
                    "events": [
                        {"name": e.name, "time_unix_nano": e.time_unix_nano,
                         "attributes": _attributes(e.attributes)}
                        for e in span.events
                    ],
                    "resource": resource,
                    "scope": ss.scope.name,
                })
    return out


class _Store:
    """What arrived, guarded by one condition variable (exports come from server threads)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.raw_bodies: list[bytes] = []
        self.bodies: list[bytes] = []
        self.requests: list[ExportTraceServiceRequest] = []

    def add(self, raw: bytes, body: bytes) -> ExportTraceServiceRequest:
        request = ExportTraceServiceRequest.FromString(body)
        with self._cond:
            self.raw_bodies.append(raw)
            self.bodies.append(body)
            self.requests.append(request)
            self._cond.notify_all()
        return request

    def spans(self) -> list[dict[str, Any]]:
        with self._cond:
            requests = list(self.requests)
        return [s for r in requests for s in request_to_span_dicts(r)]

    def count(self) -> int:
        with self._cond:
            return sum(len(s.spans) for r in self.requests
                       for rs in r.resource_spans for s in rs.scope_spans)

    def wait_for(self, n: int, timeout: float) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while (have := self.count()) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"expected {n} spans within {timeout}s, received {have}")
                self._cond.wait(left)
        return self.spans()


class _Receiver:
    """Shared surface of both receivers (the store, ``spans``, ``wait_for``, context manager)."""

    endpoint: str

    def __init__(self) -> None:
        self._store = _Store()

    @property
    def raw_bodies(self) -> list[bytes]:
        return list(self._store.raw_bodies)

    @property
    def bodies(self) -> list[bytes]:
        return list(self._store.bodies)

    @property
    def requests(self) -> list[ExportTraceServiceRequest]:
        return list(self._store.requests)

    def spans(self) -> list[dict[str, Any]]:
        """Every received span as a dict (see :func:`request_to_span_dicts`), in arrival order."""
        return self._store.spans()

    def wait_for(self, n: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Block until at least ``n`` spans arrived (``TimeoutError`` naming the count if not)."""
        return self._store.wait_for(n, timeout)

    def payload(self) -> bytes:
        """Every byte that arrived: raw bodies and decoded protobuf bodies, concatenated."""
        return b"".join(self._store.raw_bodies + self._store.bodies)

    def as_json(self) -> str:
        """Every received request as OTLP/JSON text (the protobuf JSON mapping)."""
        return "\n".join(json_format.MessageToJson(r) for r in self.requests)

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> _Receiver:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler(store: _Store) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/v1/traces":
                self.send_error(404, "only /v1/traces is served")
                return
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            encoding = (self.headers.get("Content-Encoding") or "").lower()
            try:
                body = (gzip.decompress(raw) if encoding == "gzip"
                        else zlib.decompress(raw) if encoding == "deflate" else raw)
                store.add(raw, body)
            except Exception as e:  # a malformed body is the client's problem: answer 400
                self.send_error(400, f"undecodable OTLP body ({type(e).__name__})")
                return
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            return

    return Handler


class OtlpHttpReceiver(_Receiver):
    """OTLP/HTTP (protobuf, optionally gzip/deflate) on ``127.0.0.1`` at an ephemeral port.

    ``endpoint`` is the base URL (what ``OTEL_EXPORTER_OTLP_ENDPOINT`` takes); ``traces_url`` is the
    full ``…/v1/traces`` URL (what ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` takes).
    """

    def __init__(self) -> None:
        super().__init__()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self._store))
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.traces_url = f"{self.endpoint}/v1/traces"
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-http-rx",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OtlpHttpReceiver:
        self.start()
        return self


class OtlpGrpcReceiver(_Receiver):
    """OTLP/gRPC ``TraceService`` on ``127.0.0.1`` at an ephemeral port (insecure channel).

    ``endpoint`` is ``http://127.0.0.1:<port>`` (the ``http`` scheme makes the OTel gRPC exporter
    use an insecure channel). The request deserializer keeps the message bytes as they arrived.
    """

    def __init__(self) -> None:
        import grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc as svc

        super().__init__()
        store = self._store

        class Servicer(svc.TraceServiceServicer):
            def Export(self, request: ExportTraceServiceRequest, context: Any) -> Any:
                return ExportTraceServiceResponse()

        def keep_and_parse(data: bytes) -> ExportTraceServiceRequest:
            return store.add(data, data)

        handler = grpc.method_handlers_generic_handler(_TRACE_SERVICE, {
            "Export": grpc.unary_unary_rpc_method_handler(
                Servicer().Export,
                request_deserializer=keep_and_parse,
                response_serializer=ExportTraceServiceResponse.SerializeToString,
            ),
        })
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self._server.add_generic_rpc_handlers((handler,))
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self.endpoint = f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._server.start()

    def stop(self) -> None:
        self._server.stop(grace=None).wait(timeout=5)

    def __enter__(self) -> OtlpGrpcReceiver:
        self.start()
        return self
