// The memory runtime and the CLI commands (issue 33): OpenClaw's memory surfaces answered by alaya.
import { test } from "node:test";
import assert from "node:assert/strict";

import { memoryRuntime, hitOf } from "../lib/runtime.js";
import { registerCli, memoryCommandFree, renderHits } from "../lib/cli.js";

const STATUS = { data_dir: "/d", sessions: 2, cards: 3, links: 1, pending_sessions: 1, embedder: "hash-v1-1024",
  distiller: "heuristic", tiers: { HOT: 3, WARM: 0, COLD: 0 } };
const NODE = { card_id: "card-1", title: "Uses pnpm", content: "user: I use pnpm", score: 0.83, origin: "owner" };
const log = { warn: () => {}, debug: () => {}, info: () => {}, error: () => {} };
const cfg = { toolTimeoutMs: 5000, dataDir: "/d" };

function fakeCall(answers) {
  const seen = [];
  const call = async (args, payload) => {
    seen.push({ args, payload });
    const key = args.join(" ");
    if (!(key in answers)) throw Object.assign(new Error(`no answer for ${key}`), { cliMessage: "boom" });
    return answers[key];
  };
  return { call, seen };
}

test("runtime: search asks memory_search for the agent and returns cards as memory hits", async () => {
  const { call, seen } = fakeCall({ "status --json": STATUS, "hook tool memory_search": { details: { nodes: [NODE] } } });
  const { manager } = await memoryRuntime(cfg, call, log).getMemorySearchManager({ agentId: "ops" });
  const hits = await manager.search("package manager", { maxResults: 4 });
  assert.deepEqual(seen[1], { args: ["hook", "tool", "memory_search"],
    payload: { agentId: "ops", params: { query: "package manager", maxResults: 4 } } });
  assert.deepEqual(hits, [hitOf(NODE)]);
  assert.equal(hits[0].path, "alaya:card-1");
  assert.equal(hits[0].source, "memory");
  assert.match(hits[0].snippet, /Uses pnpm/);
  assert.deepEqual(await manager.search("x", { minScore: 0.9 }), []);
});

test("runtime: status describes alaya's store, synchronously, as the host expects", async () => {
  const { call } = fakeCall({ "status --json": STATUS });
  const { manager } = await memoryRuntime(cfg, call, log).getMemorySearchManager({ agentId: "main" });
  const st = manager.status();
  assert.equal(st.provider, "alaya");
  assert.equal(st.chunks, 3);
  assert.equal(st.files, 2);
  assert.equal(st.dirty, true);
  assert.equal(st.custom.engine, "alaya");
  assert.deepEqual(await manager.probeEmbeddingAvailability(), { ok: true });
});

test("runtime: a failing alaya is reported in status, never thrown from the manager", async () => {
  const { call } = fakeCall({});
  const { manager } = await memoryRuntime(cfg, call, log).getMemorySearchManager({ agentId: "main" });
  assert.equal(manager.status().lastSyncError, "boom");
  assert.equal(await manager.probeVectorAvailability(), false);
});

test("runtime: readFile resolves a card path with memory_get", async () => {
  const { call, seen } = fakeCall({ "status --json": STATUS, "hook tool memory_get": { text: "card text" } });
  const { manager } = await memoryRuntime(cfg, call, log).getMemorySearchManager({ agentId: "main" });
  assert.deepEqual(await manager.readFile({ relPath: "alaya:card-1" }), { status: "ok", text: "card text", path: "alaya:card-1" });
  assert.deepEqual(seen[1].payload.params, { ids: ["card-1"] });
});

function fakeProgram() {
  const roots = [];
  const mk = (name) => {
    const cmd = { name, subs: [], command(n) { const c = mk(n); this.subs.push(c); return c; } };
    for (const m of ["description", "option", "argument"]) cmd[m] = function () { return this; };
    cmd.action = function (fn) { this.run = fn; return this; };
    return cmd;
  };
  return { roots, command(n) { const c = mk(n); roots.push(c); return c; } };
}

function registered(config) {
  const regs = [];
  registerCli({ config, registerCli: (fn, opts) => regs.push({ fn, opts }) }, cfg, fakeCall({}).call, log);
  return regs.map((r) => r.opts.descriptors[0].name);
}

test("cli: `openclaw alaya` always; `openclaw memory` only where memory-core is disabled", () => {
  assert.deepEqual(registered({}), ["alaya"]);
  assert.deepEqual(registered({ plugins: { entries: { "memory-core": { enabled: true } } } }), ["alaya"]);
  assert.deepEqual(registered({ plugins: { entries: { "memory-core": { enabled: false } } } }), ["alaya", "memory"]);
  assert.equal(memoryCommandFree(undefined), false);
});

test("cli: search prints the runtime's hits", async () => {
  const regs = [];
  const { call } = fakeCall({ "status --json": STATUS, "hook tool memory_search": { details: { nodes: [NODE] } } });
  registerCli({ config: {}, registerCli: (fn, opts) => regs.push({ fn, opts }) }, cfg, call, log);
  const program = fakeProgram();
  regs[0].fn({ program });
  const search = program.roots[0].subs.find((c) => c.name === "search");
  const out = [];
  const orig = process.stdout.write;
  process.stdout.write = (s) => out.push(s);
  try {
    await search.run("pnpm", { agent: "main" });
  } finally {
    process.stdout.write = orig;
  }
  assert.equal(out[0], `${renderHits([hitOf(NODE)])}\n`);
  assert.match(out[0], /0\.830 alaya:card-1\nUses pnpm/);
});
