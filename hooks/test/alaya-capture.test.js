import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, writeFileSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

import handler, { capture, readTranscriptMessages } from "../alaya-capture/handler.js";

const here = dirname(fileURLToPath(import.meta.url));
const FAKE = join(here, "..", "openclaw-alaya", "test", "fixtures", "fake-alaya.sh");

const LINES = [
  { type: "session", version: 3, id: "sid-1", timestamp: "2026-04-10T09:00:00.000Z", cwd: "/ws" },
  { type: "message", id: "a1", parentId: null, message: { role: "user", content: [{ type: "text", text: "Remember I prefer metric units" }], timestamp: 1 } },
  { type: "message", id: "b2", parentId: "a1", message: { role: "assistant", content: [{ type: "text", text: "Noted." }, { type: "image", mimeType: "image/png", data: "QUJD" }], timestamp: 2 } },
  { type: "compaction", id: "c3", parentId: "b2", summary: "x", firstKeptEntryId: "a1", tokensBefore: 5 },
  { message: { role: "user", content: "old-style line without type", timestamp: 3 } },
];

function setup(mode) {
  const root = mkdtempSync(join(tmpdir(), "alaya-capture-test-"));
  const sessions = join(root, "agents", "main", "sessions");
  mkdirSync(sessions, { recursive: true });
  const file = join(sessions, "sid-1.jsonl");
  writeFileSync(file, LINES.map((l) => JSON.stringify(l)).join("\n") + "\nnot json\n");
  const logdir = join(root, "log");
  mkdirSync(logdir);
  const cfg = { hooks: { internal: { entries: { "alaya-capture": { command: ["bash", FAKE, mode, logdir], dataDir: "/d", timeoutMs: 400 } } } } };
  return { root, sessions, file, logdir, cfg };
}

function event(cfg, context, action = "new") {
  return { type: "command", action, sessionKey: "agent:main:main", context: { cfg, ...context }, timestamp: new Date(), messages: [] };
}

test("readTranscriptMessages keeps message lines, tolerates junk, drops image data", () => {
  const { file } = setup("ok");
  const msgs = readTranscriptMessages(file);
  assert.equal(msgs.length, 3);
  assert.equal(msgs[0].role, "user");
  assert.deepEqual(msgs[1].content[1], { type: "image", mimeType: "image/png", omitted: true });
  assert.equal(msgs[2].content, "old-style line without type");
});

test("command:new pipes the previous session's transcript to `alaya hook session-end`", async () => {
  const { file, logdir, cfg } = setup("ok");
  const res = await capture(event(cfg, { previousSessionEntry: { sessionId: "sid-1", sessionFile: file }, agentId: "main" }));
  assert.equal(res.status, "captured");
  const argvFile = readdirSync(logdir).find((f) => f.endsWith(".argv"));
  const argv = readFileSync(join(logdir, argvFile), "utf8").split("\n").filter(Boolean);
  assert.deepEqual(argv, ["--data-dir", "/d", "hook", "session-end"]);
  const stdin = JSON.parse(readFileSync(join(logdir, argvFile.replace(".argv", ".stdin")), "utf8"));
  assert.equal(stdin.agentId, "main");
  assert.equal(stdin.sessionKey, "agent:main:main");
  assert.equal(stdin.sessionId, "sid-1");
  assert.equal(stdin.reason, "new");
  assert.equal(stdin.messages.length, 3);
});

test("falls back to the newest .jsonl.reset.* archive next to the store", async () => {
  const { sessions, file, logdir, cfg } = setup("ok");
  const archived = join(sessions, "sid-1.jsonl.reset.2026-04-10T10-00-00.000Z");
  writeFileSync(archived, readFileSync(file));
  const { unlinkSync } = await import("node:fs");
  unlinkSync(file);
  const res = await capture(event(cfg, { previousSessionEntry: { sessionId: "sid-1" }, storePath: join(sessions, "sessions.json") }, "reset"));
  assert.equal(res.status, "captured");
  assert.equal(res.file, archived);
  assert.equal(readdirSync(logdir).filter((f) => f.endsWith(".argv")).length, 1);
});

test("SQLite marker, missing transcript, other events: skipped without throwing", async () => {
  const { cfg } = setup("ok");
  const a = await capture(event(cfg, { previousSessionEntry: { sessionId: "x", sessionFile: "sqlite:main:x:/s/sessions.json" } }));
  assert.equal(a.status, "skipped");
  assert.match(a.reason, /SQLite/);
  const b = await capture(event(cfg, { previousSessionEntry: { sessionId: "nope" }, storePath: "/nonexistent/sessions.json" }));
  assert.equal(b.status, "skipped");
  const c = await capture({ type: "message", action: "sent", context: {} });
  assert.equal(c.status, "skipped");
  assert.equal(await handler(undefined), undefined);
  assert.equal(await handler({ type: "command", action: "new", context: null }), undefined);
});

test("failing, missing or hanging alaya never throws; the timeout kills it", async () => {
  for (const mode of ["fail", "sleep"]) {
    const { file, cfg } = setup(mode);
    const t0 = Date.now();
    const res = await capture(event(cfg, { previousSessionEntry: { sessionId: "sid-1", sessionFile: file } }));
    assert.equal(res.status, "failed", mode);
    assert.ok(Date.now() - t0 < 3000);
    if (mode === "fail") assert.match(res.error, /data directory is locked/);
    else assert.match(res.error, /timed out after 400 ms/);
  }
  const { file, cfg } = setup("ok");
  cfg.hooks.internal.entries["alaya-capture"].command = ["/nonexistent/alaya-xyz"];
  const res = await capture(event(cfg, { previousSessionEntry: { sessionId: "sid-1", sessionFile: file } }));
  assert.equal(res.status, "failed");
  assert.match(res.error, /command not found/);
});
