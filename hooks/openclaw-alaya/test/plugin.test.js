import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

import plugin from "../index.js";
import { _resetState, isFirstTurn, sanitizeMessages } from "../lib/plugin.js";
import { resolveConfig, splitCommand, alayaArgv } from "../lib/config.js";

const here = dirname(fileURLToPath(import.meta.url));
const FAKE = join(here, "fixtures", "fake-alaya.sh");

function tmp() {
  return mkdtempSync(join(tmpdir(), "alaya-plugin-test-"));
}

/** Calls recorded by the fake alaya, oldest first: [{argv: [...], stdin: {...}}]. */
function calls(logdir) {
  return readdirSync(logdir)
    .filter((f) => f.endsWith(".argv"))
    .sort()
    .map((f) => {
      const base = f.slice(0, -".argv".length);
      const argv = readFileSync(join(logdir, f), "utf8").split("\n").filter(Boolean);
      const raw = readFileSync(join(logdir, `${base}.stdin`), "utf8");
      return { argv, stdin: JSON.parse(raw) };
    });
}

function fakeApi({ config, runtime, registrationMode = "full" } = {}) {
  const hooks = new Map();
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
    pluginConfig: config,
    logger,
    runtime,
    on(name, handler) {
      if (!hooks.has(name)) hooks.set(name, []);
      hooks.get(name).push(handler);
    },
  };
  return { api, hooks, logs };
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

test("non-first turn: nothing is run", async () => {
  const logdir = tmp();
  const { api, hooks } = fakeApi({ config: { command: ["bash", FAKE, "ok", logdir] } });
  plugin.register(api);
  const history = [
    { role: "user", content: "earlier" },
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
  assert.deepEqual([...hooks.keys()].sort(), ["before_compaction", "before_prompt_build", "before_reset"]);
  await fire(hooks, "before_compaction", { messageCount: 10 }, CTX);
  assert.equal(calls(logdir).length, 0);
});

test("injectEnabled/captureEnabled false register nothing", () => {
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
  assert.match(w[1], /agent_end capture failed: command not found/);
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
  assert.equal(seen[0].opts.timeoutMs, 4000);
  assert.equal(typeof seen[0].opts.input, "string");
  assert.equal(JSON.parse(seen[0].opts.input).prompt, "q");
  await fire(hooks, "agent_end", { messages: [{ role: "user", content: "q" }] }, CTX);
  assert.equal(seen[1].opts.timeoutMs, 8000);
  assert.equal(JSON.parse(seen[1].opts.input).reason, "agent_end");
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
  assert.equal(d.startTimeoutMs, 4000);
  assert.equal(d.captureTimeoutMs, 8000);
  assert.equal(d.budgetTokens, 1200);
  assert.equal(d.injectEnabled, true);
  assert.equal(d.captureEnabled, true);
  assert.deepEqual(splitCommand(`/opt/my tools/alaya`), ["/opt/my", "tools/alaya"]);
  assert.deepEqual(splitCommand(`"/opt/my tools/alaya" --x`), ["/opt/my tools/alaya", "--x"]);
  const w = [];
  const bad = resolveConfig({ command: [], startTimeoutMs: -5, budgetTokens: "many" }, (m) => w.push(m));
  assert.deepEqual([...bad.command], ["alaya"]);
  assert.equal(bad.startTimeoutMs, 4000);
  assert.equal(bad.budgetTokens, 1200);
  assert.equal(w.length, 3);
  assert.deepEqual(alayaArgv(resolveConfig({ dataDir: "/d" }), ["status"]), ["alaya", "--data-dir", "/d", "status"]);
  assert.deepEqual(sanitizeMessages(null), []);
});

test("manifest and package.json agree with the code", () => {
  const manifest = JSON.parse(readFileSync(join(here, "..", "openclaw.plugin.json"), "utf8"));
  const pkg = JSON.parse(readFileSync(join(here, "..", "package.json"), "utf8"));
  assert.equal(manifest.id, plugin.id);
  assert.equal(pkg.type, "module");
  assert.deepEqual(pkg.openclaw.extensions, ["./index.js"]);
  assert.equal(manifest.activation.onStartup, true);
  const props = manifest.configSchema.properties;
  for (const k of ["command", "dataDir", "startTimeoutMs", "captureTimeoutMs", "budgetTokens", "injectEnabled", "captureEnabled", "captureOn"]) {
    assert.ok(props[k], `configSchema lacks ${k}`);
  }
  const d = resolveConfig({});
  assert.deepEqual(props.command.default, [...d.command]);
  assert.equal(props.startTimeoutMs.default, d.startTimeoutMs);
  assert.equal(props.captureTimeoutMs.default, d.captureTimeoutMs);
  assert.equal(props.budgetTokens.default, d.budgetTokens);
  assert.equal(manifest.configSchema.additionalProperties, false);
});
