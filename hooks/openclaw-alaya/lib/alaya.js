// One call of the alaya CLI for a plugin registration: argv from the config, JSON on stdin, the
// JSON object on stdout back. A call the daemon serves goes straight to its socket (socket.js);
// otherwise, or when that misses, `alaya` runs, through OpenClaw's own runner when the host
// lends one, with what is left of the timeout.
import { alayaArgv } from "./config.js";
import { runCommand, parseJsonObject, lastLine, finish } from "./run.js";
import { callDaemon } from "./socket.js";

function runtimeRunner(api) {
  const system = api.runtime?.system;
  if (typeof system?.runCommandWithTimeout !== "function") return undefined;
  return (...args) => system.runCommandWithTimeout(...args);
}

async function run(api, cfg, args, input, timeoutMs, daemonOnly, detached) {
  const argv = alayaArgv(cfg, args);
  const deadline = Date.now() + timeoutMs;
  const served = await callDaemon(cfg, args, input, timeoutMs, { waitAll: daemonOnly, unref: detached });
  if (served?.lost) {
    return { ok: false, code: null, error: `the alaya daemon got ${args.join(" ")} but ${served.lost}; not retried: it may have run` };
  }
  if (served) return finish(argv, { ...served, signal: null, timedOut: false, timeoutMs });
  if (daemonOnly) {
    return { ok: false, code: null, miss: true, error: `no warm alaya daemon answered ${args.join(" ")} within ${timeoutMs} ms` };
  }
  // detached (a capture, issue 33): our own child, in its own process group and unref'd, so that
  // neither OpenClaw's cleanup nor its exit cuts a capture short
  const runtimeRun = detached ? undefined : runtimeRunner(api);
  const res = await runCommand(argv, { input, timeoutMs: Math.max(1, deadline - Date.now()), runtimeRun, unref: detached });
  return res.timedOut ? finish(argv, { ...res, timeoutMs }) : res; // the call's budget, not the rest
}

/**
 * `call(args, payload, timeoutMs, {daemonOnly})` → the CLI's JSON object. Rejects on any failure
 * with an Error describing it; when the CLI itself exited non-zero, `err.cliMessage` is its
 * one-line error. `daemonOnly` (per-turn recall, issue 32): only a warm daemon's answer will do,
 * never a cold `alaya` run; without one the call rejects with `err.miss` set. `detached`: a cold
 * run is a child of our own that outlives the host (capture).
 */
export function alayaCaller(api, cfg) {
  return async (args, payload, timeoutMs, { daemonOnly = false, detached = false } = {}) => {
    const res = await run(api, cfg, args, JSON.stringify(payload), timeoutMs, daemonOnly, detached);
    if (!res.ok) {
      const cliMessage = res.code > 0 ? lastLine(res.stderr) : "";
      throw Object.assign(new Error(res.error), { cliMessage: cliMessage || undefined, miss: res.miss });
    }
    return parseJsonObject(res.stdout);
  };
}
