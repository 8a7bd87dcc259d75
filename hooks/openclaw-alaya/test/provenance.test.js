// Provenance keys of the session-end payload (lib/provenance.js). The ctx shapes are those
// OpenClaw 2026.9.6 was seen to send (README, "What the plugin sends about provenance").
import { test, beforeEach, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

import plugin from "../index.js";
import { _resetState } from "../lib/state.js";
import {
  MAX_RUNS,
  MAX_CHILDREN,
  noteRun,
  noteSession,
  noteSpawn,
  forgetRun,
  ownerIdsOf,
  provenanceOf,
  toolProvenanceOf,
} from "../lib/provenance.js";

const FAKE = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "fake-alaya.sh");
const dirs = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
process.env.ALAYA_HOME = join(tmpdir(), "alaya-provenance-test-none");

beforeEach(() => _resetState());

const PARENT = "agent:main:probe-parent";
const CHILD = "agent:main:subagent:dc2cfeef-0746-431a-8c67-359c85cbdeec";
const JOB = "f1b3f0d7-e430-4174-9094-fd8da4bdec45";
const CRON_KEY = `agent:main:cron:${JOB}:run:605cd55b-36cc-4a93-8a5a-31e737a93758`;
const user = (runId, extra = {}) => ({ runId, agentId: "main", sessionKey: "agent:main:main", sessionId: "s-main", trigger: "user", ...extra });

test("an ordinary turn with nothing known: only the trigger, no kind", () => {
  noteRun(user("r1"));
  assert.deepEqual(provenanceOf({}, user("r1")), { trigger: "user" });
  assert.deepEqual(provenanceOf({}, {}), {});
  assert.deepEqual(provenanceOf(undefined, undefined), {});
});

test("cron: trigger cron → kind cron; ctx.jobId → kind cron and the jobId", () => {
  const ctx = { runId: "r2", sessionKey: CRON_KEY, sessionId: "605cd55b", trigger: "cron" };
  noteRun(ctx);
  assert.deepEqual(provenanceOf({}, ctx), { sessionKind: "cron", trigger: "cron" });
  assert.deepEqual(provenanceOf({}, { ...ctx, runId: "r2b", trigger: undefined, jobId: JOB }), { sessionKind: "cron", jobId: JOB });
});

test("heartbeat: trigger heartbeat → kind heartbeat; inputProvenance from before_prompt_build", () => {
  const bpb = { ...user("r3"), trigger: "heartbeat", channelId: "heartbeat",
    inputProvenance: { kind: "internal_system", sourceTool: "heartbeat" } };
  noteRun(bpb);
  const end = { ...user("r3"), trigger: "heartbeat", channelId: "heartbeat" }; // agent_end: no inputProvenance
  assert.deepEqual(provenanceOf({}, end), {
    sessionKind: "heartbeat",
    trigger: "heartbeat",
    inputProvenance: { kind: "internal_system", sourceTool: "heartbeat" },
  });
});

test("sub-agent: subagent_spawned's requester becomes the child's parent, with the parent's sessionId", () => {
  noteRun({ runId: "rp", sessionKey: PARENT, sessionId: "sid-parent", trigger: "user" });
  noteSpawn(
    { runId: "rc", childSessionKey: CHILD, agentId: "main", mode: "run", requester: {}, threadRequested: false },
    { runId: "rc", childSessionKey: CHILD, requesterSessionKey: PARENT },
  );
  const child = { runId: "rc", sessionKey: CHILD, sessionId: "sid-child", trigger: "user" };
  assert.deepEqual(provenanceOf({}, child), {
    sessionKind: "subagent",
    trigger: "user",
    parentSessionKey: PARENT,
    parentSessionId: "sid-parent",
  });
  // session_end / before_reset of the child (no run): still the child of that parent
  assert.deepEqual(provenanceOf({}, { sessionKey: CHILD, sessionId: "sid-child" }), {
    sessionKind: "subagent",
    parentSessionKey: PARENT,
    parentSessionId: "sid-parent",
  });
});

test("sub-agent: the parent's sessionId seen only after the spawn is used; the key shape alone gives the kind", () => {
  noteSpawn({ childSessionKey: CHILD }, { requesterSessionKey: PARENT });
  noteSession({ sessionKey: PARENT, sessionId: "late-sid" });
  assert.equal(provenanceOf({}, { sessionKey: CHILD }).parentSessionId, "late-sid");
  _resetState();
  assert.deepEqual(provenanceOf({}, { sessionKey: "agent:main:subagent:x", trigger: "user" }), { sessionKind: "subagent", trigger: "user" });
  // a spawn without a requester is no parent
  noteSpawn({ childSessionKey: CHILD }, {});
  assert.equal(provenanceOf({}, { sessionKey: CHILD }).parentSessionKey, undefined);
});

test("the parent's announce turn: inter_session provenance from before_prompt_build reaches agent_end's capture", () => {
  const runId = `announce:v1:${CHILD}:rc`;
  const ip = { kind: "inter_session", sourceSessionKey: CHILD, sourceChannel: "internal", sourceTool: "subagent_announce" };
  noteRun({ runId, sessionKey: PARENT, sessionId: "sid-parent", trigger: "user", inputProvenance: ip });
  const got = provenanceOf({ runId }, { runId, sessionKey: PARENT, sessionId: "sid-parent", trigger: "user" });
  assert.deepEqual(got, { trigger: "user", inputProvenance: ip });
  forgetRun(runId);
  assert.deepEqual(provenanceOf({}, { runId, sessionKey: PARENT, trigger: "user" }), { trigger: "user" });
});

test("sender and channel: ctx first, else the run's before_prompt_build; channel falls back to messageProvider", () => {
  const webchat = { ...user("r4"), channel: "webchat", messageProvider: "webchat", senderId: "cli", channelContext: { sender: { id: "cli" } } };
  assert.deepEqual(provenanceOf({}, webchat), { trigger: "user", senderId: "cli", channel: "webchat" });
  noteRun({ ...user("r5"), messageProvider: "telegram", channelContext: { sender: { id: 12345 } } });
  assert.deepEqual(provenanceOf({}, user("r5")), { trigger: "user", senderId: "12345", channel: "telegram" });
});

test("ownerIds: commands.ownerAllowFrom from the runtime's current config, else api.config; strings; no wildcard", () => {
  assert.deepEqual(ownerIdsOf({ config: { commands: { ownerAllowFrom: ["telegram:12345", 999, "*", 999] } } }), ["telegram:12345", "999"]);
  const runtime = { config: { current: () => ({ commands: { ownerAllowFrom: ["discord:7"] } }) } };
  assert.deepEqual(ownerIdsOf({ runtime, config: { commands: { ownerAllowFrom: ["old"] } } }), ["discord:7"]);
  const broken = { config: { current: () => { throw new Error("no"); } } };
  assert.deepEqual(ownerIdsOf({ runtime: broken, config: { commands: { ownerAllowFrom: ["x"] } } }), ["x"]);
  assert.deepEqual(ownerIdsOf({}), []);
  assert.deepEqual(ownerIdsOf({ config: { commands: { ownerAllowFrom: "telegram:1" } } }), []);
  assert.deepEqual(provenanceOf({}, {}, ["telegram:12345"]), { ownerIds: ["telegram:12345"] });
});

test("the maps are bounded: the oldest runs and children are dropped", () => {
  for (let i = 0; i <= MAX_RUNS; i++) noteRun({ runId: `r${i}`, trigger: "cron" });
  assert.deepEqual(provenanceOf({}, { runId: "r0" }), {});
  assert.equal(provenanceOf({}, { runId: `r${MAX_RUNS}` }).trigger, "cron");
  for (let i = 0; i <= MAX_CHILDREN; i++) noteSpawn({ childSessionKey: `agent:main:c${i}` }, { requesterSessionKey: PARENT });
  assert.deepEqual(provenanceOf({}, { sessionKey: "agent:main:c0" }), {});
  assert.equal(provenanceOf({}, { sessionKey: `agent:main:c${MAX_CHILDREN}` }).parentSessionKey, PARENT);
});

// --- through the plugin: the payload `alaya hook session-end` receives

function fakeApi(config, extra = {}) {
  const hooks = new Map();
  const api = {
    id: "openclaw-alaya",
    registrationMode: "discovery",
    pluginConfig: { daemon: false, injectEnabled: false, ...config },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    on(name, handler) {
      if (!hooks.has(name)) hooks.set(name, []);
      hooks.get(name).push(handler);
    },
    registerTool() {},
    ...extra,
  };
  return { api, hooks };
}
const fire = (hooks, name, event, ctx) => Promise.all((hooks.get(name) ?? []).map((h) => h(event, ctx)));
function captured(logdir) {
  return readdirSync(logdir)
    .filter((f) => f.endsWith(".stdin"))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(logdir, f), "utf8")));
}

test("plugin: a spawned child's agent_end carries kind, parent, trigger and the owner ids", async () => {
  const logdir = mkdtempSync(join(tmpdir(), "alaya-prov-"));
  dirs.push(logdir);
  const { api, hooks } = fakeApi({ command: ["bash", FAKE, "ok", logdir] }, { config: { commands: { ownerAllowFrom: ["telegram:12345"] } } });
  plugin.register(api);
  assert.ok(hooks.has("before_prompt_build") && hooks.has("subagent_spawned"));
  const pctx = { runId: "rp", agentId: "main", sessionKey: PARENT, sessionId: "sid-parent", trigger: "user" };
  assert.deepEqual(await fire(hooks, "before_prompt_build", { prompt: "delegate", messages: [] }, pctx), [undefined]);
  await fire(hooks, "subagent_spawned", { runId: "rc", childSessionKey: CHILD, agentId: "main" },
    { runId: "rc", childSessionKey: CHILD, requesterSessionKey: PARENT });
  const cctx = { runId: "rc", agentId: "main", sessionKey: CHILD, sessionId: "sid-child", trigger: "user" };
  await fire(hooks, "before_prompt_build", { prompt: "[Subagent Task] x", messages: [] }, cctx);
  await fire(hooks, "agent_end", { runId: "rc", messages: [{ role: "user", content: "task" }, { role: "assistant", content: "done" }] }, cctx);
  const [payload] = captured(logdir);
  assert.equal(payload.sessionKey, CHILD);
  assert.equal(payload.sessionKind, "subagent");
  assert.equal(payload.parentSessionKey, PARENT);
  assert.equal(payload.parentSessionId, "sid-parent");
  assert.equal(payload.trigger, "user");
  assert.deepEqual(payload.ownerIds, ["telegram:12345"]);
  assert.equal(payload.messages.length, 2);
});

test("plugin: with nothing known the payload is the old one; captureEnabled false adds no observers", async () => {
  const logdir = mkdtempSync(join(tmpdir(), "alaya-prov-"));
  dirs.push(logdir);
  const { api, hooks } = fakeApi({ command: ["bash", FAKE, "ok", logdir] });
  plugin.register(api);
  const ctx = { agentId: "main", sessionKey: "agent:main:gw1", sessionId: "s1" };
  await fire(hooks, "before_reset", { reason: "reset", messages: [{ role: "user", content: "hi" }] }, ctx);
  const [payload] = captured(logdir);
  assert.deepEqual(Object.keys(payload).sort(), ["agentId", "messages", "reason", "sessionId", "sessionKey"]);

  const off = fakeApi({ captureEnabled: false });
  plugin.register(off.api);
  assert.equal(off.hooks.size, 0);
});

test("plugin: with injection on, its before_prompt_build notes the run too (one handler)", async () => {
  const logdir = mkdtempSync(join(tmpdir(), "alaya-prov-"));
  dirs.push(logdir);
  const { api, hooks } = fakeApi({ command: ["bash", FAKE, "ok", logdir], injectEnabled: true });
  plugin.register(api);
  assert.equal(hooks.get("before_prompt_build").length, 1);
  const ip = { kind: "internal_system", sourceTool: "heartbeat" };
  const ctx = { runId: "hb1", agentId: "main", sessionKey: "agent:main:main", sessionId: "s-main", trigger: "heartbeat" };
  const [res] = await fire(hooks, "before_prompt_build", { prompt: "heartbeat", messages: [] }, { ...ctx, inputProvenance: ip });
  assert.deepEqual(res, { prependContext: "MEMORY-BLOCK" }, "injection is unchanged");
  await fire(hooks, "agent_end", { runId: "hb1", messages: [{ role: "user", content: "heartbeat" }, { role: "assistant", content: "NO_REPLY" }] }, ctx);
  const payload = captured(logdir).find((p) => p.reason === "agent_end");
  assert.equal(payload.sessionKind, "heartbeat");
  assert.equal(payload.trigger, "heartbeat");
  assert.deepEqual(payload.inputProvenance, ip);
});

test("a tool call carries its session's provenance: the tool ctx's sender and channel, the latest run's trigger and input (issue 30 class 3)", () => {
  const group = "agent:main:telegram:group:-100123";
  noteRun({ runId: "g1", agentId: "main", sessionKey: group, sessionId: "s-g", trigger: "user", senderId: "mallory", channel: "telegram" });
  assert.deepEqual(toolProvenanceOf({ agentId: "main", sessionKey: group, sessionId: "s-g" }, ["telegram:1"]),
    { trigger: "user", senderId: "mallory", channel: "telegram", ownerIds: ["telegram:1"] });
  // OpenClaw's tool context names the requester itself: that wins over the run noted before
  assert.deepEqual(toolProvenanceOf({ sessionKey: group, requesterSenderId: "1", messageChannel: "telegram" }),
    { trigger: "user", senderId: "1", channel: "telegram" });
  noteRun({ runId: "c1", sessionKey: CRON_KEY, trigger: "cron" });
  assert.deepEqual(toolProvenanceOf({ sessionKey: CRON_KEY }), { sessionKind: "cron", trigger: "cron" });
  assert.deepEqual(toolProvenanceOf({ sessionKey: CHILD }), { sessionKind: "subagent" });
  assert.deepEqual(toolProvenanceOf({}), {});
});
