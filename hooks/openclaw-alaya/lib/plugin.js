// The hook wiring. register(api) may run several times per process (OpenClaw 2026.9.6 calls it
// once in "full" and twice in "discovery" mode, each with its own api object), so:
//  - register() has no side effects beyond api.on(...) (no processes, timers or files);
//  - the same api object is never wired twice (WeakSet);
//  - if two registrations of this plugin both receive the same event, only the first handler
//    runs alaya (a process-wide dedupe keyed on runId/session/event), so memory is injected
//    once and a capture is not sent twice.
import { resolveConfig, alayaArgv } from "./config.js";
import { runCommand, parseJsonObject } from "./run.js";

export const PLUGIN_ID = "openclaw-alaya";
const DEDUPE_TTL_MS = 60_000;

// Shared across module copies (a host may import the entry more than once).
const STATE_KEY = Symbol.for("openclaw-alaya.plugin-state");
function state() {
  if (!globalThis[STATE_KEY]) {
    globalThis[STATE_KEY] = { apis: new WeakSet(), recent: new Map(), queues: new Map(), injectedSessions: new Set() };
  }
  return globalThis[STATE_KEY];
}

/** Test helper: forget dedupe/queue state. */
export function _resetState() {
  delete globalThis[STATE_KEY];
}

/** True once per key within DEDUPE_TTL_MS, process-wide. */
function claim(key) {
  const { recent } = state();
  const now = Date.now();
  for (const [k, t] of recent) if (now - t > DEDUPE_TTL_MS) recent.delete(k);
  if (recent.has(key)) return false;
  recent.set(key, now);
  return true;
}

function makeLog(logger) {
  const emit = (level, msg) => {
    const line = `[${PLUGIN_ID}] ${msg}`;
    try {
      const fn = logger?.[level] ?? (level === "debug" ? undefined : logger?.info);
      if (typeof fn === "function") fn.call(logger, line);
      else if (level !== "debug") console.error(line);
    } catch {
      /* a broken logger must not break the turn */
    }
  };
  return {
    debug: (m) => emit("debug", m),
    info: (m) => emit("info", m),
    warn: (m) => emit("warn", m),
    error: (m) => emit("error", m),
  };
}

/** First turn of a session: no earlier user/assistant message in the history. */
export function isFirstTurn(messages) {
  if (!Array.isArray(messages)) return undefined; // unknown
  return !messages.some((m) => m && (m.role === "user" || m.role === "assistant"));
}

// Images are kept as a marker only: base64 payloads can be megabytes and alaya stores text.
function stripBlock(block) {
  if (block && typeof block === "object" && block.type === "image") {
    const { data, source, ...rest } = block;
    return { ...rest, omitted: true };
  }
  return block;
}

/** Messages as sent to alaya: OpenClaw message objects, minus binary image data. */
export function sanitizeMessages(messages) {
  if (!Array.isArray(messages)) return [];
  return messages
    .filter((m) => m && typeof m === "object")
    .map((m) => (Array.isArray(m.content) ? { ...m, content: m.content.map(stripBlock) } : m));
}

function captureReason(hookName, event) {
  switch (hookName) {
    case "agent_end":
      return "agent_end";
    case "before_compaction":
      return "compaction";
    case "before_reset":
      return typeof event?.reason === "string" && event.reason ? event.reason : "reset";
    case "session_end":
      return typeof event?.reason === "string" && event.reason ? event.reason : "session_end";
    default:
      return hookName;
  }
}

/** Run jobs for one session one after another (e.g. before_reset's messages before session_end). */
function enqueue(sessionKey, job) {
  const { queues } = state();
  const prev = queues.get(sessionKey) ?? Promise.resolve();
  const next = prev.then(job, job);
  const tail = next.catch(() => {});
  queues.set(sessionKey, tail);
  tail.then(() => {
    if (queues.get(sessionKey) === tail) queues.delete(sessionKey);
  });
  return next;
}

/**
 * Wire the plugin into one api object. Returns false when nothing was registered.
 * @param {object} api OpenClaw plugin api (on, pluginConfig, logger, runtime, registrationMode)
 */
export function registerAlaya(api) {
  if (!api || typeof api.on !== "function") return false;
  const st = state();
  if (st.apis.has(api)) return false;
  st.apis.add(api);

  const log = makeLog(api.logger);
  const cfg = resolveConfig(api.pluginConfig, log.warn);
  const runtimeRun = (...args) => {
    const fn = api.runtime?.system?.runCommandWithTimeout;
    if (typeof fn !== "function") throw new Error("no runtime runner");
    return fn.apply(api.runtime.system, args);
  };
  const hasRuntime = () => typeof api.runtime?.system?.runCommandWithTimeout === "function";

  async function callAlaya(args, payload, timeoutMs) {
    const argv = alayaArgv(cfg, args);
    const res = await runCommand(argv, {
      input: JSON.stringify(payload),
      timeoutMs,
      runtimeRun: hasRuntime() ? runtimeRun : undefined,
    });
    if (!res.ok) throw new Error(res.error);
    return parseJsonObject(res.stdout);
  }

  if (cfg.injectEnabled) {
    api.on("before_prompt_build", async (event, ctx) => {
      try {
        const c = ctx ?? {};
        const first = isFirstTurn(event?.messages);
        if (first === false) return undefined;
        const sessionTag = `${c.agentId ?? ""}|${c.sessionKey ?? ""}|${c.sessionId ?? ""}`;
        if (first === undefined) {
          // No history in the event (older hosts): inject once per session and process.
          if (st.injectedSessions.has(sessionTag)) return undefined;
          st.injectedSessions.add(sessionTag);
        }
        if (!claim(`inject|${c.runId ?? ""}|${sessionTag}|${event?.prompt ?? ""}`)) return undefined;
        const payload = {
          agentId: c.agentId,
          sessionKey: c.sessionKey,
          sessionId: c.sessionId,
          prompt: typeof event?.prompt === "string" ? event.prompt : "",
          messages: sanitizeMessages(event?.messages),
          workspaceDir: c.workspaceDir,
        };
        const started = Date.now();
        const out = await callAlaya(
          ["hook", "session-start", "--budget", String(cfg.budgetTokens)],
          payload,
          cfg.startTimeoutMs,
        );
        const text = typeof out.prependContext === "string" ? out.prependContext : "";
        log.debug(`session-start for ${c.sessionKey ?? "?"}: ${text.length} chars in ${Date.now() - started} ms`);
        return text.trim() ? { prependContext: text } : undefined;
      } catch (err) {
        log.warn(`memory injection skipped: ${err?.message ?? err}`);
        return undefined;
      }
    });
  }

  if (cfg.captureEnabled) {
    for (const hookName of cfg.captureOn) {
      // The promise is returned so the host can track it (OpenClaw runs these as "void" hooks
      // after the reply is out, with its own 30 s ceiling for agent_end/before_compaction):
      // capture never delays the agent's reply, and our own hard timeout bounds it.
      api.on(hookName, (event, ctx) => capture(hookName, event, ctx));
    }
  }

  function capture(hookName, event, ctx) {
    try {
      const c = ctx ?? {};
      const sessionId = c.sessionId ?? event?.sessionId;
      const sessionKey = c.sessionKey ?? event?.sessionKey;
      const messages = sanitizeMessages(event?.messages);
      // session_end carries no messages in OpenClaw; it is still sent as the end-of-session signal.
      if (hookName !== "session_end" && messages.length === 0) return undefined;
      if (!sessionId && !sessionKey) {
        log.warn(`${hookName}: no sessionId/sessionKey in the hook context; capture skipped`);
        return undefined;
      }
      const last = messages[messages.length - 1];
      const key = `capture|${hookName}|${c.runId ?? event?.runId ?? ""}|${sessionKey ?? ""}|${sessionId ?? ""}|${messages.length}|${last?.timestamp ?? ""}|${event?.reason ?? ""}`;
      if (!claim(key)) return undefined;
      const payload = {
        agentId: c.agentId,
        sessionKey,
        sessionId,
        reason: captureReason(hookName, event),
        messages,
      };
      return enqueue(sessionKey ?? sessionId, async () => {
        try {
          const out = await callAlaya(["hook", "session-end"], payload, cfg.captureTimeoutMs);
          log.debug(`${hookName} captured ${sessionId ?? sessionKey}: ${JSON.stringify(out).slice(0, 200)}`);
        } catch (err) {
          log.warn(`${hookName} capture failed: ${err?.message ?? err}`);
        }
      });
    } catch (err) {
      log.warn(`${hookName} capture failed: ${err?.message ?? err}`);
      return undefined;
    }
  }

  return true;
}
