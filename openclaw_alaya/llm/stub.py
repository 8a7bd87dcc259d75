"""A local OpenAI-compatible stub server (real sockets, 127.0.0.1) for tests and benchmarks.

- `POST /v1/embeddings`: deterministic hash-embedder vectors of the inputs (so similar texts
  are similar), `dim` wide;
- `POST /v1/chat/completions`: a distill prompt gets one card per numbered turn line
  (`12 Name: text`) with a summary when one is asked for; a resolve prompt gets "unrelated"
  for every pair; `usage.prompt_tokens` is the prompt's estimated token count.

It counts requests, prompt tokens and embedded texts. `fail_next` answers that many requests
with HTTP 503 first (the endpoint going down and coming back).

    with StubServer(dim=64) as stub:
        config.embedding.base_url = stub.url
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..text import estimate_tokens

_TURN_LINE = re.compile(r"^(\d+) ([^:\n]{1,40}): (.+)$", re.M)


class StubServer:
    def __init__(self, dim: int = 64, *, think: bool = False) -> None:
        from ..embedding import HashEmbedder

        self.dim = dim
        self.think = think
        self.embedder = HashEmbedder(dim)
        self.counts: dict[str, int] = {"embeddings": 0, "chat": 0, "embedded_texts": 0, "prompt_tokens": 0,
                                       "judge": 0}
        self.fail_next = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "StubServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- answers --------------------------------------------------------------------------

    def embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = body.get("input") or []
        texts = [texts] if isinstance(texts, str) else texts
        vectors = self.embedder.embed([str(t) for t in texts])
        with self._lock:
            self.counts["embeddings"] += 1
            self.counts["embedded_texts"] += len(texts)
        return {"object": "list", "model": body.get("model"),
                "data": [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)],
                "usage": {"prompt_tokens": sum(estimate_tokens(str(t)) for t in texts), "total_tokens": 0}}

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages") or []
        prompt = sum(estimate_tokens(str(m.get("content", ""))) for m in messages)
        system = str(messages[0].get("content", "")) if messages else ""
        user = str(messages[-1].get("content", "")) if messages else ""
        if "pair of memory cards" in system:
            pairs = len(re.findall(r"^\d+ B: ", user, re.M))
            answer: dict[str, Any] = {"verdicts": ["unrelated"] * pairs}
            kind = "judge"
        else:
            cards = []
            for n, speaker, text in _TURN_LINE.findall(user):
                words = text.split()
                if len(words) < 4:
                    continue
                cards.append({"title": " ".join(words[:8]), "content": f"{speaker}: {text}", "type": "fact",
                              "tags": [], "entities": [speaker], "importance": 0.5, "turns": [int(n)]})
            answer = {"cards": cards, "links": []}
            if '"summary"' in system:
                answer["summary"] = {"active_areas": ["conversation"], "key_topics": [], "recent": f"{len(cards)} facts"}
            kind = "chat"
        with self._lock:
            self.counts[kind] += 1
            self.counts["prompt_tokens"] += prompt
        content = json.dumps(answer)
        if self.think:
            content = "<think>Let me look at the turns.</think>\n" + content
        return {"id": "stub", "object": "chat.completion", "model": body.get("model"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": estimate_tokens(content)}}

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with stub._lock:
                    failing = stub.fail_next > 0
                    if failing:
                        stub.fail_next -= 1
                if failing:
                    self._send(503, {"error": {"message": "stub is down"}})
                elif self.path.endswith("/embeddings"):
                    self._send(200, stub.embeddings(body))
                elif self.path.endswith("/chat/completions"):
                    self._send(200, stub.chat(body))
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
