"""The daemon's background distilling (issue 33): a capture handed to `alaya serve` is answered
as soon as its turns are in L3 (and its Session node in L2), and the session is distilled here,
one session at a time, after the answer.

Crash-safe without a file of its own: a captured session whose turns are not all distilled is
pending in the graph (`distilled_turns < turn_count`), so a daemon that starts seeds its queue
from `pending_sessions()`, and `alaya introspect`'s distill-pending step finds the same ones.

Readers come first: the daemon runs one command at a time (`running`, daemon.py), and before
each session the worker waits while a command is waiting for that turn (`busy`), so that a
session start or a capture never queues behind more than one session's distilling. The write
lock itself is taken only to apply a session's cards (engine.distill: computed outside it).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

_YIELD = 0.02  # seconds the worker sleeps while a command waits for its turn
_RETRY = 30.0  # seconds before a session whose distilling failed is tried again


class DistillQueue:
    """Sessions to distil, in order, deduplicated; one worker thread."""

    def __init__(self, memory: Callable[[], Any], running: AbstractContextManager[Any], busy: Callable[[], bool]) -> None:
        self._memory = memory
        self._running = running
        self._busy = busy
        self._order: list[tuple[str, str]] = []  # (session id, agent)
        self._cond = threading.Condition()
        self._stop = False
        self._current: str | None = None
        self._agents: set[str] = set()  # whose summary to refresh once the queue is empty
        self.done = 0
        self.failed = 0
        self._thread = threading.Thread(target=self._work, name="alaya-distill", daemon=True)

    def start(self) -> None:
        """Seed from the sessions left pending (a crash, a cold capture that gave up) and start."""
        try:
            for row in self._memory().pending_sessions():
                self.add(row["id"], row.get("agent_id") or "shared")
        except Exception as exc:  # noqa: BLE001 - an unreadable store: captures still queue
            print(f"alaya serve: pending sessions not read: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        self._thread.start()

    def add(self, session_id: str, agent: str) -> None:
        with self._cond:
            if session_id != self._current and all(sid != session_id for sid, _ in self._order):
                self._order.append((session_id, agent))
            self._cond.notify()

    def waiting(self) -> int:
        """Sessions captured and not distilled yet (the one being distilled included)."""
        with self._cond:
            return len(self._order) + (self._current is not None)

    def stop(self, wait: float) -> None:
        """Let the session under way finish (up to `wait` seconds); the rest stays pending."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(wait)

    def drain(self, wait: float) -> None:
        """Wait up to `wait` seconds for the queue to empty (`alaya serve stop`)."""
        with self._cond:
            self._cond.wait_for(lambda: not self._order and self._current is None, timeout=wait)

    def _next(self) -> tuple[str, str] | None:
        with self._cond:
            self._cond.wait_for(lambda: self._order or self._stop)
            if self._stop:
                return None
            item = self._order.pop(0)
            self._current = item[0]
            return item

    def _work(self) -> None:
        while (item := self._next()) is not None:
            sid, agent = item
            try:
                while self._busy():  # a session start or a capture waits: it goes first
                    threading.Event().wait(_YIELD)
                with self._running:
                    self._distill(sid)
                self._agents.add(agent)
                self.done += 1
            except Exception as exc:  # noqa: BLE001 - the session stays pending; tried again later
                self.failed += 1
                print(f"alaya serve: distilling {sid} failed, left pending: {type(exc).__name__}: "
                      f"{' '.join(str(exc).split())[:300]}", file=sys.stderr, flush=True)
                retry = threading.Timer(_RETRY, self.add, (sid, agent))
                retry.daemon = True
                retry.start()
            finally:
                with self._cond:
                    self._current = None
                    idle = not self._order
                    self._cond.notify_all()
            if idle and self._agents:
                self._refresh_summary()

    def _distill(self, sid: str) -> None:
        from ..bridge.capture import hook_deadline

        memory = self._memory()
        with hook_deadline(memory):  # a model-backed distiller holds the daemon no longer than in a hook
            memory.distill(sid)

    def _refresh_summary(self) -> None:
        """The summaries of the agents whose sessions were distilled, once the queue is empty
        (not after each session: a burst of captures at a Gateway's shutdown)."""
        from ..bridge import summary

        agents, self._agents = sorted(self._agents), set()
        try:
            while self._busy():
                threading.Event().wait(_YIELD)
            with self._running:
                summary.refresh(self._memory(), agents)
        except Exception as exc:  # noqa: BLE001 - a cache; the next session-start recomputes it
            print(f"alaya serve: summary not refreshed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
