// The plugin's served calls (session-start, turn, session-end, the agent tools) sent straight to the daemon
// (`alaya serve`) over its unix socket `<data dir>/serve.sock`: the request the Python client
// (openclaw_alaya/cli/client.py) would forward, without its ~50 ms of process start and imports.
// Protocol (cli/wire.py, cli/daemon.py): one JSON line {v, op: "run", argv, stdin (base64), tty}
// in, one JSON object {ok, exit, stdout, stderr (base64), version} back.
//
// Anything short of a trusted, well-formed answer is a miss, and the caller runs `alaya …` as
// before (it starts the daemon when none answers, and waits for it). No version is sent: the
// daemon notices by itself that its installed code changed and answers "stale" (daemon.py).
import { createConnection } from "node:net";
import { lstat, realpath, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { expandHome } from "./config.js";

const SOCKET_NAME = "serve.sock";
const PROTOCOL = 1;
const CONNECT_TIMEOUT_MS = 250; // as wire.CONNECT_TIMEOUT: a live daemon accepts at once
// AF_UNIX paths stop at 107 bytes; wire.address reaches longer ones through /proc, we leave
// them to the Python client.
const MAX_PATH_BYTES = 100;
// daemon.py's _WRITES: once sent, never sent again (it may have run).
const WRITES = new Set(["memory_store", "memory_forget"]);

/** Whether the daemon serves `alaya <args>` (client.fast_path's hook calls). */
function served(args) {
  return args[0] === "hook" && (["session-start", "turn", "session-end"].includes(args[1]) || (args[1] === "tool" && args.length === 3));
}

/** As wire.resolve_data_dir: `dataDir`, then $ALAYA_HOME, then ~/.alaya; expanded, absolute, real. */
export function resolveDataDir(dataDir) {
  return realpath(resolve(expandHome(dataDir ?? (process.env.ALAYA_HOME || "~/.alaya"))));
}

/**
 * The socket of `dir` when it can be trusted, else undefined. Node cannot read SO_PEERCRED (the
 * Python client's check of the listener's uid), so the place vouches instead: a data directory
 * of ours that no one else may enter (trust.py's rule, which `alaya init` and every command
 * enforce), holding a socket of ours. Only a user who can write into such a directory anyway
 * (root) could put another listener there.
 */
async function trustedSocket(dir) {
  const uid = process.getuid();
  const d = await stat(dir);
  if (!d.isDirectory() || d.uid !== uid || d.mode & 0o077) return undefined;
  const path = join(dir, SOCKET_NAME);
  const s = await lstat(path);
  if (!s.isSocket() || s.uid !== uid || Buffer.byteLength(path) >= MAX_PATH_BYTES) return undefined;
  return path;
}

/** One request; {reply, sent, timedOut}. `sent`: the daemon may have seen the request. */
function exchange(path, line, budgetMs, unref) {
  return new Promise((done) => {
    let sent = false;
    const chunks = [];
    const sock = createConnection({ path });
    const finish = (reply, timedOut = false) => {
      clearTimeout(connectTimer);
      clearTimeout(timer);
      sock.destroy();
      done({ reply, sent, timedOut });
    };
    const connectTimer = setTimeout(() => finish(undefined, true), Math.min(CONNECT_TIMEOUT_MS, budgetMs));
    const timer = setTimeout(() => finish(undefined, true), budgetMs);
    if (unref) for (const handle of [sock, connectTimer, timer]) handle.unref?.();
    sock.on("connect", () => {
      sent = true;
      clearTimeout(connectTimer);
      sock.end(line); // the daemon reads up to the newline or our end, as from the Python client
    });
    sock.on("data", (chunk) => chunks.push(chunk));
    sock.on("end", () => {
      try {
        finish(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        finish(undefined);
      }
    });
    sock.on("error", () => finish(undefined));
  });
}

const decode = (b64) => (typeof b64 === "string" ? Buffer.from(b64, "base64").toString("utf8") : "");

/**
 * The daemon's answer to `alaya <args>` with `input` on stdin, as {code, stdout, stderr} (the
 * exit status and output the `alaya` process would have had), {lost} when a write was sent but
 * not answered (it may have run: it must not run again), or undefined: a miss, run `alaya`.
 * A read waits for the answer up to half of `timeoutMs`, leaving the rest to the fallback; a
 * write, or a call with `waitAll` (one that has no fallback: `hook turn`), waits all of it.
 * `unref`: the wait does not keep Node alive (a capture handed over, issue 33).
 */
export async function callDaemon(cfg, args, input, timeoutMs, { waitAll = false, unref = false } = {}) {
  // ALAYA_NO_SERVE and ALAYA_NOW make the Python client run in process; a --data-dir inside
  // `command` names a directory we cannot see
  if (!served(args) || process.env.ALAYA_NO_SERVE || process.env.ALAYA_NOW) return undefined;
  if (cfg.command.some((a) => a.startsWith("--data-dir"))) return undefined;
  let dir, path;
  try {
    dir = await resolveDataDir(cfg.dataDir);
    path = await trustedSocket(dir);
  } catch {
    return undefined; // no such directory or socket
  }
  if (!path) return undefined;
  const write = args[1] === "tool" && WRITES.has(args[2]);
  const request = {
    v: PROTOCOL,
    op: "run",
    argv: ["--data-dir", dir, ...args],
    stdin: Buffer.from(input, "utf8").toString("base64"),
    tty: false,
  };
  const { reply, sent, timedOut } = await exchange(path, `${JSON.stringify(request)}\n`, write || waitAll ? timeoutMs : Math.floor(timeoutMs / 2), unref);
  if (reply?.ok === true && Number.isInteger(reply.exit)) {
    return { code: reply.exit, stdout: decode(reply.stdout), stderr: decode(reply.stderr) };
  }
  // ok: false (stale, refused, restarting) means the daemon ran nothing
  if (write && sent && reply === undefined) {
    return { lost: timedOut ? `did not answer within ${timeoutMs} ms` : "closed the connection without an answer" };
  }
  return undefined;
}
