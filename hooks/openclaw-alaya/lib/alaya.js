// One call of the alaya CLI for a plugin registration: argv from the config, JSON on stdin, the
// JSON object on stdout back. Runs through OpenClaw's own runner when the host lends one.
import { alayaArgv } from "./config.js";
import { runCommand, parseJsonObject, lastLine } from "./run.js";

function runtimeRunner(api) {
  const system = api.runtime?.system;
  if (typeof system?.runCommandWithTimeout !== "function") return undefined;
  return (...args) => system.runCommandWithTimeout(...args);
}

/**
 * `call(args, payload, timeoutMs)` → the CLI's JSON object. Rejects on any failure with an Error
 * describing it; when the CLI itself exited non-zero, `err.cliMessage` is its one-line error.
 */
export function alayaCaller(api, cfg) {
  return async (args, payload, timeoutMs) => {
    const res = await runCommand(alayaArgv(cfg, args), {
      input: JSON.stringify(payload),
      timeoutMs,
      runtimeRun: runtimeRunner(api),
    });
    if (!res.ok) {
      const cliMessage = res.code > 0 ? lastLine(res.stderr) : "";
      throw Object.assign(new Error(res.error), { cliMessage: cliMessage || undefined });
    }
    return parseJsonObject(res.stdout);
  };
}
