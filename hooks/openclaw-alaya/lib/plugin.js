// The wiring: one registration of the plugin into one api object. register(api) may run several
// times per process (see state.js), so:
//  - the same api object is never wired twice (WeakSet);
//  - the only process started here is the daemon, once per process and only in "full" mode;
//  - if two registrations both receive the same event, only the first handler runs alaya
//    (claim()), so memory is injected once and a capture is not sent twice.
import { resolveConfig } from "./config.js";
import { alayaCaller } from "./alaya.js";
import { state, claim } from "./state.js";
import { sanitizeMessages } from "./messages.js";
import { registerInjection } from "./inject.js";
import { registerTools } from "./tools.js";
import { registerDaemon } from "./daemon.js";
import { registerCapability } from "./capability.js";
import { memoryRuntime } from "./runtime.js";
import { registerCli } from "./cli.js";
import { handOver } from "./capture.js";
import { isHiddenRecallSession } from "./sessions.js";
import { noteRun, noteSession, noteSpawn, forgetRun, ownerIdsOf, provenanceOf } from "./provenance.js";

export const PLUGIN_ID = "openclaw-alaya";

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

/** Note a run's provenance; never throws, never returns a result to the host. */
function observe(observeRun, ctx, log) {
  try {
    if (!isHiddenRecallSession(ctx)) observeRun(ctx);
  } catch (err) {
    log.warn(`provenance: ${err?.message ?? err}`);
  }
  return undefined;
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
 * @param {object} api OpenClaw plugin api (on, registerTool, registerService,
 *   registerMemoryCapability, pluginConfig, logger, runtime, registrationMode)
 */
export function registerAlaya(api) {
  if (!api || typeof api.on !== "function") return false;
  const st = state();
  if (st.apis.has(api)) return false;
  st.apis.add(api);

  const log = makeLog(api.logger);
  const cfg = resolveConfig(api.pluginConfig, log.warn);
  const call = alayaCaller(api, cfg);

  registerCapability(api, memoryRuntime(cfg, call, log));
  registerCli(api, cfg, call, log);
  registerTools(api, cfg, call, log);
  registerDaemon(api, cfg, log);
  // before_prompt_build also feeds capture's provenance (lib/provenance.js): its ctx carries what
  // agent_end's lacks. One handler per registration: injection's, or this observer alone.
  const observeRun = cfg.captureEnabled ? (ctx) => noteRun(ctx) : undefined;
  if (cfg.injectEnabled) registerInjection(api, cfg, call, log, observeRun);
  else if (observeRun) api.on("before_prompt_build", (event, ctx) => observe(observeRun, ctx, log));

  if (cfg.captureEnabled) {
    api.on("subagent_spawned", (event, ctx) => {
      try {
        noteSpawn(event, ctx);
      } catch (err) {
        log.warn(`provenance: ${err?.message ?? err}`);
      }
      return undefined;
    });
    for (const hookName of cfg.captureOn) {
      // The promise is returned so the host can track it (OpenClaw runs these as "void" hooks
      // after the reply is out): capture never delays the agent's reply, and the promise
      // settles within captureWaitMs, inside OpenClaw's 5 s cleanup window.
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
      if (isHiddenRecallSession({ sessionKey, sessionId })) return undefined;
      const last = messages[messages.length - 1];
      const key = `capture|${hookName}|${c.runId ?? event?.runId ?? ""}|${sessionKey ?? ""}|${sessionId ?? ""}|${messages.length}|${last?.timestamp ?? ""}|${event?.reason ?? ""}`;
      if (!claim(key)) return undefined;
      noteSession(c);
      const payload = {
        agentId: c.agentId,
        sessionKey,
        sessionId,
        reason: captureReason(hookName, event),
        messages,
        ...provenanceOf(event, c, ownerIdsOf(api)),
      };
      if (hookName === "agent_end") forgetRun(c.runId ?? event?.runId);
      // settles once acknowledged, or after captureWaitMs: the capture goes on without holding
      // OpenClaw (lib/capture.js, issue 33)
      const job = enqueue(sessionKey ?? sessionId, () => call(["hook", "session-end"], payload, cfg.captureTimeoutMs, { detached: true }));
      return handOver(job, cfg.captureWaitMs, log, `${hookName} ${sessionId ?? sessionKey}`);
    } catch (err) {
      log.warn(`${hookName} capture failed: ${err?.message ?? err}`);
      return undefined;
    }
  }

  return true;
}
