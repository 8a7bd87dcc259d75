// Provenance for capture: what OpenClaw's hooks know about where a run came from, as the
// optional keys of `alaya hook session-end` (docs: the README's "What the plugin sends about
// provenance"). Nothing here decides trust: alaya does, from these facts.
//
// OpenClaw 2026.9.6 spreads them over several hooks, so some are remembered in process state:
//  - before_prompt_build's ctx carries `inputProvenance` (and, for channel runs, the sender),
//    agent_end's ctx does not: kept per runId until that run's agent_end;
//  - subagent_spawned names the child's session key and (in its ctx) the requester's; the
//    child's own hooks say nothing of a parent: kept per child session key;
//  - a requester's sessionId is not in subagent_spawned: the latest sessionId seen per key.
// Every map is bounded (oldest entries dropped), so a long-lived Gateway does not grow.
import { state } from "./state.js";

export const MAX_RUNS = 500;
export const MAX_CHILDREN = 500;
export const MAX_SESSIONS = 1000;

const KINDS_BY_TRIGGER = { cron: "cron", heartbeat: "heartbeat" };

function prov() {
  const st = state();
  if (!st.provenance) st.provenance = { runs: new Map(), children: new Map(), sessions: new Map(), latest: new Map() };
  return st.provenance;
}

function put(map, key, value, max) {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value);
}

const str = (v) => (typeof v === "string" && v ? v : typeof v === "number" && Number.isFinite(v) ? String(v) : undefined);

function senderOf(c) {
  return str(c?.senderId) ?? str(c?.channelContext?.sender?.id);
}

/** Remember the session's id under its key (the requester's sessionId for a later sub-agent). */
export function noteSession(ctx) {
  const key = str(ctx?.sessionKey);
  const id = str(ctx?.sessionId);
  if (key && id) put(prov().sessions, key, id, MAX_SESSIONS);
}

/** before_prompt_build: keep what this run's agent_end will not carry. */
export function noteRun(ctx) {
  const c = ctx ?? {};
  noteSession(c);
  const runId = str(c.runId);
  if (!runId) return;
  const run = {
    trigger: str(c.trigger),
    jobId: str(c.jobId),
    senderId: senderOf(c),
    channel: str(c.channel) ?? str(c.messageProvider),
    inputProvenance: c.inputProvenance && typeof c.inputProvenance === "object" ? c.inputProvenance : undefined,
  };
  if (Object.values(run).some((v) => v !== undefined)) put(prov().runs, runId, run, MAX_RUNS);
  const key = str(c.sessionKey);
  if (key) put(prov().latest, key, runId, MAX_SESSIONS);
}

/**
 * An agent tool call's provenance keys, so that alaya gives the call its session's standing (a
 * memory_store from a group chat a stranger talks in is not the owner's): the tool's ctx
 * (OpenClaw's tool context: `messageChannel`, `requesterSenderId`), else what the session's
 * latest run noted (its trigger, sender, channel, inputProvenance; a sub-agent's parent).
 */
export function toolProvenanceOf(ctx, ownerIds = []) {
  const c = ctx ?? {};
  const sessionKey = str(c.sessionKey);
  const runId = sessionKey ? prov().latest.get(sessionKey) : undefined;
  return provenanceOf({}, { sessionKey, runId, senderId: str(c.requesterSenderId), channel: str(c.messageChannel) }, ownerIds);
}

/** subagent_spawned: the child's session key → the requester's session. */
export function noteSpawn(event, ctx) {
  const child = str(event?.childSessionKey) ?? str(ctx?.childSessionKey);
  const parentKey = str(ctx?.requesterSessionKey) ?? str(event?.requesterSessionKey);
  if (!child || !parentKey) return;
  put(prov().children, child, { parentSessionKey: parentKey, parentSessionId: prov().sessions.get(parentKey) }, MAX_CHILDREN);
}

/** Forget a finished run (after its agent_end was captured). */
export function forgetRun(runId) {
  if (str(runId)) prov().runs.delete(runId);
}

/** `commands.ownerAllowFrom` of the host config, as strings ([] when unset or unreadable).
 * The runtime's current snapshot first (it follows config reloads), else the register-time one. */
export function ownerIdsOf(api) {
  let cfg;
  try {
    cfg = api?.runtime?.config?.current?.();
  } catch {
    cfg = undefined;
  }
  const list = (cfg ?? api?.config)?.commands?.ownerAllowFrom;
  if (!Array.isArray(list)) return [];
  return [...new Set(list.map(str).filter((v) => v && v !== "*"))];
}

/**
 * The contract's event-level keys for one capture, only those OpenClaw (or the config) gave:
 * {sessionKind, trigger, jobId, parentSessionKey, parentSessionId, senderId, channel,
 *  inputProvenance, ownerIds}. `{}` when nothing is known: the payload is then what it was before.
 */
export function provenanceOf(event, ctx, ownerIds = []) {
  const c = ctx ?? {};
  const { runs, children, sessions } = prov();
  const sessionKey = str(c.sessionKey) ?? str(event?.sessionKey);
  const runId = str(c.runId) ?? str(event?.runId);
  const run = (runId && runs.get(runId)) || {};
  const child = sessionKey ? children.get(sessionKey) : undefined;

  const out = {};
  const trigger = str(c.trigger) ?? run.trigger;
  const jobId = str(c.jobId) ?? run.jobId;
  if (child || sessionKey?.includes(":subagent:")) out.sessionKind = "subagent";
  else if (jobId) out.sessionKind = "cron";
  else if (KINDS_BY_TRIGGER[trigger]) out.sessionKind = KINDS_BY_TRIGGER[trigger];
  if (trigger) out.trigger = trigger;
  if (jobId) out.jobId = jobId;
  if (child) {
    out.parentSessionKey = child.parentSessionKey;
    const parentId = child.parentSessionId ?? sessions.get(child.parentSessionKey);
    if (parentId) out.parentSessionId = parentId;
  }
  const senderId = senderOf(c) ?? run.senderId;
  if (senderId) out.senderId = senderId;
  const channel = str(c.channel) ?? str(c.messageProvider) ?? run.channel;
  if (channel) out.channel = channel;
  const inputProvenance = run.inputProvenance ?? (c.inputProvenance && typeof c.inputProvenance === "object" ? c.inputProvenance : undefined);
  if (inputProvenance) out.inputProvenance = inputProvenance;
  if (ownerIds.length) out.ownerIds = ownerIds;
  return out;
}
