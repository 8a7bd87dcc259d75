// Run the alaya CLI with JSON on stdin and a hard timeout. Never throws: every failure
// (missing binary, non-zero exit, timeout, runtime error) comes back as {ok:false, error}.
//
// Preferred path: OpenClaw's own runner,
//   api.runtime.system.runCommandWithTimeout(argv: string[], options: CommandOptions)
// (real signature in OpenClaw 2026.9.6 dist/plugin-entry-*.d.ts; the (cmd, args, opts) form in
// the docs throws). stdin is passed as `options.input` (string); without `input` the child
// would inherit the host's stdin. `killProcessTree: true` puts the child in its own process
// group so a timeout also kills wrappers' children (`uv run alaya` → python).
// Fallback: node:child_process.spawn, detached into its own process group, killed as a group
// (SIGTERM, then SIGKILL after a short grace) when the timeout fires.
import { spawn } from "node:child_process";

const KILL_GRACE_MS = 500;
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
// Extra time we give OpenClaw's runner to report its own timeout before we stop waiting.
export const RUNTIME_SLACK_MS = 2000;

export function lastLine(text) {
  const line = String(text ?? "").trim().split(/\r?\n/).filter(Boolean).pop();
  return line ? line.slice(0, 500) : "";
}

function describeFailure(argv, res) {
  const cmd = argv[0];
  if (res.timedOut) return `${cmd} timed out after ${res.timeoutMs} ms`;
  if (res.spawnError) {
    return res.spawnError.code === "ENOENT"
      ? `command not found: ${cmd} (set plugins.entries.openclaw-alaya.config.command)`
      : `cannot run ${cmd}: ${res.spawnError.message}`;
  }
  const tail = lastLine(res.stderr);
  if (res.signal) return `${cmd} killed by ${res.signal}${tail ? `: ${tail}` : ""}`;
  return `${cmd} exited with code ${res.code}${tail ? `: ${tail}` : ""}`;
}

/** A run's outcome as every runner reports it: ok, and the one-line error when not. */
export function finish(argv, res) {
  const ok = !res.timedOut && !res.spawnError && res.code === 0;
  return { ...res, ok, error: ok ? undefined : describeFailure(argv, res) };
}

/**
 * Spawn-based runner with a hard timeout that kills the whole process group.
 * `unref`: the child, its pipes and the timer do not keep Node alive (fire-and-forget work that
 * must not hold up the exit of a one-shot `openclaw agent --local`).
 */
export function spawnWithTimeout(argv, { input = "", timeoutMs, env, cwd, unref = false } = {}) {
  return new Promise((resolve) => {
    let child;
    const detached = process.platform !== "win32";
    try {
      child = spawn(argv[0], argv.slice(1), {
        stdio: ["pipe", "pipe", "pipe"],
        detached,
        env: env ?? process.env,
        cwd,
        windowsHide: true,
      });
    } catch (err) {
      resolve(finish(argv, { code: null, signal: null, stdout: "", stderr: "", spawnError: err, timedOut: false, timeoutMs }));
      return;
    }
    let stdout = "";
    let stderr = "";
    let settled = false;
    let timedOut = false;
    let spawnError;
    let graceTimer;
    const append = (which, chunk) => {
      if (which === "out") {
        if (stdout.length < MAX_OUTPUT_BYTES) stdout += chunk;
      } else if (stderr.length < MAX_OUTPUT_BYTES) stderr += chunk;
    };
    const kill = (signal) => {
      try {
        if (detached && child.pid) process.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {
        /* already gone */
      }
    };
    const done = (code, signal) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      resolve(finish(argv, { pid: child.pid, code, signal, stdout, stderr, spawnError, timedOut, timeoutMs }));
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill("SIGTERM");
      graceTimer = setTimeout(() => {
        kill("SIGKILL");
        // The group is dead (or unkillable); don't wait for stdio to close.
        setTimeout(() => done(null, "SIGKILL"), 100).unref?.();
      }, KILL_GRACE_MS);
    }, timeoutMs);
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (c) => append("out", c));
    child.stderr.on("data", (c) => append("err", c));
    child.on("error", (err) => {
      spawnError = err;
      done(null, null);
    });
    child.on("close", (code, signal) => done(code, signal));
    child.stdin.on("error", () => {
      /* EPIPE when the child exits without reading stdin: reported through the exit code */
    });
    child.stdin.end(input);
    if (unref) {
      child.unref();
      child.stdout.unref?.();
      child.stderr.unref?.();
      timer.unref?.();
    }
  });
}

/**
 * Run argv with `input` on stdin, through OpenClaw's runner when `runtimeRun` is given.
 * @returns {Promise<{ok: boolean, code: number|null, stdout: string, stderr: string, timedOut: boolean, error?: string}>}
 */
export async function runCommand(argv, { input = "", timeoutMs, runtimeRun, unref = false } = {}) {
  if (typeof runtimeRun !== "function") return spawnWithTimeout(argv, { input, timeoutMs, unref });
  let guard;
  try {
    const guardPromise = new Promise((resolve) => {
      guard = setTimeout(() => resolve({ guardFired: true }), timeoutMs + RUNTIME_SLACK_MS);
    });
    const r = await Promise.race([
      runtimeRun(argv, { timeoutMs, input, killProcessTree: true, maxOutputBytes: MAX_OUTPUT_BYTES }),
      guardPromise,
    ]);
    if (r?.guardFired) {
      return finish(argv, { code: null, signal: null, stdout: "", stderr: "", timedOut: true, timeoutMs });
    }
    const termination = r?.termination;
    const timedOut = termination === "timeout" || termination === "no-output-timeout" || r?.noOutputTimedOut === true;
    // Some builds report a missing binary as a result with an error instead of rejecting.
    const spawnError = r?.error instanceof Error ? r.error : undefined;
    return finish(argv, {
      pid: r?.pid,
      code: typeof r?.code === "number" ? r.code : null,
      signal: r?.signal ?? null,
      stdout: typeof r?.stdout === "string" ? r.stdout : String(r?.stdout ?? ""),
      stderr: typeof r?.stderr === "string" ? r.stderr : String(r?.stderr ?? ""),
      spawnError,
      timedOut,
      timeoutMs,
    });
  } catch (err) {
    return finish(argv, { code: null, signal: null, stdout: "", stderr: "", spawnError: err, timedOut: false, timeoutMs });
  } finally {
    clearTimeout(guard);
  }
}

/** Parse the CLI's stdout: one JSON object (tolerates log lines before it). */
export function parseJsonObject(stdout) {
  const text = String(stdout ?? "").trim();
  if (!text) throw new Error("empty output (expected a JSON object)");
  const candidates = [text];
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  if (lines.length > 1) candidates.push(lines[lines.length - 1]);
  for (const c of candidates) {
    try {
      const v = JSON.parse(c);
      if (v && typeof v === "object" && !Array.isArray(v)) return v;
    } catch {
      /* try the next candidate */
    }
  }
  throw new Error(`output is not a JSON object: ${JSON.stringify(text.slice(0, 200))}`);
}
