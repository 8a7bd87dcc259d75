import { test, beforeEach, after } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

import plugin from "../index.js";
import { _resetState } from "../lib/state.js";
import { isFirstTurn, sanitizeMessages } from "../lib/messages.js";
import { resolveConfig, splitCommand, alayaArgv } from "../lib/config.js";
import { TOOL_NAMES } from "../lib/tools.js";
import { TURN_BLOCKS_KEPT } from "../lib/inject.js";

const here = dirname(fileURLToPath(import.meta.url));
const FAKE = join(here, "fixtures", "fake-alaya.sh");

const tmpDirs = [];
function tmp() {
  const dir = mkdtempSync(join(tmpdir(), "alaya-plugin-test-"));
  tmpDirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of tmpDirs) rmSync(dir, { recursive: true, force: true });
});
// The default data directory (no dataDir in the config): none, so that no test talks to a
// daemon of the user's ~/.alaya.
process.env.ALAYA_HOME = join(tmp(), "none");

/** Calls recorded by the fake alaya, oldest first: [{argv: [...], stdin: {...}}]. */
function calls(logdir) {
  return readdirSync(logdir)
    .filter((f) => f.endsWith(".argv"))
    .sort()
    .map((f) => {
      const base = f.slice(0, -".argv".length);
      const argv = readFileSync(join(logdir, f), "utf8").split("\n").filter(Boolean);
      const raw = readFileSync(join(logdir, `${base}.stdin`), "utf8");
      return { argv, stdin: raw ? JSON.parse(raw) : null };
    });
}

/** A fake OpenClaw api. The daemon is off unless a test turns it on: its register-time
 * `serve start` would otherwise show up among every test's recorded calls. */
function fakeApi({ config, runtime, registrationMode = "full" } = {}) {
  const hooks = new Map();
  const hookOptions = new Map();
  const tools = [];
  const services = [];
  const capabilities = [];
  const logs = [];
  const logger = {
    debug: (m) => logs.push(["debug", m]),
    info: (m) => logs.push(["info", m]),
    warn: (m) => logs.push(["warn", m]),
    error: (m) => logs.push(["error", m]),
  };
  const api = {
    id: "openclaw-alaya",
    registrationMode,
    pluginConfig: { daemon: false, ...config },
    logger,
    runtime,
    on(name, handler, opts) {
      if (!hooks.has(name)) hooks.set(name, []);
      hooks.get(name).push(handler);
      hookOptions.set(name, opts);
    },
    registerTool(factory, opts) {
      tools.push({ factory, opts });
    },
    registerService(service) {
      services.push(service);
    },
    registerMemoryCapability(capability) {
      capabilities.push(capability);
    },
  };
  return { api, hooks, hookOptions, tools, services, capabilities, logs };
}

/** Fire a hook like OpenClaw does: every registered handler, results collected. */
async function fire(hooks, name, event, ctx) {
  const handlers = hooks.get(name) ?? [];
  return Promise.all(handlers.map((h) => h(event, ctx)));
}

const CTX = {
  runId: "run-1",
  agentId: "main",
  sessionKey: "agent:main:explicit:t1",
  sessionId: "t1",
  workspaceDir: "/ws",
  trigger: "user",
};
const warnings = (logs) => logs.filter(([l]) => l === "warn" || l === "error").map(([, m]) => m);

beforeEach(() => _resetState());

test("isFirstTurn: no earlier user/assistant message", () => {
  assert.equal(isFirstTurn([]), true);
  assert.equal(isFirstTurn([{ role: "system", content: "x" }]), true);
  assert.equal(isFirstTurn([{ role: "user", content: "hi" }]), false);
  assert.equal(isFirstTurn([{ role: "assistant", content: [{ type: "text", text: "yo" }] }]), false);
  assert.equal(isFirstTurn(undefined), undefined);
});

test("first turn: runs session-start with the event on stdin and returns prependContext", async () => {
  const logdir = tmp();
  const { api, hooks, logs } = fakeApi({
    config: { command: ["bash", FAKE, "ok", logdir], dataDir: "/data/alaya", budgetTokens: 900 },
  });
  plugin.register(api);
  const [res] = await fire(hooks, "before_prompt_build", { prompt: "hello plugin", messages: [] }, CTX);
  assert.deepEqual(res, { prependContext: "MEMORY-BLOCK" });
  const [call] = calls(logdir);
  assert.deepEqual(call.argv, ["--data-dir", "/data/alaya", "hook", "session-start", "--budget", "900"]);
  assert.deepEqual(call.stdin, {
    agentId: "main",
    sessionKey: "agent:main:explicit:t1",
    sessionId: "t1",
    prompt: "hello plugin",
    messages: [],
    workspaceDir: "/ws",
  });
  assert.deepEqual(warnings(logs), []);
});

test("later turn with the first turn's block still in the history: nothing is run", async () => {
  const logdir = tmp();
  const { api, hooks } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir] } });
  plugin.register(api);
  const history = [
    { role: "user", content: [{ type: "text", text: '<alaya-memory untrusted="true">\nold\n</alaya-memory>\n\nearlier' }] },
    { role: "assistant", content: [{ type: "text", text: "reply" }] },
  ];
  const [res] = await fire(hooks, "before_prompt_build", { prompt: "again", messages: history }, CTX);
  assert.equal(res, undefined);
  assert.equal(calls(logdir).length, 0);
});

test("empty {} from session-start: no injection", async () => {
  const logdir = tmp();
  const { api, hooks, logs } = fakeApi({ config: { command: ["bash", FAKE, "empty", logdir] } });
  plugin.register(api);
  const [res] = await fire(hooks, "before_prompt_build", { prompt: "p", messages: [] }, CTX);
  assert.equal(res, undefined);
  assert.deepEqual(warnings(logs), []);
});

test("capture: agent_end pipes {agentId, sessionKey, sessionId, reason, messages} to session-end", async () => {
  const logdir = tmp();
  const { api, hooks, logs } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir] } });
  plugin.register(api);
  const messages = [
    { role: "user", content: "remember: metric units", timestamp: 1 },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Noted." },
        { type: "image", mimeType: "image/png", data: "AAAA".repeat(1000) },
      ],
      timestamp: 2,
    },
  ];
  await fire(hooks, "agent_end", { messages, success: true, durationMs: 5 }, CTX);
  const [call] = calls(logdir);
  assert.deepEqual(call.argv, ["hook", "session-end"]);
  assert.equal(call.stdin.agentId, "main");
  assert.equal(call.stdin.sessionKey, "agent:main:explicit:t1");
  assert.equal(call.stdin.sessionId, "t1");
  assert.equal(call.stdin.reason, "agent_end");
  assert.equal(call.stdin.messages.length, 2);
  assert.equal(call.stdin.messages[0].content, "remember: metric units");
  assert.deepEqual(call.stdin.messages[1].content[1], { type: "image", mimeType: "image/png", omitted: true });
  assert.deepEqual(warnings(logs), []);
});

test("capture: before_reset then session_end run in order; session_end is sent without messages", async () => {
  const logdir = tmp();
  const { api, hooks } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir] } });
  plugin.register(api);
  const sctx = { agentId: "main", sessionKey: "agent:main:gw1", sessionId: "s1" };
  const msgs = [{ role: "user", content: "hi", timestamp: 1 }];
  const p1 = fire(hooks, "before_reset", { reason: "new", messages: msgs, sessionFile: "sqlite:x" }, sctx);
  const p2 = fire(hooks, "session_end", { sessionId: "s1", messageCount: 0, reason: "new" }, sctx);
  await Promise.all([p1, p2]);
  const [a, b] = calls(logdir);
  assert.equal(a.stdin.reason, "new");
  assert.equal(a.stdin.messages.length, 1);
  assert.equal(b.stdin.reason, "new");
  assert.deepEqual(b.stdin.messages, []);
});

test("capture: before_compaction without messages is skipped; captureOn limits hooks", async () => {
  const logdir = tmp();
  const { api, hooks } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], captureOn: ["before_reset", "before_compaction"] } });
  plugin.register(api);
  // subagent_spawned: an observer for capture's provenance (a child's parent), not a capture
  assert.deepEqual([...hooks.keys()].sort(), ["after_compaction", "before_compaction", "before_prompt_build", "before_reset", "subagent_spawned"]);
  await fire(hooks, "before_compaction", { messageCount: 10 }, CTX);
  assert.equal(calls(logdir).length, 0);
});

test("injectEnabled/captureEnabled false register no hooks", () => {
  const { api, hooks } = fakeApi({ config: { injectEnabled: false, captureEnabled: false } });
  plugin.register(api);
  assert.equal(hooks.size, 0);
});

test("command missing: the turn goes on and a warning is logged", async () => {
  const { api, hooks, logs } = fakeApi({ config: { command: ["/nonexistent/alaya-xyz"] } });
  plugin.register(api);
  const [res] = await fire(hooks, "before_prompt_build", { prompt: "p", messages: [] }, CTX);
  assert.equal(res, undefined);
  const [endRes] = await fire(hooks, "agent_end", { messages: [{ role: "user", content: "x" }] }, CTX);
  assert.equal(endRes, undefined);
  const w = warnings(logs);
  assert.equal(w.length, 2);
  assert.match(w[0], /command not found: \/nonexistent\/alaya-xyz/);
  assert.match(w[1], /agent_end t1: capture failed: command not found/);
});

test("non-zero exit: warning carries the CLI's one-line message", async () => {
  const logdir = tmp();
  const { api, hooks, logs } = fakeApi({ config: { command: ["bash", FAKE, "fail", logdir] } });
  plugin.register(api);
  const [res] = await fire(hooks, "before_prompt_build", { prompt: "p", messages: [] }, CTX);
  assert.equal(res, undefined);
  assert.match(warnings(logs)[0], /exited with code 1: alaya: error: data directory is locked/);
});

test("bad JSON on stdout: the turn goes on", async () => {
  const logdir = tmp();
  const { api, hooks, logs } = fakeApi({ config: { command: ["bash", FAKE, "badjson", logdir] } });
  plugin.register(api);
  const [res] = await fire(hooks, "before_prompt_build", { prompt: "p", messages: [] }, CTX);
  assert.equal(res, undefined);
  assert.match(warnings(logs)[0], /not a JSON object/);
});

function alive(pid) {
  try {
    // A killed, orphaned child can linger as a zombie until init reaps it: that counts as dead.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    /* no /proc (or the process is gone) */
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test("timeout: the command (and its children) are killed and the turn goes on", async () => {
  const logdir = tmp();
  const { api, hooks, logs } = fakeApi({ config: { command: ["bash", FAKE, "sleep", logdir], startTimeoutMs: 400 } });
  plugin.register(api);
  const t0 = Date.now();
  const [res] = await fire(hooks, "before_prompt_build", { prompt: "p", messages: [] }, CTX);
  const elapsed = Date.now() - t0;
  assert.equal(res, undefined);
  assert.ok(elapsed < 3000, `returned after ${elapsed} ms`);
  assert.match(warnings(logs)[0], /timed out after 400 ms/);
  const pids = readFileSync(join(logdir, "sleep.pids"), "utf8").trim().split(/\s+/).map(Number);
  await new Promise((r) => setTimeout(r, 200));
  for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} still alive`);
});

test("register twice with the same api: hooks registered once", async () => {
  const logdir = tmp();
  const { api, hooks } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir] } });
  plugin.register(api);
  plugin.register(api);
  for (const [name, hs] of hooks) assert.equal(hs.length, 1, name);
  await fire(hooks, "before_prompt_build", { prompt: "p", messages: [] }, CTX);
  assert.equal(calls(logdir).length, 1);
});

test("several registrations (full + discovery) receiving one event: alaya runs once, injected once", async () => {
  const logdir = tmp();
  const config = { command: ["bash", FAKE, "ok", logdir] };
  const shared = new Map();
  for (const mode of ["full", "discovery", "discovery"]) {
    const { api } = fakeApi({ config, registrationMode: mode });
    api.on = (name, handler) => {
      if (!shared.has(name)) shared.set(name, []);
      shared.get(name).push(handler);
    };
    plugin.register(api);
  }
  assert.equal(shared.get("before_prompt_build").length, 3);
  const results = await fire(shared, "before_prompt_build", { prompt: "p", messages: [] }, CTX);
  assert.deepEqual(results.filter(Boolean), [{ prependContext: "MEMORY-BLOCK" }]);
  await fire(shared, "agent_end", { messages: [{ role: "user", content: "x", timestamp: 3 }] }, CTX);
  const c = calls(logdir);
  assert.equal(c.filter((x) => x.argv.includes("session-start")).length, 1);
  assert.equal(c.filter((x) => x.argv.includes("session-end")).length, 1);
  // A later turn (new runId, longer history) is captured again.
  await fire(shared, "agent_end", {
    messages: [{ role: "user", content: "x", timestamp: 3 }, { role: "assistant", content: "y", timestamp: 4 }],
  }, { ...CTX, runId: "run-2" });
  assert.equal(calls(logdir).filter((x) => x.argv.includes("session-end")).length, 2);
});

test("runtime runner: runCommandWithTimeout(argv, {timeoutMs, input}) is used, stdin passed as input", async () => {
  const seen = [];
  const runtime = {
    system: {
      async runCommandWithTimeout(argv, opts) {
        seen.push({ argv, opts });
        return { pid: 1, code: 0, signal: null, killed: false, termination: "exit", stdout: '{"prependContext":"RT"}\n', stderr: "" };
      },
    },
  };
  const { api, hooks, logs } = fakeApi({ config: { command: "uv run 'alaya'" }, runtime });
  plugin.register(api);
  const [res] = await fire(hooks, "before_prompt_build", { prompt: "q", messages: [] }, CTX);
  assert.deepEqual(res, { prependContext: "RT" });
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0].argv, ["uv", "run", "alaya", "hook", "session-start", "--budget", "1200"]);
  assert.ok(seen[0].opts.timeoutMs > 0 && seen[0].opts.timeoutMs <= 10000); // what is left of the call's budget
  assert.equal(typeof seen[0].opts.input, "string");
  assert.equal(JSON.parse(seen[0].opts.input).prompt, "q");
  assert.deepEqual(warnings(logs), []);
});

test("capture (issue 33): a cold capture is a child of the plugin's own, never the host's runner, which cleanup may cut", async () => {
  const logdir = tmp();
  const seen = [];
  const runtime = { system: { async runCommandWithTimeout(argv) { seen.push(argv); return { code: 0, stdout: "{}", stderr: "" }; } } };
  const { api, hooks, logs } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir] }, runtime });
  plugin.register(api);
  await fire(hooks, "agent_end", { messages: [{ role: "user", content: "q" }] }, CTX);
  assert.deepEqual(seen, []);
  assert.equal(JSON.parse(JSON.stringify(calls(logdir)[0].stdin)).reason, "agent_end");
  assert.deepEqual(warnings(logs), []);
});

test("runtime runner: timeout result, rejection and a hung runner all let the turn go on", async () => {
  let mode = "timeout";
  const runtime = {
    system: {
      runCommandWithTimeout(argv, opts) {
        if (mode === "timeout") {
          return Promise.resolve({ code: 124, signal: "SIGKILL", killed: true, termination: "timeout", stdout: "", stderr: "" });
        }
        if (mode === "reject") return Promise.reject(Object.assign(new Error("spawn alaya ENOENT"), { code: "ENOENT" }));
        return new Promise(() => {}); // never settles
      },
    },
  };
  const { api, hooks, logs } = fakeApi({ config: { startTimeoutMs: 100 }, runtime });
  plugin.register(api);
  const ev = (p) => ({ prompt: p, messages: [] });
  assert.equal((await fire(hooks, "before_prompt_build", ev("a"), CTX))[0], undefined);
  mode = "reject";
  assert.equal((await fire(hooks, "before_prompt_build", ev("b"), CTX))[0], undefined);
  mode = "hang";
  const t0 = Date.now();
  assert.equal((await fire(hooks, "before_prompt_build", ev("c"), CTX))[0], undefined);
  assert.ok(Date.now() - t0 < 4000);
  const w = warnings(logs);
  assert.match(w[0], /timed out after 100 ms/);
  assert.match(w[1], /command not found: alaya/);
  assert.match(w[2], /timed out/);
});

test("config: defaults, string commands, invalid values fall back", () => {
  const d = resolveConfig(undefined);
  assert.deepEqual([...d.command], ["alaya"]);
  assert.equal(d.startTimeoutMs, 10000);
  assert.equal(d.captureTimeoutMs, 60000);
  assert.equal(d.captureWaitMs, 3000);
  assert.equal(d.toolTimeoutMs, 10000);
  assert.equal(d.refreshEveryTurns, 10);
  assert.equal(d.daemon, true);
  assert.equal(resolveConfig({ refreshEveryTurns: 0 }).refreshEveryTurns, 0);
  assert.equal(d.budgetTokens, 1200);
  assert.equal(d.injectEnabled, true);
  assert.equal(d.captureEnabled, true);
  assert.deepEqual(splitCommand(`/opt/my tools/alaya`), ["/opt/my", "tools/alaya"]);
  assert.deepEqual(splitCommand(`"/opt/my tools/alaya" --x`), ["/opt/my tools/alaya", "--x"]);
  const w = [];
  const bad = resolveConfig({ command: [], startTimeoutMs: -5, budgetTokens: "many" }, (m) => w.push(m));
  assert.deepEqual([...bad.command], ["alaya"]);
  assert.equal(bad.startTimeoutMs, 10000);
  assert.equal(bad.budgetTokens, 1200);
  assert.equal(w.length, 3);
  assert.deepEqual(alayaArgv(resolveConfig({ dataDir: "/d" }), ["status"]), ["alaya", "--data-dir", "/d", "status"]);
  assert.deepEqual(sanitizeMessages(null), []);
});

test("manifest and package.json agree with the code", () => {
  const manifest = JSON.parse(readFileSync(join(here, "..", "openclaw.plugin.json"), "utf8"));
  const pkg = JSON.parse(readFileSync(join(here, "..", "package.json"), "utf8"));
  assert.equal(manifest.id, plugin.id);
  assert.equal(manifest.kind, "memory");
  assert.equal(pkg.type, "module");
  assert.deepEqual(pkg.openclaw.extensions, ["./index.js"]);
  assert.match(pkg.openclaw.compat.pluginApi, /^>=2026\.9\.6$/);
  assert.ok(pkg.files.includes("skills/"), "package.json files must ship the skill");
  assert.equal(manifest.activation.onStartup, true);
  assert.deepEqual(manifest.skills, ["skills"]);
  assert.ok(readFileSync(join(here, "..", "skills", "alaya", "SKILL.md"), "utf8").startsWith("---\nname: alaya\n"));
  const props = manifest.configSchema.properties;
  const d = resolveConfig({});
  assert.deepEqual(Object.keys(props).sort(), Object.keys(d).sort(), "configSchema keys = resolved config keys");
  for (const k of Object.keys(props)) {
    const hint = manifest.uiHints[k];
    assert.ok(hint?.label && hint?.help, `uiHints.${k} needs a label and help`);
  }
  assert.deepEqual(Object.keys(manifest.uiHints).sort(), Object.keys(props).sort());
  assert.deepEqual(props.command.default, [...d.command]);
  for (const k of ["startTimeoutMs", "captureTimeoutMs", "captureWaitMs", "toolTimeoutMs", "budgetTokens", "refreshEveryTurns", "daemon"]) {
    assert.equal(props[k].default, d[k], `configSchema ${k} default`);
  }
  assert.equal(manifest.configSchema.additionalProperties, false);
  // contracts.tools must equal what register() registers (OpenClaw rejects a mismatch).
  const { api, tools } = fakeApi();
  plugin.register(api);
  assert.deepEqual(tools.map((t) => t.opts.name), manifest.contracts.tools);
  assert.deepEqual(manifest.contracts.tools, [...TOOL_NAMES]);
});

// ----------------------------------------------------------------------------- agent tools

/** The concrete tool a run gets: OpenClaw calls the registered factory with the tool context. */
function toolFrom(tools, name, ctx = CTX) {
  const entry = tools.find((t) => t.opts.name === name);
  assert.ok(entry, `tool ${name} registered`);
  return entry.factory(ctx);
}

test("tools: each runs `alaya hook tool NAME` with {agentId, sessionKey, sessionId, params}; search and get are direct-only", async () => {
  const logdir = tmp();
  const { api, tools, logs } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], dataDir: "/d" } });
  plugin.register(api);
  const cases = {
    memory_search: [{ query: "deploy", concepts: ["arm64"], relations: ["CAUSED_BY"], depth: 2, from_nodes: ["c1"], budget: 800, maxResults: 5, since: "7d", until: "last week", corpus: "all", minScore: 0.2 },
      { query: "deploy", concepts: ["arm64"], relations: ["CAUSED_BY"], depth: 2, from_nodes: ["c1"], budget: 800, maxResults: 5, since: "7d", until: "last week" }],
    memory_get: [{ path: "sess#3", from: 1 }, { path: "sess#3" }],
    memory_store: [{ text: "metric units", type: "preference", tags: ["units"], subjects: ["user"], importance: 0.8 },
      { text: "metric units", type: "preference", tags: ["units"], subjects: ["user"], importance: 0.8 }],
    memory_forget: [{ query: "units" }, { query: "units" }],
  };
  for (const [name, [sent, forwarded]] of Object.entries(cases)) {
    const tool = toolFrom(tools, name);
    assert.equal(tool.name, name);
    assert.equal(tool.parameters.type, "object");
    assert.equal(tool.catalogMode, name === "memory_search" || name === "memory_get" ? "direct-only" : undefined);
    const res = await tool.execute("call-1", sent);
    assert.deepEqual(res, { content: [{ type: "text", text: `TEXT ${name}` }], details: { tool: name } });
    const last = calls(logdir).pop();
    assert.deepEqual(last.argv, ["--data-dir", "/d", "hook", "tool", name]);
    assert.deepEqual(last.stdin, { agentId: "main", sessionKey: "agent:main:explicit:t1", sessionId: "t1", params: forwarded });
  }
  assert.deepEqual(toolFrom(tools, "memory_store").parameters.required, ["text"]);
  assert.equal(toolFrom(tools, "memory_search").parameters.required, undefined, "a plain search needs only query");
  assert.deepEqual(warnings(logs), []);
});

test("tools: output without text is shown as JSON; a failing CLI's one-line error is the rejected message", async () => {
  const { api, tools, logs } = fakeApi({ config: { command: ["bash", FAKE, "empty", tmp()] } });
  plugin.register(api);
  assert.deepEqual(await toolFrom(tools, "memory_get").execute("c", { ids: ["x"] }), { content: [{ type: "text", text: "{}" }], details: {} });

  const failing = fakeApi({ config: { command: ["bash", FAKE, "fail", tmp()] } });
  plugin.register(failing.api);
  // Rejecting is OpenClaw's failure path for a tool: the agent loop turns it into an isError
  // result with this text. It must be the CLI's own line, not a stack or a wrapper's words.
  await assert.rejects(toolFrom(failing.tools, "memory_search").execute("c", { query: "q" }), {
    message: "alaya: error: data directory is locked",
  });
  assert.match(warnings(failing.logs)[0], /memory_search failed: bash exited with code 1/);

  const missing = fakeApi({ config: { command: ["/nonexistent/alaya-xyz"], toolTimeoutMs: 300 } });
  plugin.register(missing.api);
  await assert.rejects(toolFrom(missing.tools, "memory_forget").execute("c", { ids: ["a"] }), /command not found/);
  const slow = fakeApi({ config: { command: ["bash", FAKE, "sleep", tmp()], toolTimeoutMs: 300 } });
  plugin.register(slow.api);
  await assert.rejects(toolFrom(slow.tools, "memory_store").execute("c", { text: "x" }), /timed out after 300 ms/);
  assert.deepEqual(warnings(logs), []);
});

test("tools: a factory call without a context still builds the tool", async () => {
  const logdir = tmp();
  const { api, tools } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir] } });
  plugin.register(api);
  await tools.find((t) => t.opts.name === "memory_search").factory(undefined).execute("c", { query: "q" });
  assert.deepEqual(calls(logdir)[0].stdin, { params: { query: "q" } });
});

// ---------------------------------------------------------------- memory capability, hook budget

test("registerMemoryCapability: a prompt section naming only the tools the run has, and alaya's search runtime", () => {
  const { api, capabilities, hookOptions } = fakeApi();
  plugin.register(api);
  assert.equal(capabilities.length, 1);
  const [cap] = capabilities;
  assert.equal(typeof cap.runtime.getMemorySearchManager, "function");
  assert.deepEqual(cap.promptBuilder({ availableTools: new Set(["exec"]) }), []);
  const lines = cap.promptBuilder({ availableTools: new Set(["memory_search", "memory_get"]) }).join("\n");
  assert.match(lines, /## Memory Recall/);
  assert.match(lines, /memory_search/);
  assert.match(lines, /memory_get/);
  assert.doesNotMatch(lines, /memory_store|memory_forget/);
  // OpenClaw's handler budget covers our own timeouts (a refresh, then a turn recall) plus the runner's slack.
  assert.equal(hookOptions.get("before_prompt_build").timeoutMs, 14000);
});

// --------------------------------------------------------------------------------- the daemon

async function waitFor(predicate, ms = 5000) {
  const t0 = Date.now();
  while (!predicate()) {
    if (Date.now() - t0 > ms) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}

test("daemon: the service starts `alaya serve start`; its stop leaves the daemon to distil what was captured (issue 33)", async () => {
  const logdir = tmp();
  const { api, services } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], dataDir: "/d", daemon: true }, registrationMode: "discovery" });
  plugin.register(api);
  assert.equal(services.length, 1);
  const [svc] = services;
  assert.equal(svc.id, "openclaw-alaya-daemon");
  assert.equal(calls(logdir).length, 0, "discovery mode starts nothing");
  assert.equal(svc.start({}), undefined, "start does not make the Gateway wait");
  assert.ok(await waitFor(() => calls(logdir).length === 1));
  assert.deepEqual(calls(logdir)[0].argv, ["--data-dir", "/d", "serve", "start"]);
  assert.equal(svc.stop({}), undefined, "stop does not make the Gateway wait");
  assert.deepEqual(calls(logdir).map((c) => c.argv.slice(-2)), [["serve", "start"]]);
  svc.start({}); // started again after a stop (a Gateway restart in the same process)
  assert.ok(await waitFor(() => calls(logdir).length === 2));
});

test("daemon: register in full mode starts it once per process; discovery and daemon:false never", async () => {
  const logdir = tmp();
  const config = { command: ["bash", FAKE, "ok", logdir], daemon: true };
  for (const mode of ["discovery", "tool-discovery", "cli-metadata"]) plugin.register(fakeApi({ config, registrationMode: mode }).api);
  const off = fakeApi({ config: { ...config, daemon: false } });
  plugin.register(off.api);
  assert.equal(off.services.length, 0);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(calls(logdir).length, 0);
  const full = fakeApi({ config });
  plugin.register(full.api);
  plugin.register(fakeApi({ config }).api); // a second full registration in the same process
  full.services[0].start({}); // and the Gateway's service start
  assert.ok(await waitFor(() => calls(logdir).length >= 1));
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(calls(logdir).map((c) => c.argv), [["serve", "start"]]);
});

test("daemon: a failing start is a warning, never a throw", async () => {
  const { api, logs } = fakeApi({ config: { command: ["/nonexistent/alaya-xyz"], daemon: true } });
  assert.doesNotThrow(() => plugin.register(api));
  assert.ok(await waitFor(() => warnings(logs).length === 1));
  assert.match(warnings(logs)[0], /alaya daemon not started: command not found/);
});

// ------------------------------------------------------------------ re-injection after compaction

const COMPACTED = [
  { role: "user", content: "summary of the earlier conversation" },
  { role: "assistant", content: [{ type: "text", text: "ok" }] },
];
const turn = (n, messages = COMPACTED) => [{ prompt: `turn ${n}`, messages }, { ...CTX, runId: `run-${n}` }];

test("after compaction: session-start runs again; the block comes back as system context, cached", async () => {
  const logdir = tmp();
  const { api, hooks } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir] } });
  plugin.register(api);
  const [r1] = await fire(hooks, "before_prompt_build", ...turn(1));
  assert.deepEqual(r1, { appendSystemContext: "MEMORY-BLOCK" });
  const [call] = calls(logdir);
  assert.deepEqual(call.argv, ["hook", "session-start", "--budget", "1200"]);
  assert.equal(call.stdin.prompt, "turn 1");
  assert.equal(call.stdin.messages.length, 2);
  for (const n of [2, 3, 4]) {
    const [r] = await fire(hooks, "before_prompt_build", ...turn(n));
    assert.deepEqual(r, { appendSystemContext: "MEMORY-BLOCK" });
  }
  assert.equal(calls(logdir).length, 1, "cached turns run nothing");
});

test("after compaction: refreshed every refreshEveryTurns turns, replaced only when the text changed", async () => {
  const logdir = tmp();
  const { api, hooks } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], refreshEveryTurns: 2 } });
  plugin.register(api);
  const results = [];
  const fireTurn = async (n) => results.push((await fire(hooks, "before_prompt_build", ...turn(n)))[0]?.appendSystemContext);
  await fireTurn(1); // fetched
  await fireTurn(2); // cached
  await fireTurn(3); // refreshed: same text
  writeFileSync(join(logdir, "block"), "NEW-BLOCK");
  await fireTurn(4); // cached
  await fireTurn(5); // refreshed: changed
  await fireTurn(6); // cached
  assert.deepEqual(results, ["MEMORY-BLOCK", "MEMORY-BLOCK", "MEMORY-BLOCK", "MEMORY-BLOCK", "NEW-BLOCK", "NEW-BLOCK"]);
  assert.equal(calls(logdir).length, 3);
});

test("after compaction: refreshEveryTurns 0 never refreshes; a failed refresh keeps the block", async () => {
  const logdir = tmp();
  const never = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], refreshEveryTurns: 0 } });
  plugin.register(never.api);
  for (const n of [1, 2, 3, 4, 5]) await fire(never.hooks, "before_prompt_build", ...turn(n));
  assert.equal(calls(logdir).length, 1);

  _resetState();
  const flaky = tmp();
  const { api, hooks, logs } = fakeApi({ config: { command: ["bash", FAKE, "ok", flaky], refreshEveryTurns: 1 } });
  plugin.register(api);
  await fire(hooks, "before_prompt_build", ...turn(1));
  writeFileSync(join(flaky, "block"), 'broken"json'); // the next session-start prints bad JSON
  const [r] = await fire(hooks, "before_prompt_build", ...turn(2));
  assert.deepEqual(r, { appendSystemContext: "MEMORY-BLOCK" });
  assert.match(warnings(logs)[0], /memory refresh skipped/);
});

test("after compaction: a new session under the same key starts over with prependContext", async () => {
  const logdir = tmp();
  const { api, hooks } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir] } });
  plugin.register(api);
  await fire(hooks, "before_prompt_build", ...turn(1));
  writeFileSync(join(logdir, "block"), "FRESH");
  const [first] = await fire(hooks, "before_prompt_build", { prompt: "new", messages: [] }, { ...CTX, runId: "r-new", sessionId: "t2" });
  assert.deepEqual(first, { prependContext: "FRESH" });
  const [later] = await fire(hooks, "before_prompt_build", ...turn(9));
  assert.deepEqual(later, { appendSystemContext: "FRESH" }, "the old session's cached block is gone");
  assert.equal(calls(logdir).length, 2, "the new session's first-turn block is reused");
});

test("second turn with only the plain prompt in the history (OpenClaw 2026.9.6): the first turn's block, as system context, no call", async () => {
  const logdir = tmp();
  const { api, hooks } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir] } });
  plugin.register(api);
  const [first] = await fire(hooks, "before_prompt_build", { prompt: "hello", messages: [] }, CTX);
  assert.deepEqual(first, { prependContext: "MEMORY-BLOCK" });
  const history = [{ role: "user", content: "hello" }, { role: "assistant", content: [{ type: "text", text: "hi" }] }];
  const [second] = await fire(hooks, "before_prompt_build", ...turn(2, history));
  assert.deepEqual(second, { appendSystemContext: "MEMORY-BLOCK" });
  assert.equal(calls(logdir).length, 1);
});

test("after compaction: a failed call injects nothing and the next turn tries again", async () => {
  const logdir = tmp();
  const { api, hooks, logs } = fakeApi({ config: { command: ["bash", FAKE, "fail", logdir] } });
  plugin.register(api);
  assert.equal((await fire(hooks, "before_prompt_build", ...turn(1)))[0], undefined);
  assert.equal((await fire(hooks, "before_prompt_build", ...turn(2)))[0], undefined);
  assert.equal(calls(logdir).length, 2);
  assert.equal(warnings(logs).length, 2);
});

test("after compaction with several registrations: the block is returned once", async () => {
  const logdir = tmp();
  const config = { command: ["bash", FAKE, "ok", logdir] };
  const shared = new Map();
  for (const mode of ["full", "discovery"]) {
    const { api } = fakeApi({ config, registrationMode: mode });
    api.on = (name, handler) => {
      if (!shared.has(name)) shared.set(name, []);
      shared.get(name).push(handler);
    };
    plugin.register(api);
  }
  for (const n of [1, 2]) {
    const results = await fire(shared, "before_prompt_build", ...turn(n));
    assert.deepEqual(results.filter(Boolean), [{ appendSystemContext: "MEMORY-BLOCK" }]);
  }
  assert.equal(calls(logdir).length, 1);
});

// ----------------------------------------------------------------------------- daemon socket

const b64 = (text) => Buffer.from(text, "utf8").toString("base64");
const answered = (stdout, exit = 0, stderr = "") => ({ ok: true, exit, stdout: b64(stdout), stderr: b64(stderr), version: "test" });

/** A fake `alaya serve` on `<fresh 0700 dir>/serve.sock`: each request (stdin decoded) is
 * recorded and answered with `answer(request)`; undefined: accepted, never answered. */
async function fakeDaemon(answer) {
  const dir = tmp();
  const requests = [];
  const open = new Set();
  // allowHalfOpen: the client ends its side after the request, as the Python client does
  const server = createServer({ allowHalfOpen: true }, (conn) => {
    open.add(conn);
    conn.on("close", () => open.delete(conn));
    let text = "";
    conn.on("data", (chunk) => {
      text += chunk;
      if (!text.endsWith("\n")) return;
      const request = JSON.parse(text);
      requests.push({ ...request, stdin: JSON.parse(Buffer.from(request.stdin, "base64").toString("utf8")) });
      const reply = answer(request);
      if (reply) conn.end(JSON.stringify(reply));
    });
  });
  await new Promise((r) => server.listen(join(dir, "serve.sock"), r));
  const close = () => {
    for (const conn of open) conn.destroy();
    return new Promise((r) => server.close(r));
  };
  return { dir, requests, open, close };
}

/** Answers as the real daemon would for the plugin's calls. */
const QUEUED = '{"session_id": "t1", "new_turns": 1, "distilled": false, "distilling": "queued"}\n';
function daemonAnswers(request) {
  const [, , , what, name] = request.argv;
  if (what === "session-end") return answered(QUEUED);
  return answered(what === "session-start" ? '{"prependContext": "FROM-SOCKET"}\n' : `{"text": "SOCKET ${name}"}\n`);
}

test("daemon socket: session-start and the tools are answered over the socket, no `alaya` run", async () => {
  const logdir = tmp();
  const daemon = await fakeDaemon(daemonAnswers);
  try {
    const { api, hooks, tools, logs } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], dataDir: daemon.dir } });
    plugin.register(api);
    const [res] = await fire(hooks, "before_prompt_build", { prompt: "hello socket", messages: [] }, CTX);
    assert.deepEqual(res, { prependContext: "FROM-SOCKET" });
    const store = await toolFrom(tools, "memory_store").execute("c", { text: "metric units" });
    assert.deepEqual(store.content, [{ type: "text", text: "SOCKET memory_store" }]);
    assert.deepEqual(calls(logdir), []);
    const dir = realpathSync(daemon.dir);
    const [start, stored] = daemon.requests;
    assert.deepEqual({ ...start, stdin: undefined }, {
      v: 1, op: "run", tty: false, stdin: undefined,
      argv: ["--data-dir", dir, "hook", "session-start", "--budget", "1200"],
    });
    assert.deepEqual(start.stdin, { agentId: "main", sessionKey: CTX.sessionKey, sessionId: "t1", prompt: "hello socket", messages: [], workspaceDir: "/ws" });
    assert.deepEqual(stored.argv, ["--data-dir", dir, "hook", "tool", "memory_store"]);
    assert.deepEqual(stored.stdin.params, { text: "metric units" });
    // capture too (issue 33): the daemon acknowledges once stored and distils afterwards
    await fire(hooks, "agent_end", { messages: [{ role: "user", content: "x" }] }, CTX);
    assert.deepEqual(calls(logdir), []);
    assert.deepEqual(daemon.requests[2].argv, ["--data-dir", dir, "hook", "session-end"]);
    assert.equal(daemon.requests[2].stdin.reason, "agent_end");
    assert.ok(logs.some(([l, m]) => l === "info" && /agent_end t1: stored 1 new turn, distilling in the background/.test(m)));
    assert.deepEqual(warnings(logs), []);
  } finally {
    await daemon.close();
  }
});

test("capture (issue 33): OpenClaw waits at most captureWaitMs; an acknowledgement that comes later is still taken", async () => {
  const logdir = tmp();
  const daemon = await fakeDaemon(() => undefined);
  const events = [];
  try {
    const { api, hooks, logs } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], dataDir: daemon.dir, captureWaitMs: 50 } });
    plugin.register(api);
    // the daemon holds the request until the hook has let OpenClaw go on
    const handed = fire(hooks, "session_end", { reason: "shutdown" }, CTX).then(() => events.push("hook settled"));
    assert.ok(await waitFor(() => daemon.requests.length === 1));
    await handed;
    assert.deepEqual(events, ["hook settled"]);
    assert.ok(logs.some(([, m]) => /session_end t1: still storing after 50 ms/.test(m)));
    for (const conn of daemon.open) conn.end(JSON.stringify(answered(QUEUED)));
    assert.ok(await waitFor(() => logs.some(([, m]) => /session_end t1: stored 1 new turn, distilling in the background/.test(m))));
    assert.equal(daemon.requests.length, 1);
    assert.deepEqual(calls(logdir), [], "acknowledged by the daemon: no cold `alaya` as well");
    assert.deepEqual(warnings(logs), []);
  } finally {
    await daemon.close();
  }
});

test("daemon socket: a non-zero exit is reported as the CLI's would be, not run again", async () => {
  const logdir = tmp();
  const daemon = await fakeDaemon(() => answered("", 1, "alaya: error: no card card-x\n"));
  try {
    const { api, tools, logs } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], dataDir: daemon.dir } });
    plugin.register(api);
    await assert.rejects(toolFrom(tools, "memory_get").execute("c", { ids: ["card-x"] }), { message: "alaya: error: no card card-x" });
    assert.match(warnings(logs)[0], /memory_get failed: bash exited with code 1: alaya: error: no card card-x/);
    assert.deepEqual(calls(logdir), []);
  } finally {
    await daemon.close();
  }
});

test("daemon socket: not used in a directory others may write, nor with a --data-dir inside command", async () => {
  const daemon = await fakeDaemon(daemonAnswers);
  try {
    const logdir = tmp();
    chmodSync(daemon.dir, 0o770); // anyone of the group could have put this socket there
    const loose = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], dataDir: daemon.dir } });
    plugin.register(loose.api);
    assert.deepEqual((await fire(loose.hooks, "before_prompt_build", { prompt: "p", messages: [] }, CTX))[0], { prependContext: "MEMORY-BLOCK" });
    chmodSync(daemon.dir, 0o750); // closed to writes but open to the group's eyes: not ours alone either (issue 30 class 12)
    const readable = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], dataDir: daemon.dir } });
    plugin.register(readable.api);
    assert.deepEqual((await toolFrom(readable.tools, "memory_search").execute("c", { query: "q" })).content[0].text, "TEXT memory_search");
    chmodSync(daemon.dir, 0o700);
    const elsewhere = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir, "--data-dir=/other"], dataDir: daemon.dir } });
    plugin.register(elsewhere.api);
    assert.deepEqual((await toolFrom(elsewhere.tools, "memory_search").execute("c", { query: "q" })).content[0].text, "TEXT memory_search");
    assert.equal(daemon.requests.length, 0);
    assert.equal(calls(logdir).length, 3);
  } finally {
    await daemon.close();
  }
});

test("daemon socket: no socket, a dead socket and an ok:false answer fall back to `alaya`", async () => {
  const logdir = tmp();
  const dead = tmp(); // a socket nobody listens on: what a killed daemon leaves (ECONNREFUSED)
  const script = "require('net').createServer().listen(process.argv[1], () => process.exit(0))";
  assert.equal(spawnSync(process.execPath, ["-e", script, join(dead, "serve.sock")]).status, 0);
  const stale = await fakeDaemon(() => ({ ok: false, stale: true, error: "daemon's code changed on disk: exiting", version: "0.0.1" }));
  try {
    for (const dataDir of [tmp(), dead, stale.dir]) {
      const { api, hooks, tools, logs } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], dataDir } });
      plugin.register(api);
      _resetState(); // the next fire is a first turn again
      assert.deepEqual((await fire(hooks, "before_prompt_build", { prompt: "p", messages: [] }, CTX))[0], { prependContext: "MEMORY-BLOCK" });
      // a write the daemon refused never ran: it runs through `alaya`
      assert.equal((await toolFrom(tools, "memory_store").execute("c", { text: "x" })).content[0].text, "TEXT memory_store");
      assert.deepEqual(warnings(logs), []);
    }
    assert.equal(calls(logdir).length, 6);
    assert.equal(stale.requests.length, 2);
  } finally {
    await stale.close();
  }
});

test("daemon socket: a daemon that never answers: a read falls back within its budget, a write is not sent twice", async () => {
  const logdir = tmp();
  const daemon = await fakeDaemon(() => undefined);
  try {
    const { api, hooks, tools, logs } = fakeApi({
      config: { command: ["bash", FAKE, "ok", logdir], dataDir: daemon.dir, startTimeoutMs: 1000, toolTimeoutMs: 300 },
    });
    plugin.register(api);
    assert.deepEqual((await fire(hooks, "before_prompt_build", { prompt: "p", messages: [] }, CTX))[0], { prependContext: "MEMORY-BLOCK" });
    assert.deepEqual(calls(logdir).map((c) => c.argv.slice(2, 4)), [["hook", "session-start"]]);
    await assert.rejects(toolFrom(tools, "memory_store").execute("c", { text: "x" }), /got hook tool memory_store but did not answer within 300 ms; not retried/);
    assert.equal(calls(logdir).length, 1);
    assert.equal(daemon.requests.length, 2);
    assert.equal(warnings(logs).length, 1);
  } finally {
    await daemon.close();
  }
});

// ------------------------------------------------------------------- per-turn recall (issue 32)

const SESSION_BLOCK = '<alaya-memory untrusted="true">\n- [card-s1] (fact) from the session block\n</alaya-memory>';
const turnBlock = (id) => `<alaya-memory untrusted="true" recall="turn">\n- [${id}] (fact) brought back\n</alaya-memory>`;

/** Answers as the daemon would: session-start's block cites card-s1; `hook turn` brings back
 * card-<prompt's last word>, or nothing for a prompt that says "nothing". */
function turnAnswers(request) {
  const what = request.argv[3];
  if (what === "session-start") return answered(`${JSON.stringify({ prependContext: SESSION_BLOCK })}\n`);
  const prompt = JSON.parse(Buffer.from(request.stdin, "base64").toString("utf8")).prompt;
  if (/nothing/.test(prompt)) return answered("{}\n");
  const id = `card-${prompt.split(" ").pop()}`;
  return answered(`${JSON.stringify({ appendSystemContext: turnBlock(id), cards: [id] })}\n`);
}

const HISTORY = [{ role: "user", content: "hello" }, { role: "assistant", content: [{ type: "text", text: "hi" }] }];
const later = (prompt, n) => [{ prompt, messages: HISTORY }, { ...CTX, runId: `run-${n}` }];

test("turn recall: each later message asks the daemon's `hook turn`; only new cards are added, after the session's block, and kept", async () => {
  const logdir = tmp();
  const daemon = await fakeDaemon(turnAnswers);
  try {
    const { api, hooks, logs } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], dataDir: daemon.dir } });
    plugin.register(api);
    const [first] = await fire(hooks, "before_prompt_build", { prompt: "hello", messages: [] }, CTX);
    assert.deepEqual(first, { prependContext: SESSION_BLOCK });
    assert.equal(daemon.requests.length, 1, "the first turn's message is session-start's prompt: no turn recall");
    const [second] = await fire(hooks, "before_prompt_build", ...later("I am overwhelmed at work a", 2));
    assert.deepEqual(second, { appendSystemContext: `${SESSION_BLOCK}\n\n${turnBlock("card-a")}` });
    const asked = daemon.requests[1];
    assert.deepEqual(asked.argv, ["--data-dir", realpathSync(daemon.dir), "hook", "turn"]);
    assert.deepEqual(asked.stdin, { agentId: "main", sessionKey: CTX.sessionKey, sessionId: "t1", prompt: "I am overwhelmed at work a", exclude: ["card-s1"] });
    const [third] = await fire(hooks, "before_prompt_build", ...later("nothing here", 3));
    assert.deepEqual(third, second, "nothing new: the system context stays as it was (the prompt cache holds)");
    assert.deepEqual(daemon.requests[2].stdin.exclude, ["card-s1", "card-a"], "what the session shows is not sent back");
    for (const [n, word] of [[4, "b"], [5, "c"], [6, "d"]]) await fire(hooks, "before_prompt_build", ...later(`more ${word}`, n));
    const [last] = await fire(hooks, "before_prompt_build", ...later("nothing again", 7));
    assert.deepEqual(last, { appendSystemContext: [SESSION_BLOCK, ...["card-b", "card-c", "card-d"].map(turnBlock)].join("\n\n") },
      `the last ${TURN_BLOCKS_KEPT} turn blocks are kept`);
    assert.deepEqual(calls(logdir), [], "no `alaya` process for any of it");
    assert.deepEqual(warnings(logs), []);
  } finally {
    await daemon.close();
  }
});

test("turn recall: with the session's block still in the history, its cards are excluded and the turn block comes alone", async () => {
  const daemon = await fakeDaemon(turnAnswers);
  try {
    const { api, hooks } = fakeApi({ config: { command: ["bash", FAKE, "ok", tmp()], dataDir: daemon.dir } });
    plugin.register(api);
    const history = [{ role: "user", content: [{ type: "text", text: `${SESSION_BLOCK}\n\nhello` }] }, ...HISTORY.slice(1)];
    const [res] = await fire(hooks, "before_prompt_build", { prompt: "tell me x", messages: history }, CTX);
    assert.deepEqual(res, { appendSystemContext: turnBlock("card-x") });
    assert.deepEqual(daemon.requests.map((r) => r.argv[3]), ["turn"]);
    assert.deepEqual(daemon.requests[0].stdin.exclude, ["card-s1"]);
  } finally {
    await daemon.close();
  }
});

test("turn recall: no daemon, or one that does not answer in turnTimeoutMs: no `alaya` run, no warning, the turn goes on", async () => {
  const logdir = tmp();
  const { api, hooks, logs } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir] } });
  plugin.register(api);
  await fire(hooks, "before_prompt_build", { prompt: "hello", messages: [] }, CTX);
  const [res] = await fire(hooks, "before_prompt_build", ...later("a later message", 2));
  assert.deepEqual(res, { appendSystemContext: "MEMORY-BLOCK" }, "the cached block, as before");
  assert.deepEqual(calls(logdir).map((c) => c.argv.slice(0, 2)), [["hook", "session-start"]]);
  assert.deepEqual(warnings(logs), []);
  assert.ok(logs.some(([level, m]) => level === "debug" && /turn recall skipped: no warm alaya daemon/.test(m)));

  _resetState();
  const silent = await fakeDaemon((request) => (request.argv[3] === "turn" ? undefined : turnAnswers(request)));
  try {
    const hung = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], dataDir: silent.dir, turnTimeoutMs: 200 } });
    plugin.register(hung.api);
    await fire(hung.hooks, "before_prompt_build", { prompt: "hello", messages: [] }, CTX);
    const [r] = await fire(hung.hooks, "before_prompt_build", ...later("a later message", 2));
    assert.deepEqual(r, { appendSystemContext: SESSION_BLOCK });
    assert.deepEqual(silent.requests.map((q) => q.argv[3]), ["session-start", "turn"]);
    assert.equal(calls(logdir).length, 1, "never a cold `alaya hook turn`");
    assert.deepEqual(warnings(hung.logs), []);
  } finally {
    await silent.close();
  }
});

test("turn recall: a failing `hook turn` is a warning and keeps the blocks; turnRecall false never asks", async () => {
  const daemon = await fakeDaemon((request) => (request.argv[3] === "turn" ? answered("", 1, "alaya: error: boom\n") : turnAnswers(request)));
  try {
    const { api, hooks, logs } = fakeApi({ config: { command: ["bash", FAKE, "ok", tmp()], dataDir: daemon.dir } });
    plugin.register(api);
    await fire(hooks, "before_prompt_build", { prompt: "hello", messages: [] }, CTX);
    const [res] = await fire(hooks, "before_prompt_build", ...later("a later message", 2));
    assert.deepEqual(res, { appendSystemContext: SESSION_BLOCK });
    assert.match(warnings(logs)[0], /turn recall skipped: .*alaya: error: boom/);

    _resetState();
    const off = fakeApi({ config: { command: ["bash", FAKE, "ok", tmp()], dataDir: daemon.dir, turnRecall: false } });
    plugin.register(off.api);
    await fire(off.hooks, "before_prompt_build", { prompt: "hello", messages: [] }, CTX);
    await fire(off.hooks, "before_prompt_build", ...later("a later message", 2));
    assert.deepEqual(daemon.requests.map((q) => q.argv[3]), ["session-start", "turn", "session-start"]);
  } finally {
    await daemon.close();
  }
});

test("turn recall config: defaults, flags passed to `hook turn`, invalid values fall back", async () => {
  const d = resolveConfig(undefined);
  assert.equal(d.turnRecall, true);
  assert.equal(d.turnTimeoutMs, 1000);
  assert.equal(d.turnBudgetTokens, undefined);
  assert.equal(d.turnMinSimilarity, undefined);
  const w = [];
  const bad = resolveConfig({ turnTimeoutMs: 5, turnMinSimilarity: 3, turnBudgetTokens: "lots", turnMaxCards: -1 }, (m) => w.push(m));
  assert.deepEqual([bad.turnTimeoutMs, bad.turnMinSimilarity, bad.turnBudgetTokens, bad.turnMaxCards], [1000, undefined, undefined, undefined]);
  assert.equal(w.length, 4);
  assert.ok(w.some((m) => /turnMinSimilarity=3 is invalid/.test(m)));
  const daemon = await fakeDaemon(turnAnswers);
  try {
    const config = { dataDir: daemon.dir, turnBudgetTokens: 150, turnMaxCards: 2, turnMinSimilarity: 0.45 };
    const { api, hooks } = fakeApi({ config: { command: ["bash", FAKE, "ok", tmp()], ...config } });
    plugin.register(api);
    await fire(hooks, "before_prompt_build", { prompt: "hello", messages: [] }, CTX);
    await fire(hooks, "before_prompt_build", ...later("a later message", 2));
    assert.deepEqual(daemon.requests[1].argv.slice(2), ["hook", "turn", "--budget", "150", "--max-cards", "2", "--min-similarity", "0.45"]);
  } finally {
    await daemon.close();
  }
});

// ------------------------------------------------------------ a block that is never stale (issue 33)

// Blocks as fake-alaya prints them (LOGDIR/block, JSON-escaped): two cards and a derived line.
const CARDS_BLOCK = '<alaya-memory untrusted=\\"true\\">\\n## Long-term memory\\n- [card-keep] (fact) kept\\n- [card-gone] (fact) the forgotten words\\n- Working on: the forgotten words\\n</alaya-memory>';
const unescaped = (block) => JSON.parse(`"${block}"`);
const BROKEN = 'broken"json'; // the next session-start prints bad JSON: the fetch fails

/** A registered plugin on fake-alaya with the block file's text, past its first turn. */
async function pastFirstTurn(config = {}, block = CARDS_BLOCK) {
  const logdir = tmp();
  writeFileSync(join(logdir, "block"), block);
  const setup = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir], ...config } });
  plugin.register(setup.api);
  await fire(setup.hooks, "before_prompt_build", { prompt: "hello", messages: [] }, CTX);
  const next = async (n) => (await fire(setup.hooks, "before_prompt_build", ...later(`turn ${n}`, n)))[0]?.appendSystemContext;
  return { ...setup, logdir, next, fetches: () => calls(logdir).filter((c) => c.argv.includes("session-start")).length };
}

test("never stale: memory_store and memory_forget have the next turn fetch the block again, taken even when empty", async () => {
  const p = await pastFirstTurn();
  assert.equal(await p.next(2), unescaped(CARDS_BLOCK));
  assert.equal(p.fetches(), 1, "a fresh block is cached");
  await toolFrom(p.tools, "memory_store").execute("c1", { text: "a new fact" });
  writeFileSync(join(p.logdir, "block"), "WITH-THE-NEW-FACT");
  assert.equal(await p.next(3), "WITH-THE-NEW-FACT");
  assert.equal(p.fetches(), 2);
  await toolFrom(p.tools, "memory_forget").execute("c2", { ids: ["card-gone"] });
  writeFileSync(join(p.logdir, "block"), "");
  assert.equal(await p.next(4), undefined, "all it showed is forgotten: nothing, not the old block");
  assert.equal(await p.next(5), undefined);
  assert.equal(p.fetches(), 3, "fresh again: cached");
});

test("never stale: a compaction has the session's next turn fetch the block again; another session's stays cached", async () => {
  const p = await pastFirstTurn();
  await p.next(2);
  writeFileSync(join(p.logdir, "block"), "AFTER-COMPACTION");
  await fire(p.hooks, "after_compaction", { messageCount: 2, compactedCount: 4 }, { ...CTX, sessionKey: "agent:main:other" });
  assert.equal(await p.next(3), unescaped(CARDS_BLOCK), "another session's compaction");
  await fire(p.hooks, "after_compaction", { messageCount: 2, compactedCount: 4 }, { agentId: "main", sessionKey: CTX.sessionKey, sessionId: "t1" });
  assert.equal(await p.next(4), "AFTER-COMPACTION");
  assert.equal(p.fetches(), 2);
});

test("never stale: a change of the store's generation file (the CLI, another gateway) is noticed; no change, no call", async () => {
  const dataDir = tmp();
  const p = await pastFirstTurn({ dataDir });
  await p.next(2);
  assert.equal(p.fetches(), 1);
  mkdirSync(join(dataDir, "state"));
  writeFileSync(join(dataDir, "state", "generation.json"), JSON.stringify({ generation: 1, since: 0, forgotten: [] }));
  writeFileSync(join(p.logdir, "block"), "AFTER-A-CHANGE");
  assert.equal(await p.next(3), "AFTER-A-CHANGE");
  assert.equal(await p.next(4), "AFTER-A-CHANGE");
  assert.equal(p.fetches(), 2);
});

test("last good block: a stale block that cannot be fetched again is re-injected, without a card forgotten since", async () => {
  const dataDir = tmp();
  const p = await pastFirstTurn({ dataDir });
  await toolFrom(p.tools, "memory_store").execute("c1", { text: "a new fact" });
  writeFileSync(join(p.logdir, "block"), BROKEN);
  assert.equal(await p.next(2), unescaped(CARDS_BLOCK), "nothing forgotten: the last good block as it was");
  assert.match(warnings(p.logs).at(-1), /fresh memory not had in time .*: the last good block this turn/);
  mkdirSync(join(dataDir, "state"));
  writeFileSync(join(dataDir, "state", "generation.json"), JSON.stringify({ generation: 2, since: 0, forgotten: [["card-gone", 2]] }));
  const last = await p.next(3);
  assert.equal(last, '<alaya-memory untrusted="true">\n## Long-term memory\n- [card-keep] (fact) kept\n</alaya-memory>');
  assert.doesNotMatch(last, /forgotten words/, "neither the card nor the derived line that may repeat it");
  assert.equal(p.fetches(), 3, "still stale: each turn tries again");
  writeFileSync(join(p.logdir, "block"), "FRESH");
  assert.equal(await p.next(4), "FRESH");
});

test("last good block: nothing when every card in it is forgotten, or when what was forgotten since cannot be known", async () => {
  const p = await pastFirstTurn();
  writeFileSync(join(p.logdir, "block"), BROKEN);
  await toolFrom(p.tools, "memory_forget").execute("c1", { ids: ["card-gone", "card-keep"] });
  assert.equal(await p.next(2), undefined);
  assert.match(warnings(p.logs).at(-1), /no block this turn/);

  _resetState();
  const dataDir = tmp();
  const q = await pastFirstTurn({ dataDir });
  mkdirSync(join(dataDir, "state"));
  // a thousand forgets later the list no longer reaches back to the block's generation (0)
  writeFileSync(join(dataDir, "state", "generation.json"), JSON.stringify({ generation: 1200, since: 200, forgotten: [["card-x", 1200]] }));
  writeFileSync(join(q.logdir, "block"), BROKEN);
  assert.equal(await q.next(2), undefined);
});

test("last good block: a first turn that gets none has the agent's latest block, stale, without forgotten cards", async () => {
  const p = await pastFirstTurn();
  await toolFrom(p.tools, "memory_forget").execute("c1", { ids: ["card-gone"] });
  writeFileSync(join(p.logdir, "block"), BROKEN);
  const [first] = await fire(p.hooks, "before_prompt_build", { prompt: "hi", messages: [] }, { ...CTX, runId: "r2", sessionKey: "agent:main:explicit:t2", sessionId: "t2" });
  assert.deepEqual(first, { prependContext: '<alaya-memory untrusted="true">\n## Long-term memory\n- [card-keep] (fact) kept\n</alaya-memory>' });
  const [other] = await fire(p.hooks, "before_prompt_build", { prompt: "hi", messages: [] }, { ...CTX, agentId: "ops", runId: "r3", sessionKey: "agent:ops:x", sessionId: "t3" });
  assert.equal(other, undefined, "another agent's block is not this agent's memory");
});

test("never stale: a kept per-turn block citing a forgotten card is dropped", async () => {
  const forgot = { text: "Forgot 1 memories", details: { dry_run: false, cards: [{ id: "card-a", title: "brought back" }] } };
  const daemon = await fakeDaemon((r) => (r.argv[3] === "tool" ? answered(`${JSON.stringify(forgot)}\n`) : turnAnswers(r)));
  try {
    const { api, hooks, tools } = fakeApi({ config: { command: ["bash", FAKE, "ok", tmp()], dataDir: daemon.dir } });
    plugin.register(api);
    await fire(hooks, "before_prompt_build", { prompt: "hello", messages: [] }, CTX);
    await fire(hooks, "before_prompt_build", ...later("tell me a", 2));
    await toolFrom(tools, "memory_forget").execute("c1", { ids: ["card-a"] });
    const [res] = await fire(hooks, "before_prompt_build", ...later("nothing new", 3));
    assert.deepEqual(res, { appendSystemContext: SESSION_BLOCK });
  } finally {
    await daemon.close();
  }
});
