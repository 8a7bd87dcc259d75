// Memory injection (before_prompt_build), through `alaya hook session-start --budget N`.
//
//  - First turn of a session: the block is returned as `prependContext`, so it lands in that
//    turn's user message. (Where a host keeps it in the transcript, capture strips it again:
//    recall-loop prevention.)
//  - A later turn whose history does not hold that block (OpenClaw 2026.9.6 keeps only the plain
//    prompt in the history; elsewhere compaction summarises it away): the session's block is
//    returned as `appendSystemContext`, which is never written into the transcript, so it is
//    neither duplicated there nor captured back. The block is cached per session from the first
//    turn (or fetched on the first such turn when there is none, e.g. the first call failed) and
//    returned without a new call; every `refreshEveryTurns` turns it is fetched again and
//    replaced only when the text changed (a stable system prompt keeps the provider's prompt cache).
import { RUNTIME_SLACK_MS } from "./run.js";
import { state, claim } from "./state.js";
import { isFirstTurn, hasMemoryBlock, sanitizeMessages } from "./messages.js";
import { isHiddenRecallSession } from "./sessions.js";

const MAX_CACHED_SESSIONS = 500;

/** Register the before_prompt_build handler. `observeRun(ctx)`, when given, is called first on
 * every run (capture's provenance, lib/provenance.js); it must not throw. */
export function registerInjection(api, cfg, call, log, observeRun) {
  const st = state();

  async function sessionStart(event, c) {
    // currentUserMessage is the request itself; `prompt` may carry reconstructed history.
    const current = event?.currentUserMessage;
    const payload = {
      agentId: c.agentId,
      sessionKey: c.sessionKey,
      sessionId: c.sessionId,
      prompt: typeof current === "string" ? current : typeof event?.prompt === "string" ? event.prompt : "",
      messages: sanitizeMessages(event?.messages),
      workspaceDir: c.workspaceDir,
    };
    const started = Date.now();
    const out = await call(["hook", "session-start", "--budget", String(cfg.budgetTokens)], payload, cfg.startTimeoutMs);
    const text = typeof out.prependContext === "string" && out.prependContext.trim() ? out.prependContext : "";
    log.debug(`session-start for ${c.sessionKey ?? "?"}: ${text.length} chars in ${Date.now() - started} ms`);
    return text;
  }

  function remember(key, entry) {
    st.recalled.delete(key);
    st.recalled.set(key, entry);
    if (st.recalled.size > MAX_CACHED_SESSIONS) st.recalled.delete(st.recalled.keys().next().value);
    return entry.text;
  }

  /** The block for a later turn (its history lacks one): cached, refetched every refreshEveryTurns. */
  async function recalledBlock(key, event, c) {
    const entry = st.recalled.get(key);
    if (entry) {
      entry.turns += 1;
      if (cfg.refreshEveryTurns === 0 || entry.turns < cfg.refreshEveryTurns) return entry.text;
    }
    let text;
    try {
      text = await sessionStart(event, c);
    } catch (err) {
      if (!entry) throw err; // nothing cached: the next turn tries again
      log.warn(`memory refresh skipped: ${err?.message ?? err}`);
      entry.turns = 0;
      return entry.text;
    }
    return remember(key, { text: text && text !== entry?.text ? text : entry?.text ?? "", turns: 0 });
  }

  const handler = async (event, ctx) => {
    try {
      const c = ctx ?? {};
      if (isHiddenRecallSession(c)) return undefined;
      if (observeRun) {
        try {
          observeRun(c);
        } catch (err) {
          log.warn(`provenance: ${err?.message ?? err}`);
        }
      }
      const first = isFirstTurn(event?.messages);
      const sessionTag = `${c.agentId ?? ""}|${c.sessionKey ?? ""}|${c.sessionId ?? ""}`;
      // sessionId changes when compaction rotates the session; sessionKey stays.
      const sessionKey = `${c.agentId ?? ""}|${c.sessionKey ?? c.sessionId ?? ""}`;
      if (first === undefined) {
        // No history in the event (older hosts): inject once per session and process.
        if (st.injectedSessions.has(sessionTag)) return undefined;
        st.injectedSessions.add(sessionTag);
      }
      if (first === false && hasMemoryBlock(event?.messages)) return undefined;
      if (!claim(`inject|${c.runId ?? ""}|${sessionTag}|${event?.prompt ?? ""}`)) return undefined;
      if (first !== false) {
        st.recalled.delete(sessionKey); // a new session under this key (/new, /reset)
        const text = await sessionStart(event, c);
        remember(sessionKey, { text, turns: 0 });
        return text ? { prependContext: text } : undefined;
      }
      const text = await recalledBlock(sessionKey, event, c);
      return text ? { appendSystemContext: text } : undefined;
    } catch (err) {
      log.warn(`memory injection skipped: ${err?.message ?? err}`);
      return undefined;
    }
  };
  // OpenClaw's own per-handler budget (15 s by default) must not cut a call our timeout allows.
  api.on("before_prompt_build", handler, { timeoutMs: cfg.startTimeoutMs + RUNTIME_SLACK_MS + 1000 });
}
