// alaya-capture: OpenClaw internal hook (fallback for the openclaw-alaya plugin).
// Events: command:new, command:reset, session:auto-reset. Self-contained ESM, no dependencies.
//
// Reads the ending session's JSONL transcript and pipes
//   {agentId, sessionKey, sessionId, reason, messages}
// to `alaya [--data-dir DIR] hook session-end` (idempotent). The handler awaits the capture
// (OpenClaw awaits command:new/reset hooks) but a hard timeout (default 8 s) bounds it; it never
// throws, so a failure can't break /new or /reset.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";

const HOOK_NAME = "alaya-capture";
const DEFAULT_TIMEOUT_MS = 8000;
const KILL_GRACE_MS = 500;

function log(msg) {
  try {
    console.warn(`[${HOOK_NAME}] ${msg}`);
  } catch {
    /* ignore */
  }
}

function expandHome(p) {
  if (typeof p !== "string") return p;
  if (p === "~") return homedir();
  return p.startsWith("~/") ? homedir() + p.slice(1) : p;
}

function hookConfig(context) {
  const entry = context?.cfg?.hooks?.internal?.entries?.[HOOK_NAME];
  const raw = entry && typeof entry === "object" ? entry : {};
  let command = ["alaya"];
  if (Array.isArray(raw.command) && raw.command.length && raw.command.every((s) => typeof s === "string" && s)) {
    command = raw.command.slice();
  } else if (typeof raw.command === "string" && raw.command.trim()) {
    command = raw.command.trim().split(/\s+/);
  } else if (process.env.ALAYA_COMMAND) {
    command = process.env.ALAYA_COMMAND.trim().split(/\s+/);
  }
  command[0] = expandHome(command[0]);
  const timeoutMs = Number.isFinite(Number(raw.timeoutMs)) && Number(raw.timeoutMs) >= 100 ? Number(raw.timeoutMs) : DEFAULT_TIMEOUT_MS;
  const dataDir = typeof raw.dataDir === "string" && raw.dataDir.trim() ? expandHome(raw.dataDir.trim()) : undefined;
  return { command, timeoutMs, dataDir };
}

function agentIdFrom(context, sessionKey) {
  if (typeof context?.agentId === "string" && context.agentId) return context.agentId;
  const m = /^agent:([^:]+):/.exec(sessionKey ?? "");
  return m ? m[1] : "main";
}

function stateDir() {
  return expandHome(process.env.OPENCLAW_STATE_DIR || join(homedir(), ".openclaw"));
}

/** Locate a readable JSONL transcript for the ending session, or explain why there is none. */
export function findTranscript({ entry, agentId, storePath }) {
  const sessionId = entry?.sessionId;
  const sessionFile = typeof entry?.sessionFile === "string" ? entry.sessionFile : undefined;
  if (sessionFile && sessionFile.startsWith("sqlite:")) {
    return { reason: "transcript is in OpenClaw's SQLite store (use the openclaw-alaya plugin)" };
  }
  if (sessionFile && existsSync(sessionFile) && statSync(sessionFile).isFile()) return { file: sessionFile };
  const dirs = [];
  if (sessionFile) dirs.push(dirname(sessionFile));
  if (typeof storePath === "string" && storePath) dirs.push(dirname(storePath));
  dirs.push(join(stateDir(), "agents", agentId, "sessions"));
  if (!sessionId) return { reason: "no sessionId for the ending session" };
  for (const dir of dirs) {
    const direct = join(dir, `${sessionId}.jsonl`);
    if (existsSync(direct)) return { file: direct };
    let archives = [];
    try {
      archives = readdirSync(dir)
        .filter((f) => f.startsWith(`${sessionId}.jsonl.reset.`))
        .map((f) => join(dir, f))
        .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs || basename(b).localeCompare(basename(a)));
    } catch {
      /* missing dir */
    }
    if (archives.length) return { file: archives[0] };
  }
  return { reason: `no transcript found for session ${sessionId}` };
}

/** OpenClaw/pi JSONL transcript → message objects (tolerant: skips bad lines and non-messages). */
export function readTranscriptMessages(file) {
  const messages = [];
  for (const line of readFileSync(file, "utf8").split(/\r?\n/)) {
    if (!line.trim()) continue;
    let rec;
    try {
      rec = JSON.parse(line);
    } catch {
      continue;
    }
    if (!rec || typeof rec !== "object") continue;
    if (rec.type !== undefined && rec.type !== "message") continue;
    const msg = rec.message;
    if (!msg || typeof msg !== "object" || typeof msg.role !== "string") continue;
    const content = Array.isArray(msg.content)
      ? msg.content.map((b) => (b && b.type === "image" ? { type: "image", mimeType: b.mimeType, omitted: true } : b))
      : msg.content;
    messages.push({ ...msg, content });
  }
  return messages;
}

function run(argv, input, timeoutMs) {
  return new Promise((resolve) => {
    let child;
    const detached = process.platform !== "win32";
    try {
      child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"], detached, windowsHide: true });
    } catch (err) {
      resolve({ ok: false, error: `cannot run ${argv[0]}: ${err.message}` });
      return;
    }
    let stdout = "";
    let stderr = "";
    let settled = false;
    let timedOut = false;
    let graceTimer;
    const kill = (sig) => {
      try {
        if (detached && child.pid) process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch {
        /* gone */
      }
    };
    const done = (res) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      resolve(res);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill("SIGTERM");
      graceTimer = setTimeout(() => {
        kill("SIGKILL");
        setTimeout(() => done({ ok: false, error: `${argv[0]} timed out after ${timeoutMs} ms` }), 100);
      }, KILL_GRACE_MS);
    }, timeoutMs);
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", (err) =>
      done({ ok: false, error: err.code === "ENOENT" ? `command not found: ${argv[0]}` : `cannot run ${argv[0]}: ${err.message}` }),
    );
    child.on("close", (code, signal) => {
      if (timedOut) return done({ ok: false, error: `${argv[0]} timed out after ${timeoutMs} ms` });
      if (code === 0) return done({ ok: true, stdout });
      const tail = stderr.trim().split(/\r?\n/).pop() ?? "";
      done({ ok: false, error: `${argv[0]} exited with ${code ?? signal}${tail ? `: ${tail.slice(0, 300)}` : ""}` });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

/**
 * Capture for one event. Returns a summary ({status: "captured"|"skipped"|"failed", ...});
 * never throws.
 */
export async function capture(event) {
  try {
    const type = event?.type;
    const action = event?.action;
    const isCommand = type === "command" && (action === "new" || action === "reset");
    const isAutoReset = type === "session" && action === "auto-reset";
    if (!isCommand && !isAutoReset) return { status: "skipped", reason: `not handled: ${type}:${action}` };
    const context = event.context ?? {};
    const entry = isAutoReset ? context.sessionEntry : context.previousSessionEntry ?? context.sessionEntry;
    const sessionKey = event.sessionKey ?? context.sessionKey;
    const agentId = agentIdFrom(context, sessionKey);
    const found = findTranscript({ entry, agentId, storePath: context.storePath });
    if (!found.file) {
      log(`capture skipped: ${found.reason}`);
      return { status: "skipped", reason: found.reason };
    }
    const messages = readTranscriptMessages(found.file);
    if (messages.length === 0) return { status: "skipped", reason: "transcript has no messages", file: found.file };
    const cfg = hookConfig(context);
    const payload = {
      agentId,
      sessionKey,
      sessionId: entry?.sessionId,
      reason: isAutoReset ? (typeof context.reason === "string" ? context.reason : "auto-reset") : action,
      messages,
    };
    const argv = [...cfg.command, ...(cfg.dataDir ? ["--data-dir", cfg.dataDir] : []), "hook", "session-end"];
    const res = await run(argv, JSON.stringify(payload), cfg.timeoutMs);
    if (!res.ok) {
      log(`capture failed: ${res.error}`);
      return { status: "failed", error: res.error, file: found.file };
    }
    return { status: "captured", file: found.file, output: res.stdout.trim() };
  } catch (err) {
    log(`capture failed: ${err?.message ?? err}`);
    return { status: "failed", error: String(err?.message ?? err) };
  }
}

export default async function handler(event) {
  await capture(event);
}
