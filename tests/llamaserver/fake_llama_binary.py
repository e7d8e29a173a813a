"""A stand-in for the llama-server binary, for testing process control without a model:
takes llama-server's --port (and ignores its other flags), answers GET /health, and
misbehaves on request with `--fake-mode`:

    stubborn   ignores SIGTERM (llama_stop must escalate to SIGKILL)
    crash      prints an error and exits 3 before listening (llama_start must report it)
"""

import argparse
import signal
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


class Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"status": "ok"}')

    def log_message(self, *args: object) -> None:
        pass


parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--fake-mode", default="")
options, _ = parser.parse_known_args()
print("fake llama-server starting", flush=True)
if options.fake_mode == "crash":
    print("error: failed to load model 'broken.gguf'", flush=True)
    sys.exit(3)
if options.fake_mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
HTTPServer(("127.0.0.1", options.port), Health).serve_forever()
