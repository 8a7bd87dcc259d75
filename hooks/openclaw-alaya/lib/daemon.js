// The alaya daemon (`alaya serve`), so that hook and tool calls find a warm engine instead of
// paying a cold start (seconds on a busy machine) each time.
//  - With the Gateway: a service whose start runs `alaya serve start`. Its stop leaves the
//    daemon running (issue 33): the session-end captures of a Gateway shutting down were handed
//    to it a moment before and are distilled in its background queue; it exits by itself after
//    its idle time (serve.idle_exit_minutes), and stopping nothing keeps the shutdown quick.
//  - In `openclaw agent --local` no service starts, so a registration in "full" mode (the live
//    runtime; discovery modes must not start processes) starts it too, once per process and
//    fire-and-forget: it warms up while OpenClaw prepares the run.
// Neither waits for the daemon nor throws: `alaya` clients also start it on a miss and wait for
// one that is warming up. The daemon exits by itself after its idle time.
import { alayaArgv } from "./config.js";
import { spawnWithTimeout } from "./run.js";
import { state } from "./state.js";

export const DAEMON_SERVICE_ID = "openclaw-alaya-daemon";
// `alaya serve start` waits up to 60 s for the daemon to answer.
const START_TIMEOUT_MS = 65_000;

/** Run `alaya serve start` once per process and data directory; never awaited by the caller. */
function startDaemon(cfg, log) {
  const argv = alayaArgv(cfg, ["serve", "start"]);
  const key = JSON.stringify(argv);
  const { daemons } = state();
  if (daemons.has(key)) return;
  daemons.add(key);
  spawnWithTimeout(argv, { timeoutMs: START_TIMEOUT_MS, unref: true }).then((res) => {
    if (res.ok) log.debug(`alaya serve start: ${res.stdout.trim()}`);
    else log.warn(`alaya daemon not started: ${res.error}`);
  });
}

/** The Gateway stops: a later start (a restart in this process) runs `serve start` again. */
function forgetDaemon(cfg) {
  state().daemons.delete(JSON.stringify(alayaArgv(cfg, ["serve", "start"])));
}

export function registerDaemon(api, cfg, log) {
  if (!cfg.daemon) return;
  if (typeof api.registerService === "function") {
    api.registerService({
      id: DAEMON_SERVICE_ID,
      start: () => startDaemon(cfg, log),
      stop: () => forgetDaemon(cfg),
    });
  }
  if (api.registrationMode === "full") startDaemon(cfg, log);
}
