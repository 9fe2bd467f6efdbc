#!/usr/bin/env python3
"""tests/history/stub_prom.py PORTFILE FAIL_REGEX - a stand-in for the
Prometheus HTTP API, for the export script's error paths: it answers every
/api/v1/query and /api/v1/query_range with an empty success, except queries
matching FAIL_REGEX, which get Prometheus' error body (HTTP 422, errorType
bad_data, as the API documents for a query that cannot be executed).  It
writes the port it listens on (localhost, chosen by the kernel) to PORTFILE
and serves until killed.  Standard library only."""

import json
import re
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

fail = re.compile(sys.argv[2])


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        u = urlparse(self.path)
        q = parse_qs(u.query).get("query", [""])[0]
        if u.path not in ("/api/v1/query", "/api/v1/query_range"):
            code, body = 404, {"status": "error", "errorType": "not_found", "error": "no such path"}
        elif fail.search(q):
            code, body = 422, {"status": "error", "errorType": "bad_data",
                               "error": f"stub: refusing {q}"}
        else:
            kind = "matrix" if u.path.endswith("_range") else "vector"
            code, body = 200, {"status": "success", "data": {"resultType": kind, "result": []}}
        data = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


srv = HTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1], "w") as f:
    f.write(str(srv.server_address[1]))
srv.serve_forever()
