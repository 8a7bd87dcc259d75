// A block that is never stale (issue 33). The session's block is cached (inject.js) and
// re-injected without a call; it is stale, and fetched again at the next turn, when:
//  - this process ran a memory write (memory_store, memory_forget: noteWrite, from tools.js);
//  - the store's memory generation moved on (`<data dir>/state/generation.json`, written by
//    alaya on every deliberate change: store/generation.py), whoever made the change (the CLI,
//    another gateway, the daemon): one small file read a turn, no `alaya` call;
//  - the session was compacted (noteCompaction: before_compaction / after_compaction).
// When the fresh block cannot be had in time (daemon cold, lock held, a timeout) the turn gets
// the last good block (lastGood) rather than nothing, but never a forgotten card: the lines
// citing a card forgotten since are dropped, and so are the lines that cite no card (the
// summary's derived text, which may repeat a forgotten card's words) when anything was forgotten
// since it was fetched; a block whose forgets cannot be known is not re-injected at all.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { state } from "./state.js";
import { resolveDataDir } from "./socket.js";
import { citedCards } from "./messages.js";

const GENERATION_FILE = join("state", "generation.json");
const MAX_FORGOTTEN = 5000; // ids kept by this process: far more than a session forgets
const WRITES = new Set(["memory_store", "memory_forget"]);
const ITEM = /^- /; // a block's item line (bridge/inject.py's template); card items cite "[id]"

/** The session key blocks are cached under: sessionId changes when compaction rotates the
 * session, sessionKey stays. */
export function blockKey(ctx) {
  return `${ctx?.agentId ?? ""}|${ctx?.sessionKey ?? ctx?.sessionId ?? ""}`;
}

/** A memory tool ran (or may have run): every cached block is stale; a forget's cards are
 * remembered as forgotten. `params` are the tool's, `details` its result's (when it answered). */
export function noteWrite(tool, params, details) {
  if (!WRITES.has(tool) || details?.dry_run === true) return; // a forget by query only lists cards
  const st = state();
  st.writes += 1;
  if (tool !== "memory_forget") return;
  const ids = Array.isArray(details?.cards) ? details.cards.map((c) => c?.id) : params?.ids;
  for (const id of Array.isArray(ids) ? ids : []) {
    if (typeof id !== "string") continue;
    st.forgotten.delete(id);
    st.forgotten.set(id, st.writes);
    if (st.forgotten.size > MAX_FORGOTTEN) st.forgotten.delete(st.forgotten.keys().next().value);
  }
}

/** The session was compacted: its cached block is fetched again at the next turn. */
export function noteCompaction(ctx) {
  const entry = state().recalled.get(blockKey(ctx));
  if (entry) entry.stale = true;
}

/** The store's generation file, or undefined when there is none to read (no data dir we can
 * see: a --data-dir inside `command`) — then only this process's writes are noticed. */
async function storeGeneration(cfg) {
  if (cfg.command.some((a) => a.startsWith("--data-dir"))) return undefined;
  let dir;
  try {
    dir = await resolveDataDir(cfg.dataDir);
  } catch {
    return undefined; // no data directory yet
  }
  try {
    const doc = JSON.parse(await readFile(join(dir, GENERATION_FILE), "utf8"));
    return {
      generation: Number(doc.generation) || 0,
      since: Number(doc.since) || 0,
      forgotten: Array.isArray(doc.forgotten) ? doc.forgotten : [],
    };
  } catch (err) {
    if (err?.code === "ENOENT") return { generation: 0, since: 0, forgotten: [] };
    return { generation: NaN, since: Infinity, forgotten: [] }; // unreadable: stale, forgets unknown
  }
}

/** Where memory stands now: {writes, store}; a block is stamped with it before its fetch. */
export async function currentStamp(cfg) {
  return { writes: state().writes, store: await storeGeneration(cfg) };
}

/** Whether a cached block (stamped `entry.stamp`) must be fetched again. */
export function isStale(entry, now) {
  if (entry.stale || !entry.stamp) return true;
  const was = entry.stamp.store?.generation;
  const is = now.store?.generation;
  return entry.stamp.writes !== now.writes || (was !== is && !(Number.isNaN(was) && Number.isNaN(is)));
}

/** Every card id this process or the store's generation file knows forgotten. */
function forgottenIds(now) {
  const gone = new Set(state().forgotten.keys());
  for (const [id] of now.store?.forgotten ?? []) gone.add(String(id));
  return gone;
}

/** Whether a card was forgotten after `stamp` was taken; null: cannot tell (the store's list
 * does not reach back that far, or the block was never stamped by the store). */
function forgottenSince(stamp, now) {
  if ([...state().forgotten.values()].some((at) => at > stamp.writes)) return true;
  if (!now.store) return false;
  const from = stamp.store?.generation;
  if (!Number.isFinite(from) || from < now.store.since) return null;
  return now.store.forgotten.some(([, at]) => at > from);
}

/** `text` without the item lines citing a card in `gone`, and without the lines citing no card
 * when `derived` is true; "" when something was dropped and no card line is left. */
function withoutForgotten(text, gone, derived) {
  let cards = 0;
  let dropped = 0;
  const kept = text.split("\n").filter((line) => {
    if (!ITEM.test(line)) return true;
    const ids = citedCards(line);
    const drop = ids.length === 0 ? derived : ids.some((id) => gone.has(id));
    if (drop) dropped += 1;
    else if (ids.length) cards += 1;
    return !drop;
  });
  if (!dropped) return text;
  return cards > 0 ? kept.join("\n") : "";
}

/** What a turn that cannot get a fresh block injects of `entry`'s: see the top of this file. */
export function lastGood(entry, now) {
  if (!entry?.text || !entry.stamp) return "";
  const since = forgottenSince(entry.stamp, now);
  return since === null ? "" : withoutForgotten(entry.text, forgottenIds(now), since);
}

/** Per-turn recall blocks (issue 32) minus those citing a forgotten card. */
export function withoutForgottenBlocks(blocks, now) {
  const gone = forgottenIds(now);
  return gone.size ? blocks.filter((b) => !citedCards(b).some((id) => gone.has(id))) : blocks;
}
