"""A minimal real OTLP/HTTP traces receiver for tests: an HTTP server on loopback that accepts
`POST /v1/traces` with a protobuf `ExportTraceServiceRequest` (gzip or not), decodes it with the
`opentelemetry-proto` package, keeps it, and answers with an `ExportTraceServiceResponse`, as a collector
does. Not a mock of the exporter: the exporter under test talks HTTP to it over a socket."""

from __future__ import annotations

import gzip
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

SPAN_KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
STATUS_CODES = {0: "UNSET", 1: "OK", 2: "ERROR"}


def any_value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [any_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, kind) if kind else None


def attributes(kvs) -> dict[str, Any]:
    return {kv.key: any_value(kv.value) for kv in kvs}


class OtlpReceiver:
    """`with OtlpReceiver() as r:` ... `r.url` is the collector's base URL, `r.spans()` what arrived."""

    def __init__(self, status: int = 200):
        self.requests: list[dict[str, Any]] = []
        self.status = status
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                encoding = self.headers.get("Content-Encoding", "")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                    self.send_response(404 if self.path != "/v1/traces" else 415)
                    self.end_headers()
                    return
                if receiver.status != 200:
                    self.send_response(receiver.status)
                    self.end_headers()
                    return
                req = ExportTraceServiceRequest()
                req.ParseFromString(body)
                receiver.requests.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "message": req})
                out = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def spans(self) -> list[dict[str, Any]]:
        """Every received span, flattened, with its resource and scope."""
        out = []
        for r in self.requests:
            for rs in r["message"].resource_spans:
                resource = attributes(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        out.append({
                            "name": s.name,
                            "trace_id": s.trace_id.hex(),
                            "span_id": s.span_id.hex(),
                            "parent": s.parent_span_id.hex() or None,
                            "kind": SPAN_KINDS[s.kind],
                            "start": s.start_time_unix_nano,
                            "end": s.end_time_unix_nano,
                            "attributes": attributes(s.attributes),
                            "events": [{"name": e.name, "time": e.time_unix_nano, "attributes": attributes(e.attributes)}
                                       for e in s.events],
                            "status": STATUS_CODES[s.status.code],
                            "status_message": s.status.message,
                            "resource": resource,
                            "resource_schema_url": rs.schema_url,
                            "scope": ss.scope.name,
                            "scope_version": ss.scope.version,
                            "scope_schema_url": ss.schema_url,
                        })
        return out
