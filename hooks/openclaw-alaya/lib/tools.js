// The agent tools. Each is a thin call of `alaya hook tool NAME` with
// {agentId, sessionKey, sessionId, params} on stdin and {text, details} on stdout, which becomes
// the tool result {content: [{type: "text", text}], details}.
//
// memory_search and memory_get are `catalogMode: "direct-only"`: OpenClaw's default Tool Search
// would otherwise defer plugin tools behind tool_search, and the model (and Active Memory, whose
// default toolsAllow is exactly these two) must see them. memory_store and memory_forget are
// deliberate, rarer acts and stay in the catalog, reachable through tool_search / tool_call.
//
// The tools' names, labels, descriptions and parameter schemas are the Python catalog's
// (openclaw_alaya/tools/catalog.py), written to tool-schemas.json by
// `python -m openclaw_alaya.cli.generated` and checked against it in CI (tests/test_generated.py).
import { readFileSync } from "node:fs";
import { ownerIdsOf, toolProvenanceOf } from "./provenance.js";
import { noteWrite } from "./freshness.js";

export const TOOLS = Object.freeze(
  JSON.parse(readFileSync(new URL("./tool-schemas.json", import.meta.url), "utf8")).tools,
);

export const TOOL_NAMES = Object.freeze(TOOLS.map((t) => t.name));

/** The params the tool declares, as the model sent them (unknown keys, such as the built-in
 * memory_search's corpus/minScore, are dropped rather than failing the call). */
function declared(params, spec) {
  const out = {};
  for (const key of Object.keys(spec.parameters.properties)) {
    if (params && params[key] !== undefined) out[key] = params[key];
  }
  return out;
}

function toResult(name, out) {
  const text = typeof out.text === "string" ? out.text : JSON.stringify(out);
  const details = out.details && typeof out.details === "object" ? out.details : {};
  return { content: [{ type: "text", text }], details: withRecallEvidence(name, text, details) };
}

/** Active Memory (OpenClaw 2026.9.6) keeps its sub-agent's summary only when a memory tool
 * result counts as evidence: memory_search's `details.results` a non-empty list, memory_get's
 * `details.text` a non-empty string (hasUsableMemoryResultInSessionRecord); otherwise it reports
 * status=no_relevant_memory and drops the summary. alaya's recall JSON has `nodes`, so it is
 * named `results` too; memory_get's text (when it found something) is its answer's text. */
export function withRecallEvidence(name, text, details) {
  if (name === "memory_search" && details.results === undefined && Array.isArray(details.nodes)) {
    return { ...details, results: details.nodes };
  }
  if (name === "memory_get" && details.text === undefined && details.results?.length > 0) return { ...details, text };
  return details;
}

/** One concrete tool for a run; ctx is OpenClaw's tool context (agentId, sessionKey, sessionId,
 * messageChannel, requesterSenderId), sent with the provenance keys capture sends (alaya gives
 * the call its session's standing); `ownerIds` is `commands.ownerAllowFrom`. */
export function makeTool(spec, ctx, cfg, call, log, ownerIds = []) {
  return {
    name: spec.name,
    label: spec.label,
    description: spec.description,
    parameters: spec.parameters,
    ...(spec.direct ? { catalogMode: "direct-only" } : {}),
    async execute(_toolCallId, params) {
      const payload = { ...toolProvenanceOf(ctx, ownerIds), agentId: ctx.agentId, sessionKey: ctx.sessionKey,
        sessionId: ctx.sessionId, params: declared(params, spec) };
      let out;
      try {
        out = toResult(spec.name, await call(["hook", "tool", spec.name], payload, cfg.toolTimeoutMs));
        return out;
      } catch (err) {
        log.warn(`${spec.name} failed: ${err?.message ?? err}`);
        // A rejected execute is OpenClaw's documented failure path: the agent loop turns it into
        // an isError tool result carrying this message; the host itself never sees a throw.
        throw new Error(err?.cliMessage ?? err?.message ?? String(err));
      } finally {
        noteWrite(spec.name, payload.params, out?.details); // a failed write may have run: stale too (issue 33)
      }
    },
  };
}

/** Register every tool, in factory form so each run's tool knows its agent and session. */
export function registerTools(api, cfg, call, log) {
  if (typeof api.registerTool !== "function") return;
  for (const spec of TOOLS) {
    api.registerTool((ctx) => makeTool(spec, ctx ?? {}, cfg, call, log, ownerIdsOf(api)), { name: spec.name });
  }
}
