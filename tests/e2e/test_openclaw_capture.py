"""End-to-end (issue 33, must-show 1): capture that is never lost and never slow for the caller,
in real OpenClaw on a loaded machine — 8 CPU-bound processes beside it and the page cache
dropped (when the container lets us: it says so either way).

- A Gateway (the plugin's service starts the daemon) and 10 sessions, 3 at a time: each
  session's first model request carries the memory block, each capture (agent_end) is
  acknowledged by alaya in under 1 s (the plugin's log line "acknowledged in N ms"), each
  session's fact is recallable within 60 s of the runs' end (the daemon distils in the
  background), no `openclaw agent` exits non-zero and no log says "forced retirement" or "CLI
  cleanup timed out".
- 6 sessions more, then the Gateway shuts down with the 16 open, the daemon up, the same load:
  the 16 session_end captures at once, each acknowledged within 1.5 s, every fact recallable
  within 60 s.
`openclaw agent --local` cannot run twice at once in one state directory ("failed to acquire
gateway state ownership") and takes about 80 s a turn under this load, so the sessions go
through the Gateway.

The suite asserts no timings (a busy CI machine is not the issue's loaded laptop): by default it
runs the same sessions without the burners and checks that every capture is acknowledged (the
hook handed it over), recallable and never lost, printing the acknowledgement times.
`bench/capture_load.py` (ALAYA_CAPTURE_LOAD=1) adds the load and the issue's thresholds.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from openclaw_e2e_support import STUB_REPLY, Gateway, find_user_message, plugin_home, wait_for

pytestmark = pytest.mark.e2e

LOADED = os.environ.get("ALAYA_CAPTURE_LOAD") == "1"  # bench/capture_load.py: the load and the thresholds
BURNERS = 8 if LOADED else 0
FIRST_SESSIONS = 10
AT_ONCE = 3  # `openclaw agent` clients at a time
SHUTDOWN_SESSIONS = 16
ACK_LIMIT_MS = 1000
SHUTDOWN_ACK_LIMIT_MS = 1500
RECALL_WITHIN_S = 60 if LOADED else 180  # in the suite: "distilled in the background", not a speed
SEED_TOKEN = "osprey-41"
SEED_FACT = f"The release train leaves every Thursday from the branch {SEED_TOKEN}."
BLOCK_OPEN = "<alaya-memory"
ACK = re.compile(r"(agent_end|session_end) (\S+): [^\n\"]*?\(acknowledged in (\d+) ms\)")
BAD_LINES = ("forced retirement", "CLI cleanup timed out", "capture failed")


def fact(kind: str, n: int) -> tuple[str, str]:
    token = f"{kind}-host-{n:02d}q"
    return token, (f"Which branch does the release train leave from? Also remember: the build cache of "
                   f"service {kind}{n} lives on {token}.")


class Load:
    """8 CPU-bound processes, and the page cache dropped."""

    def __enter__(self) -> "Load":
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(BURNERS)]
        self.dropped = drop_page_cache() if LOADED else False
        print(f"[e2e] load: {BURNERS} CPU-bound processes; page cache "
              f"{'dropped' if self.dropped else 'not dropped (not under load, or the container does not allow it)'}")
        return self

    def __exit__(self, *exc) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


def drop_page_cache() -> bool:
    try:
        subprocess.run(["sync"], check=False, timeout=60)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def acks(text: str) -> list[tuple[str, str, int]]:
    return [(hook, sid, int(ms)) for hook, sid, ms in ACK.findall(text)]


def bad_lines(text: str) -> list[str]:
    return [line[:300] for line in text.splitlines() if any(b in line for b in BAD_LINES)]


@pytest.fixture(scope="module")
def oc(openclaw_install, tmp_path_factory):
    home = plugin_home(openclaw_install, tmp_path_factory.mktemp("openclaw-capture"))
    home.alaya.seed(SEED_FACT, f"Noted: the release train leaves on Thursdays from {SEED_TOKEN}.")
    yield home
    home.close()


@pytest.fixture(scope="module")
def loaded_gateway(oc):
    gw = Gateway(oc)
    try:
        print(f"[e2e] gateway ready in {gw.start():.1f} s")
        with Load():
            yield gw
    finally:
        gw.stop()


def recalled_within(oc, token: str, seconds: float) -> float | None:
    """Seconds until a recall finds `token`, or None after `seconds`."""
    t = time.monotonic()
    found = wait_for(lambda: oc.alaya.knows(token, token), seconds, 0.5)
    return time.monotonic() - t if found else None


def run_sessions(oc, gw, kind: str, numbers: range) -> list[tuple[str, str]]:
    """One turn in each new session through the Gateway, AT_ONCE at a time; (token, prompt) each."""
    facts = [fact(kind, n) for n in numbers]
    with ThreadPoolExecutor(AT_ONCE) as pool:
        results = list(pool.map(lambda f: oc.run("agent", "--session-key", f"agent:main:e2e-{kind}-{f[0]}",
                                                 "--message", f[1], env=gw.client_env, check=False, timeout=600),
                                facts))
    failed = [r.describe() for r in results if r.returncode != 0 or STUB_REPLY not in r.stdout]
    assert not failed, "an `openclaw agent` run failed:\n" + "\n\n".join(failed)
    assert not bad_lines("\n".join(r.stderr for r in results)), bad_lines("\n".join(r.stderr for r in results))
    return facts


def all_recalled(oc, facts: list[tuple[str, str]]) -> dict[str, float | None]:
    ended = time.monotonic()
    return {token: recalled_within(oc, token, max(1.0, RECALL_WITHIN_S - (time.monotonic() - ended)))
            for token, _ in facts}


def logs_of(oc, gw) -> str:
    return gw.output() + "\n" + (oc.log_file.read_text(errors="replace") if oc.log_file.exists() else "")


def test_ten_sessions_under_load_are_injected_acknowledged_at_once_and_recallable(oc, loaded_gateway):
    gw = loaded_gateway
    facts = run_sessions(oc, gw, "first", range(FIRST_SESSIONS))
    late = all_recalled(oc, facts)
    for token, prompt in facts:
        body = oc.stub.request_for(prompt)
        assert body is not None, f"{token}: the model never got its first request"
        user = find_user_message(body, prompt) or ""
        assert BLOCK_OPEN in user and SEED_TOKEN in user, f"{token}: no memory in its first request:\n{user[:2000]}"
    logs = logs_of(oc, gw)
    got = list({sid: ms for hook, sid, ms in acks(logs) if hook == "agent_end"}.values())
    print(f"[e2e] agent_end acknowledgements (ms): {sorted(got)}")
    print(f"[e2e] recallable after (s): {sorted(round(v, 1) for v in late.values() if v is not None)}")
    assert not bad_lines(logs), bad_lines(logs)
    assert len(got) >= FIRST_SESSIONS, f"{len(got)} agent_end acknowledgements\n{logs[-4000:]}"
    assert not LOADED or max(got) < ACK_LIMIT_MS, got
    assert all(v is not None for v in late.values()), f"not recallable within {RECALL_WITHIN_S} s: {late}"


def test_a_gateway_shutting_down_hands_sixteen_captures_over_at_once(oc, loaded_gateway):
    gw = loaded_gateway
    assert oc.alaya.run("serve", "status", "--json").stdout.count('"running": true') == 1, "the daemon is up"
    facts = run_sessions(oc, gw, "more", range(SHUTDOWN_SESSIONS - FIRST_SESSIONS))
    gw.stop()  # SIGTERM: a session_end for every open session, at once
    logs = logs_of(oc, gw)
    shutdown = list({sid: ms for hook, sid, ms in acks(logs) if hook == "session_end"}.values())
    late = all_recalled(oc, [fact("first", n) for n in range(FIRST_SESSIONS)] + facts)
    print(f"[e2e] session_end acknowledgements at shutdown (ms): {sorted(shutdown)}")
    print(f"[e2e] recallable after (s): {sorted(round(v, 1) for v in late.values() if v is not None)}")
    assert not bad_lines(logs), bad_lines(logs)
    assert len(shutdown) >= SHUTDOWN_SESSIONS, f"{len(shutdown)} session_end acknowledgements:\n{gw.output()[-5000:]}"
    assert not LOADED or max(shutdown) <= SHUTDOWN_ACK_LIMIT_MS, shutdown
    assert all(v is not None for v in late.values()), f"not recallable within {RECALL_WITHIN_S} s: {late}"
