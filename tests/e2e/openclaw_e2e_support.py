"""Support for the end-to-end tests against real OpenClaw: a stub OpenAI-compatible model server,
an isolated OpenClaw home, and helpers to run `openclaw` commands and a Gateway.

Nothing here talks to the network beyond 127.0.0.1, and every process started is stopped by the
object that started it.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Union

REPO = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = REPO / "scripts" / "install-openclaw.sh"
PLUGIN_ID = "openclaw-alaya"
STUB_REPLY = "STUB-REPLY-OK"
STUB_MODEL = "stub-model"
# Generous hard timeouts where alaya must succeed: a cold `alaya hook session-start` takes ~1.5 s of
# CPU and competes with OpenClaw's own prompt build on a 2-core runner (the default 4000 ms was
# exceeded on a loaded machine). Tests of failures use short ones.
GENEROUS = {"startTimeoutMs": 30000, "captureTimeoutMs": 60000}

# The README's OpenClaw commands, verbatim (run from a folder holding hooks/openclaw-alaya);
# test_openclaw.py checks that the README shows every one of README_COMMANDS.
README_INSTALL = "openclaw plugins install -l ./hooks/openclaw-alaya --force --accept-capabilities"
README_ALLOW = "openclaw config set plugins.entries.openclaw-alaya.hooks.allowConversationAccess true"
README_DATADIR = "openclaw config set plugins.entries.openclaw-alaya.config.dataDir '~/.alaya'"
README_COMMAND = ("openclaw config set plugins.entries.openclaw-alaya.config.command "
                  "'[\"uv\", \"run\", \"alaya\"]' --strict-json")
README_SLOT = "openclaw config set plugins.slots.memory openclaw-alaya"
README_INSPECT = "openclaw plugins inspect openclaw-alaya --runtime --json"
README_UNINSTALL = "openclaw plugins uninstall openclaw-alaya --force"
README_ACTIVE_MEMORY = ["openclaw config set plugins.entries.active-memory.enabled true --strict-json",
                        "openclaw config set plugins.entries.active-memory.config.agents '[\"main\"]' --strict-json"]
README_COMMANDS = [README_INSTALL, README_ALLOW, README_DATADIR, README_COMMAND, README_SLOT, README_INSPECT,
                   README_UNINSTALL, *README_ACTIVE_MEMORY]


def argv_of(command: str) -> list[str]:
    """A README `openclaw …` command line as arguments for OpenClawHome.run."""
    import shlex

    parts = shlex.split(command)
    assert parts[0] == "openclaw"
    return parts[1:]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- stub model server


def message_text(message: dict) -> str:
    """The text of a chat message whose content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


@dataclass
class ToolCall:
    """One function call the stub model makes (OpenAI `tool_calls` entry)."""

    name: str
    arguments: dict


# What a script returns for one request: text, tool calls, or None for the default numbered reply.
ScriptReply = Union[str, list, None]
Script = Callable[[dict], ScriptReply]


class StubModel:
    """OpenAI-compatible chat completions on 127.0.0.1:<free port>.

    Every request is recorded (path and parsed JSON body) in `self.requests`; POST
    /v1/chat/completions answers as JSON, or as server-sent events when the body has
    `stream: true` (what OpenClaw sends), with a usage chunk when `stream_options.include_usage`.

    By default the reply is `reply` followed by the request's number (" #3"). A test that needs
    the model to act sets `script` (see `scripted`): a callable that, given the request body,
    returns a text reply, a list of ToolCall (streamed as `delta.tool_calls`, finish_reason
    "tool_calls"), or None for the default reply.
    """

    def __init__(self, reply: str = STUB_REPLY):
        self.reply = reply
        self.script: Script | None = None
        self.script_errors: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.port = 0
        self._count = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle
    def start(self) -> "StubModel":
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _json(self, code: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _record(self, body: Any) -> None:
                with stub._lock:
                    stub.requests.append(
                        {"ts": time.time(), "method": self.command, "path": self.path, "body": body}
                    )

            def do_GET(self):
                self._record(None)
                if self.path.rstrip("/").endswith("/models"):
                    return self._json(200, {"object": "list", "data": [
                        {"id": STUB_MODEL, "object": "model", "created": 0, "owned_by": "stub"}]})
                return self._json(404, {"error": {"message": "not found: " + self.path}})

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                self._record(body)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._json(404, {"error": {"message": "stub implements chat/completions only"}})
                try:
                    scripted = stub.script(body) if stub.script else None
                except Exception as e:  # a broken script must fail the test, not hang the turn
                    stub.script_errors.append(f"{type(e).__name__}: {e}")
                    return self._json(500, {"error": {"message": f"stub script failed: {e}"}})
                calls = scripted if isinstance(scripted, list) else []
                # Numbered, so no two answers are the same text (a real model rarely repeats itself
                # word for word, and capture aligns histories on message text).
                text = scripted if isinstance(scripted, str) else (
                    "" if calls else f"{stub.reply} #{stub.next_number()}")
                cid = "chatcmpl-stub-%d" % int(time.time() * 1000)
                call_ids = [f"call_stub_{stub.next_number()}_{i}" for i in range(len(calls))]
                created = int(time.time())
                model = body.get("model") or STUB_MODEL
                usage = {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
                finish = "tool_calls" if calls else "stop"
                if not body.get("stream"):
                    message = {"role": "assistant", "content": text or None}
                    if calls:
                        message["tool_calls"] = [
                            {"id": cid_, "type": "function",
                             "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                            for cid_, c in zip(call_ids, calls)]
                    return self._json(200, {
                        "id": cid, "object": "chat.completion", "created": created, "model": model,
                        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                        "usage": usage,
                    })
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()

                def send(obj: Any) -> None:
                    self.wfile.write(("data: " + json.dumps(obj) + "\n\n").encode())
                    self.wfile.flush()

                def chunk(delta: dict, finish: str | None = None) -> None:
                    send({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                          "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

                chunk({"role": "assistant", "content": ""})
                if text:
                    half = max(1, len(text) // 2)
                    chunk({"content": text[:half]})
                    chunk({"content": text[half:]})
                for i, (call_id, c) in enumerate(zip(call_ids, calls)):
                    # Name first, then the arguments in two pieces, as OpenAI streams them.
                    args = json.dumps(c.arguments)
                    half = len(args) // 2
                    chunk({"tool_calls": [{"index": i, "id": call_id, "type": "function",
                                           "function": {"name": c.name, "arguments": ""}}]})
                    chunk({"tool_calls": [{"index": i, "function": {"arguments": args[:half]}}]})
                    chunk({"tool_calls": [{"index": i, "function": {"arguments": args[half:]}}]})
                chunk({}, finish)
                if (body.get("stream_options") or {}).get("include_usage"):
                    send({"id": cid, "object": "chat.completion.chunk", "created": created,
                          "model": model, "choices": [], "usage": usage})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="stub-model", daemon=True)
        self._thread.start()
        return self

    def next_number(self) -> int:
        with self._lock:
            self._count += 1
            return self._count

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- queries
    def chat_requests(self) -> list[dict]:
        with self._lock:
            return [r["body"] for r in self.requests
                    if r["method"] == "POST" and r["path"].rstrip("/").endswith("/chat/completions")]

    def request_for(self, prompt: str) -> dict | None:
        """The first chat request whose user message (the current turn) contains `prompt`."""
        for body in self.chat_requests():
            if find_user_message(body, prompt) is not None:
                return body
        return None

    def requests_for(self, prompt: str) -> list[dict]:
        """Every chat request of a turn (the first one and those carrying its tool results)."""
        return [b for b in self.chat_requests() if find_user_message(b, prompt) is not None]

    def scripted(self, script: Script) -> "ScriptedStub":
        """`with stub.scripted(fn):` — answer with `fn` inside the block, the default reply after."""
        return ScriptedStub(self, script)


class ScriptedStub:
    def __init__(self, stub: StubModel, script: Script):
        self.stub, self.script = stub, script

    def __enter__(self) -> StubModel:
        self.stub.script = self.script
        return self.stub

    def __exit__(self, *exc) -> None:
        self.stub.script = None


def offered_tools(body: dict) -> list[str]:
    """Names of the function tools offered to the model in a request."""
    return [(t.get("function") or {}).get("name") or t.get("name", "") for t in body.get("tools") or []]


def tool_results(body: dict) -> list[dict]:
    """The tool results a request carries: {"id", "name", "arguments", "content"} per call, where
    name/arguments come from the assistant message that made the call."""
    calls = {}
    for m in body.get("messages") or []:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            calls[c.get("id")] = (fn.get("name"), fn.get("arguments"))
    out = []
    for m in body.get("messages") or []:
        if m.get("role") == "tool":
            name, args = calls.get(m.get("tool_call_id"), (None, None))
            out.append({"id": m.get("tool_call_id"), "name": name, "arguments": args,
                        "content": message_text(m)})
    return out


def find_user_message(body: dict, prompt: str) -> str | None:
    """Text of the last user message in `body` that contains `prompt`."""
    found = None
    for m in body.get("messages") or []:
        if m.get("role") == "user" and prompt in message_text(m):
            found = message_text(m)
    return found


def system_text(body: dict) -> str:
    return "\n".join(message_text(m) for m in body.get("messages") or [] if m.get("role") in ("system", "developer"))


# --------------------------------------------------------------------------- OpenClaw


@dataclass
class Result:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def describe(self) -> str:
        return (f"$ {' '.join(self.argv)}\nexit {self.returncode} after {self.seconds:.1f} s\n"
                f"--- stdout ---\n{self.stdout[-4000:]}\n--- stderr ---\n{self.stderr[-6000:]}")


@dataclass
class OpenClawHome:
    """An isolated OpenClaw installation state: HOME, state dir, config, workspace, logs."""

    root: Path
    node_bin: Path
    openclaw_bin: Path
    stub: StubModel
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.state_dir = self.home / ".openclaw"
        self.config_path = self.state_dir / "openclaw.json"
        self.workspace = self.root / "workspace"
        self.log_file = self.root / "openclaw.log"
        for d in (self.state_dir, self.workspace):
            d.mkdir(parents=True, exist_ok=True)
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("OPENCLAW_", "ALAYA_", "XDG_", "NODE_", "npm_"))}
        base.update({
            "HOME": str(self.home),
            "OPENCLAW_STATE_DIR": str(self.state_dir),
            "OPENCLAW_CONFIG_PATH": str(self.config_path),
            "OPENCLAW_NO_AUTO_UPDATE": "1",
            "OPENCLAW_DISABLE_BONJOUR": "1",
            "NO_COLOR": "1",
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            # Node 24 first (openclaw needs >= 24.16), then openclaw itself.
            "PATH": os.pathsep.join([str(self.node_bin.parent), str(self.openclaw_bin.parent),
                                     os.environ.get("PATH", "")]),
        })
        base.update(self.env)
        self.env = base

    # -- config
    def write_base_config(self) -> None:
        """Model provider (the stub), default agent, log file. Plugins are added by the CLI."""
        self.write_config({
            "logging": {"file": str(self.log_file)},
            "models": {"mode": "replace", "providers": {"stub": {
                "baseUrl": self.stub.base_url, "apiKey": "stub-key", "api": "openai-completions",
                "models": [{"id": STUB_MODEL, "name": "Stub Model", "reasoning": False, "input": ["text"],
                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                            "contextWindow": 128000, "maxTokens": 4096}]}}},
            "agents": {"defaults": {"model": {"primary": f"stub/{STUB_MODEL}"},
                                    "workspace": str(self.workspace)}},
        })

    def read_config(self) -> dict:
        return json.loads(self.config_path.read_text())

    def write_config(self, cfg: dict) -> None:
        tmp = self.config_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(cfg, indent=2) + "\n")
        tmp.replace(self.config_path)

    def set_plugin_config(self, **values: Any) -> dict:
        """Replace plugins.entries.openclaw-alaya.config keys (None removes a key)."""
        cfg = self.read_config()
        entry = cfg.setdefault("plugins", {}).setdefault("entries", {}).setdefault(PLUGIN_ID, {})
        pc = entry.setdefault("config", {})
        for k, v in values.items():
            if v is None:
                pc.pop(k, None)
            else:
                pc[k] = v
        self.write_config(cfg)
        return pc

    # -- commands
    def run(self, *args: str, timeout: float = 180, env: dict | None = None, cwd: Path | None = None,
            check: bool = True) -> Result:
        argv = [str(self.openclaw_bin), *args]
        t = time.monotonic()
        try:
            p = subprocess.run(argv, env={**self.env, **(env or {})}, cwd=str(cwd or self.root),
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            raise AssertionError(f"openclaw {' '.join(args)} did not finish within {timeout} s\n"
                                 f"--- stdout ---\n{out[-3000:]}\n--- stderr ---\n{err[-5000:]}") from None
        res = Result(["openclaw", *args], p.returncode, p.stdout, p.stderr, time.monotonic() - t)
        if check and p.returncode != 0:
            raise AssertionError("openclaw command failed\n" + res.describe())
        return res

    def local_turn(self, session_id: str, message: str, **kw: Any) -> Result:
        """One embedded agent turn (`openclaw agent --local`)."""
        return self.run("agent", "--local", "--session-id", session_id, "--message", message, **kw)

    def close(self) -> None:
        """Stop the stub model and the alaya daemon the plugin may have started for this home."""
        alaya = getattr(self, "alaya", None)
        if alaya is not None:
            alaya.stop_daemon()
        self.stub.stop()


class Gateway:
    """`openclaw gateway run` on a loopback port, in its own process group."""

    def __init__(self, oc: OpenClawHome, token: str = "e2e-token"):
        self.oc = oc
        self.port = free_port()
        self.token = token
        self.out_path = oc.root / f"gateway-{self.port}.out"
        self.proc: subprocess.Popen | None = None

    @property
    def client_env(self) -> dict[str, str]:
        return {"OPENCLAW_GATEWAY_PORT": str(self.port), "OPENCLAW_GATEWAY_TOKEN": self.token}

    def start(self, timeout: float = 90) -> float:
        t = time.monotonic()
        out = open(self.out_path, "w")
        self.proc = subprocess.Popen(
            [str(self.oc.openclaw_bin), "gateway", "run", "--allow-unconfigured", "--bind", "loopback",
             "--port", str(self.port), "--auth", "token", "--token", self.token],
            env={**self.oc.env, **self.client_env}, cwd=str(self.oc.root), stdin=subprocess.DEVNULL,
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        out.close()
        while time.monotonic() - t < timeout:
            if self.proc.poll() is not None:
                raise AssertionError(f"openclaw gateway exited with {self.proc.returncode}:\n{self.output()[-5000:]}")
            if "listening" in self.output():
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                        return time.monotonic() - t
                except OSError:
                    pass
            time.sleep(0.25)
        self.stop()
        raise AssertionError(f"openclaw gateway not listening after {timeout} s:\n{self.output()[-5000:]}")

    def output(self) -> str:
        try:
            return self.out_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def call(self, method: str, params: dict, timeout: float = 90) -> Any:
        res = self.oc.run("gateway", "call", method, "--json", "--params", json.dumps(params),
                          env=self.client_env, timeout=timeout)
        try:
            return json.loads(res.stdout)
        except ValueError:
            return res.stdout

    def turn(self, session_key: str, message: str, **kw: Any) -> Result:
        return self.oc.run("agent", "--session-key", session_key, "--message", message,
                           env=self.client_env, **kw)

    def stop(self, grace: float = 15) -> int | None:
        """SIGTERM to the gateway's process group (what a service manager does), then SIGKILL."""
        p = self.proc
        if p is None:
            return None
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(10)
        # Anything left in its group (e.g. a capture still running) goes too.
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc = None
        return p.returncode


def plugin_home(openclaw_install: tuple[Path, Path], root: Path) -> OpenClawHome:
    """An OpenClaw home (with its own stub model) where the plugin is installed and enabled with the
    README's commands, and an initialised alaya data dir at ~/.alaya of that home (`home.alaya`).
    `home.close()` stops the stub and any alaya daemon serving that data dir."""
    node_bin, openclaw_bin = openclaw_install
    stub = StubModel().start()
    home = OpenClawHome(root=root, node_bin=node_bin, openclaw_bin=openclaw_bin, stub=stub)
    # `alaya` first on PATH for OpenClaw (the plugin's default command), as after `uv tool install`.
    home.env["PATH"] = f"{alaya_bin().parent}:{home.env['PATH']}"
    home.write_base_config()
    # A copy of the plugin, so the install/uninstall commands never touch the checkout.
    shutil.copytree(REPO / "hooks" / "openclaw-alaya", root / "hooks" / "openclaw-alaya",
                    ignore=shutil.ignore_patterns("test", "node_modules"))
    home.setup_results = {}
    for cmd in (README_INSTALL, README_ALLOW, README_DATADIR):
        home.setup_results[cmd] = home.run(*argv_of(cmd), cwd=root)
    home.alaya = Alaya(home.home / ".alaya", home.env)
    home.alaya.run("init")
    return home


# --------------------------------------------------------------------------- alaya


def alaya_bin() -> Path:
    """The alaya CLI of the environment running the tests (scripts/test.sh: .venv-test), or
    $ALAYA_E2E_ALAYA when set (an absolute path)."""
    import sys

    if os.environ.get("ALAYA_E2E_ALAYA"):
        return Path(os.environ["ALAYA_E2E_ALAYA"])
    cand = Path(sys.executable).parent / "alaya"
    if cand.exists():
        return cand
    found = shutil.which("alaya")
    if not found:
        raise AssertionError("no `alaya` command next to the test interpreter or on PATH")
    return Path(found)


class Alaya:
    """The real alaya CLI on one data dir, for seeding and checking what OpenClaw stored."""

    def __init__(self, data_dir: Path, env: dict):
        self.bin = alaya_bin()
        self.data_dir = data_dir
        self.env = env

    def run(self, *args: str, input: str | None = None, timeout: float = 120,
            check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run([str(self.bin), "--data-dir", str(self.data_dir), *args], input=input,
                           capture_output=True, text=True, env=self.env, timeout=timeout)
        assert not check or p.returncode == 0, (
            f"alaya {' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
        return p

    def seed(self, user: str, assistant: str) -> None:
        """Store one exchange as a past session of agent main (distilled into cards)."""
        exchange = [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
        self.run("ingest", "--stdin", "--agent", "main", "--distill", input=json.dumps(exchange))

    def recall(self, query: str) -> dict:
        return json.loads(self.run("recall", query, "--json").stdout)

    def knows(self, query: str, token: str) -> bool:
        return token in json.dumps(self.recall(query))

    def card_texts(self) -> str:
        """Every stored card's title and content (alaya list), to check what was captured."""
        cards = json.loads(self.run("list", "--json", "--limit", "1000").stdout)["cards"]
        return "\n".join(f"{c['title']}\n{c['content']}" for c in cards)

    def stop_daemon(self) -> None:
        """`alaya serve stop` for this data dir (nothing to stop is fine)."""
        self.run("serve", "stop", check=False, timeout=60)


def write_recording_wrapper(path: Path, real: Path, log_dir: Path) -> Path:
    """A command that records each call (argv, stdin, exit code, output) and runs the real alaya."""
    log_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(f"""#!/usr/bin/env bash
n="$(date +%s%N)-$$"; d={shlex_quote(str(log_dir))}
printf '%s\\n' "$@" > "$d/$n.argv"
cat > "$d/$n.stdin"
{shlex_quote(str(real))} "$@" < "$d/$n.stdin" > "$d/$n.stdout" 2> "$d/$n.stderr"
rc=$?
echo "$rc" > "$d/$n.rc"
cat "$d/$n.stdout"; cat "$d/$n.stderr" >&2
exit "$rc"
""")
    path.chmod(0o755)
    return path


def recorded_calls(log_dir: Path) -> list[dict]:
    """Calls recorded by write_recording_wrapper, oldest first (finished ones only)."""
    calls = []
    for rc_file in sorted(log_dir.glob("*.rc"), key=lambda p: int(p.stem.split("-")[0])):
        stem = rc_file.with_suffix("")
        raw = Path(str(stem) + ".stdin").read_text()
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = None
        calls.append({
            "argv": Path(str(stem) + ".argv").read_text().splitlines(),
            "stdin": raw, "payload": payload,
            "rc": int(rc_file.read_text().strip() or -1),
            "stdout": Path(str(stem) + ".stdout").read_text(),
            "stderr": Path(str(stem) + ".stderr").read_text(),
        })
    return calls


def shlex_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


def wait_for(predicate, timeout: float, interval: float = 0.5):
    """Poll `predicate` until it returns a truthy value or `timeout` passes; return the last value."""
    end = time.monotonic() + timeout
    value = predicate()
    while not value and time.monotonic() < end:
        time.sleep(interval)
        value = predicate()
    return value
