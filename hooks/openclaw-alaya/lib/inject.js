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
//  - Every later turn, with `turnRecall` (issue 32): the user's message goes to the warm daemon's
//    `alaya hook turn`, which answers with the cards it brings back that the session does not show
//    yet (most of the time: none). Such a block is added after the session's block in
//    `appendSystemContext`, and kept there for the next turns (the last TURN_BLOCKS_KEPT blocks),
//    so the system prompt changes only when something new came back. Only a daemon answers it,
//    within `turnTimeoutMs`: no daemon, a slow one or an error and the turn goes on without it.
//  - A cached block is never stale (issue 33, lib/freshness.js): a memory write, a change of the
//    store's generation or a compaction has it fetched again at the next turn, taken as it comes
//    (even empty: what it showed may be forgotten). When that fetch fails, or a first turn's does,
//    the turn gets the last good block (the session's, or on a first turn the agent's latest),
//    never with a card forgotten since; it stays stale, so the next turn tries again.
import { RUNTIME_SLACK_MS } from "./run.js";
import { state, claim } from "./state.js";
import { isFirstTurn, hasMemoryBlock, sanitizeMessages, citedCards, historyCards } from "./messages.js";
import { isHiddenRecallSession } from "./sessions.js";
import { blockKey, currentStamp, isStale, lastGood, noteCompaction, withoutForgottenBlocks } from "./freshness.js";

const MAX_CACHED_SESSIONS = 500;
// Per-turn blocks a session keeps in its system context (issue 32): at most
// 3 × hook.turn_budget_tokens (900 by default) on top of the session's block.
export const TURN_BLOCKS_KEPT = 3;

/** The user's request itself; `prompt` may carry reconstructed history. */
function currentMessage(event) {
  const current = event?.currentUserMessage;
  return typeof current === "string" ? current : typeof event?.prompt === "string" ? event.prompt : "";
}

/** Put `value` under `key`, the newest of at most MAX_CACHED_SESSIONS entries. */
function keep(map, key, value) {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_CACHED_SESSIONS) map.delete(map.keys().next().value);
  return value;
}

/** Register the before_prompt_build handler. `observeRun(ctx)`, when given, is called first on
 * every run (capture's provenance, lib/provenance.js); it must not throw. */
export function registerInjection(api, cfg, call, log, observeRun) {
  const st = state();

  async function sessionStart(event, c) {
    const payload = {
      agentId: c.agentId,
      sessionKey: c.sessionKey,
      sessionId: c.sessionId,
      prompt: currentMessage(event),
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
    return keep(st.recalled, key, entry).text;
  }

  /** The latest block of another session of this agent, for a first turn that got none. */
  function agentsLastGood(c, now) {
    const prefix = `${c.agentId ?? ""}|`;
    for (const [key, entry] of [...st.recalled].reverse()) {
      const text = key.startsWith(prefix) ? lastGood(entry, now) : "";
      if (text) return text;
    }
    return "";
  }

  /** This turn's new cards (issue 32) added to the session's kept turn blocks; those blocks. */
  async function turnRecall(key, event, c, shown, now) {
    const blocks = withoutForgottenBlocks(st.turnBlocks.get(key) ?? [], now);
    const message = currentMessage(event);
    if (!message.trim()) return blocks;
    const exclude = [...new Set([...citedCards(shown), ...blocks.flatMap(citedCards), ...historyCards(event?.messages)])];
    const args = ["hook", "turn"];
    if (cfg.turnBudgetTokens !== undefined) args.push("--budget", String(cfg.turnBudgetTokens));
    if (cfg.turnMaxCards !== undefined) args.push("--max-cards", String(cfg.turnMaxCards));
    if (cfg.turnMinSimilarity !== undefined) args.push("--min-similarity", String(cfg.turnMinSimilarity));
    const payload = { agentId: c.agentId, sessionKey: c.sessionKey, sessionId: c.sessionId, prompt: message, exclude };
    const started = Date.now();
    let out;
    try {
      out = await call(args, payload, cfg.turnTimeoutMs, { daemonOnly: true });
    } catch (err) {
      if (err?.miss) log.debug(`turn recall skipped: ${err.message}`);
      else log.warn(`turn recall skipped: ${err?.message ?? err}`);
      return blocks;
    }
    const text = typeof out.appendSystemContext === "string" ? out.appendSystemContext.trim() : "";
    log.debug(`turn recall for ${c.sessionKey ?? "?"}: ${text.length} chars in ${Date.now() - started} ms`);
    return text ? keep(st.turnBlocks, key, [...blocks, text].slice(-TURN_BLOCKS_KEPT)) : blocks;
  }

  /** The block for a later turn (its history lacks one): cached while fresh, refetched every
   * refreshEveryTurns. */
  async function recalledBlock(key, event, c, now) {
    const entry = st.recalled.get(key);
    const stale = entry !== undefined && isStale(entry, now);
    if (entry && !stale) {
      entry.turns += 1;
      if (cfg.refreshEveryTurns === 0 || entry.turns < cfg.refreshEveryTurns) return entry.text;
    }
    let text;
    try {
      text = await sessionStart(event, c);
    } catch (err) {
      if (!entry) throw err; // nothing cached: the next turn tries again
      if (!stale) {
        log.warn(`memory refresh skipped: ${err?.message ?? err}`);
        entry.turns = 0;
        return entry.text;
      }
      const last = lastGood(entry, now);
      log.warn(`fresh memory not had in time (${err?.message ?? err}): ${last ? "the last good block" : "no block"} this turn`);
      return last;
    }
    const kept = !stale && !(text && text !== entry?.text) ? entry?.text ?? "" : text; // same text: the provider's prompt cache
    return remember(key, { text: kept, turns: 0, stamp: now });
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
      const sessionKey = blockKey(c);
      if (first === undefined) {
        // No history in the event (older hosts): inject once per session and process.
        if (st.injectedSessions.has(sessionTag)) return undefined;
        st.injectedSessions.add(sessionTag);
      }
      const inHistory = first === false && hasMemoryBlock(event?.messages);
      if (inHistory && !cfg.turnRecall) return undefined;
      if (!claim(`inject|${c.runId ?? ""}|${sessionTag}|${event?.prompt ?? ""}`)) return undefined;
      const now = await currentStamp(cfg); // before the fetch: a write meanwhile leaves it stale
      if (first !== false) {
        st.recalled.delete(sessionKey); // a new session under this key (/new, /reset)
        st.turnBlocks.delete(sessionKey);
        let text;
        try {
          text = await sessionStart(event, c);
        } catch (err) {
          text = agentsLastGood(c, now);
          if (!text) throw err;
          log.warn(`fresh memory not had in time (${err?.message ?? err}): the agent's last good block this turn`);
          remember(sessionKey, { text, turns: 0, stamp: now, stale: true });
          return { prependContext: text };
        }
        remember(sessionKey, { text, turns: 0, stamp: now });
        return text ? { prependContext: text } : undefined;
      }
      let block = "";
      if (!inHistory) {
        try {
          block = await recalledBlock(sessionKey, event, c, now);
        } catch (err) {
          if (!cfg.turnRecall) throw err;
          log.warn(`memory injection skipped: ${err?.message ?? err}`);
        }
      }
      const turns = cfg.turnRecall ? await turnRecall(sessionKey, event, c, block, now) : [];
      const text = [block, ...turns].filter(Boolean).join("\n\n");
      return text ? { appendSystemContext: text } : undefined;
    } catch (err) {
      log.warn(`memory injection skipped: ${err?.message ?? err}`);
      return undefined;
    }
  };
  // OpenClaw's own per-handler budget (15 s by default) must not cut a call our timeout allows.
  const turnMs = cfg.turnRecall ? cfg.turnTimeoutMs : 0; // a refresh and a turn recall, one after the other
  api.on("before_prompt_build", handler, { timeoutMs: cfg.startTimeoutMs + turnMs + RUNTIME_SLACK_MS + 1000 });
  // Compaction (issue 33): the session's block is fetched again at its next turn (OpenClaw emits
  // after_compaction for every successful compaction, even one that changed nothing).
  api.on("after_compaction", (_event, ctx) => {
    if (!isHiddenRecallSession(ctx ?? {})) noteCompaction(ctx);
    return undefined;
  });
}
