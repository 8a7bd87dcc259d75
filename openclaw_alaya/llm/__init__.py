"""Model-backed providers over OpenAI-compatible HTTP APIs (SiliconFlow, OpenAI, Ollama, vLLM…).

- `client.py`: the HTTP client (retries with backoff honouring `Retry-After`, a concurrency cap,
  token usage accounting, a short "endpoint down" memory so hooks do not wait on a dead API);
- `embedder.py`: the `openai` embedder (batched, cached by content hash);
- `distiller.py`: the `openai` distiller (jinja2 prompts, robust JSON, repair, heuristic fallback);
- `stub.py`: a local OpenAI-compatible stub server for tests and benchmarks.

Nothing here is imported unless config names an `openai` provider.
"""
