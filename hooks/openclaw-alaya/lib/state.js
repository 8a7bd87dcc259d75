// Process-wide plugin state. register(api) may run several times per process (OpenClaw 2026.9.6
// calls it once in "full" and twice in "discovery" mode, each with its own api object) and a host
// may import the entry more than once, so what must happen once per process lives on globalThis.
const STATE_KEY = Symbol.for("openclaw-alaya.plugin-state");
const DEDUPE_TTL_MS = 60_000;

export function state() {
  if (!globalThis[STATE_KEY]) {
    globalThis[STATE_KEY] = {
      apis: new WeakSet(), // api objects already wired
      recent: new Map(), // claim key → time
      queues: new Map(), // session → tail of its capture queue
      injectedSessions: new Set(), // sessions injected on hosts that send no history
      recalled: new Map(), // session → {text, turns, stamp, stale}: the block re-injected as system context
      writes: 0, // memory writes this process ran (issue 33: each makes every cached block stale)
      forgotten: new Map(), // card id → `writes` when this process forgot it (lib/freshness.js)
      turnBlocks: new Map(), // session → the latest per-turn recall blocks (issue 32), oldest first
      daemons: new Set(), // `alaya serve start` argv already run by this process
    };
  }
  return globalThis[STATE_KEY];
}

/** Test helper: forget all process-wide state. */
export function _resetState() {
  delete globalThis[STATE_KEY];
}

/** True once per key within DEDUPE_TTL_MS, process-wide: if several registrations of this plugin
 * receive one event, only the first handler acts on it. */
export function claim(key) {
  const { recent } = state();
  const now = Date.now();
  for (const [k, t] of recent) if (now - t > DEDUPE_TTL_MS) recent.delete(k);
  if (recent.has(key)) return false;
  recent.set(key, now);
  return true;
}
