"""The OpenAI-compatible embedder against a small embeddings server on 127.0.0.1 (real HTTP)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from memory_core import Identity, Memory
from memory_core.adapters.embedders import HashingEmbedder, OpenAIEmbedder
from memory_core.errors import EmbedderUnavailable

DIM = 64


class _Handler(BaseHTTPRequestHandler):
    hashing = HashingEmbedder(DIM)
    fail = False

    def do_POST(self):  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.fail or self.path != "/v1/embeddings":
            self.send_response(500 if self.fail else 404)
            self.end_headers()
            return
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = self.hashing.embed(inputs)
        payload = {
            "object": "list",
            "model": body["model"],
            "data": [
                {"object": "embedding", "index": i, "embedding": v.tolist()}
                for i, v in reversed(list(enumerate(vectors)))
            ],  # out of order on purpose
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }
        raw = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    _Handler.fail = False


def test_embeds_over_http_in_input_order(server):
    embedder = OpenAIEmbedder(server, "test-embed", DIM)
    vectors = embedder.embed(["red apple", "blue sky"])
    assert vectors.shape == (2, DIM)
    assert np.allclose(vectors, HashingEmbedder(DIM).embed(["red apple", "blue sky"]), atol=1e-6)
    assert embedder.name == "openai:test-embed"


def test_recall_through_an_openai_compatible_index(server, tmp_path):
    with Memory.open(tmp_path / "h", embedder="openai", base_url=server, model="test-embed", dim=DIM) as m:
        tool = m.for_run(Identity(tenant="t", user="u"))
        tool.set("fruit", "a red apple")
        assert tool.recall("red apple", recipe="vector_only").hits[0].key == "fruit"


def test_a_failing_endpoint_is_a_typed_error_and_a_wrong_dimension_is_refused(server):
    _Handler.fail = True
    with pytest.raises(EmbedderUnavailable):
        OpenAIEmbedder(server, "m", DIM, timeout_s=5).embed(["x"])
    _Handler.fail = False
    with pytest.raises(EmbedderUnavailable, match="dim"):
        OpenAIEmbedder(server, "m", DIM + 1).embed(["x"])
