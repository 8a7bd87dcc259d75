// Plugin configuration: `plugins.entries.openclaw-alaya.config` (api.pluginConfig).
// OpenClaw validates it against openclaw.plugin.json; this module still never throws and
// falls back to defaults (with a warning) so a bad value cannot break an agent turn.
import { homedir } from "node:os";

export const CAPTURE_HOOKS = ["agent_end", "before_reset", "session_end", "before_compaction"];

// startTimeoutMs and toolTimeoutMs: one cold `alaya` (no daemon yet) took 1.1–1.8 s on an idle
// 2-core machine, 4.5 s beside four CPU-bound processes and 6.0 s with a dropped page cache too;
// 10 s covers that with room, and stays under OpenClaw's 15 s before_prompt_build handler budget
// and Active Memory's 15 s recall budget (README: "Timeouts").
export const DEFAULTS = Object.freeze({
  command: ["alaya"],
  dataDir: undefined,
  startTimeoutMs: 10000,
  // Capture (issue 33): the hook waits at most captureWaitMs for the acknowledgement (the warm
  // daemon's came in well under 1 s beside 8 CPU-bound processes, tests/e2e/test_openclaw_capture.py),
  // inside OpenClaw's 5 s cleanup window; the capture itself may run up to captureTimeoutMs, which
  // leaves a cold `alaya` its 30 s to start the daemon and hand the capture over.
  captureTimeoutMs: 60000,
  captureWaitMs: 3000,
  toolTimeoutMs: 10000,
  budgetTokens: 1200,
  refreshEveryTurns: 10,
  injectEnabled: true,
  captureEnabled: true,
  captureOn: CAPTURE_HOOKS,
  daemon: true,
  // Per-turn recall (issue 32): each later user message asks the warm daemon's `hook turn`. Only a
  // daemon answers it, never a cold `alaya` (1–6 s), and within turnTimeoutMs: a warm recall took
  // tens of ms (bench/recall.py), so 1 s leaves room for a busy machine and still never holds a
  // turn long. Unset budget, card count and similarity: alaya's hook.turn_* settings decide.
  turnRecall: true,
  turnTimeoutMs: 1000,
  turnBudgetTokens: undefined,
  turnMaxCards: undefined,
  turnMinSimilarity: undefined,
});

/** Split a command string like a (small) shell would: whitespace, '…', "…", backslash escapes. */
export function splitCommand(text) {
  const out = [];
  let cur = "";
  let inWord = false;
  let quote = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === "\\" && quote === '"' && i + 1 < text.length) cur += text[++i];
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === "\\" && i + 1 < text.length) {
      cur += text[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) out.push(cur);
      cur = "";
      inWord = false;
    } else {
      cur += ch;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unterminated quote in command ${JSON.stringify(text)}`);
  if (inWord) out.push(cur);
  return out;
}

export function expandHome(p) {
  if (typeof p !== "string") return p;
  if (p === "~") return homedir();
  if (p.startsWith("~/")) return homedir() + p.slice(1);
  return p;
}

function positiveInt(value, fallback, name, warn, { min = 1, max = Infinity } = {}) {
  if (value === undefined || value === null) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max) {
    warn(`config ${name}=${JSON.stringify(value)} is invalid; using ${fallback ?? "alaya's own setting"}`);
    return fallback;
  }
  return Math.floor(n);
}

function fraction(value, name, warn) {
  if (value === undefined || value === null) return undefined;
  const n = Number(value);
  if (typeof value === "boolean" || !Number.isFinite(n) || n < -1 || n > 1) {
    warn(`config ${name}=${JSON.stringify(value)} is invalid (a cosine, -1 to 1); using alaya's hook.turn_min_similarity`);
    return undefined;
  }
  return n;
}

/**
 * Resolve api.pluginConfig into a complete, frozen config object.
 * @param {object|undefined} raw
 * @param {(msg: string) => void} [warn]
 */
export function resolveConfig(raw, warn = () => {}) {
  const cfg = raw && typeof raw === "object" ? raw : {};
  let command = DEFAULTS.command;
  try {
    if (Array.isArray(cfg.command)) {
      if (cfg.command.length > 0 && cfg.command.every((s) => typeof s === "string" && s.length > 0)) {
        command = cfg.command.slice();
      } else {
        warn(`config command must be a non-empty array of non-empty strings; using ${JSON.stringify(DEFAULTS.command)}`);
      }
    } else if (typeof cfg.command === "string" && cfg.command.trim()) {
      command = splitCommand(cfg.command.trim());
    } else if (cfg.command !== undefined) {
      warn(`config command has an unsupported type; using ${JSON.stringify(DEFAULTS.command)}`);
    }
  } catch (err) {
    warn(`config command: ${err.message}; using ${JSON.stringify(DEFAULTS.command)}`);
    command = DEFAULTS.command;
  }
  command = [expandHome(command[0]), ...command.slice(1)];

  let captureOn = DEFAULTS.captureOn;
  if (Array.isArray(cfg.captureOn)) {
    const unknown = cfg.captureOn.filter((h) => !CAPTURE_HOOKS.includes(h));
    if (unknown.length) warn(`config captureOn: ignoring unknown hooks ${JSON.stringify(unknown)}`);
    captureOn = CAPTURE_HOOKS.filter((h) => cfg.captureOn.includes(h));
  }

  return Object.freeze({
    command: Object.freeze(command),
    dataDir: typeof cfg.dataDir === "string" && cfg.dataDir.trim() ? expandHome(cfg.dataDir.trim()) : undefined,
    startTimeoutMs: positiveInt(cfg.startTimeoutMs, DEFAULTS.startTimeoutMs, "startTimeoutMs", warn, { min: 100 }),
    captureTimeoutMs: positiveInt(cfg.captureTimeoutMs, DEFAULTS.captureTimeoutMs, "captureTimeoutMs", warn, { min: 100 }),
    captureWaitMs: positiveInt(cfg.captureWaitMs, DEFAULTS.captureWaitMs, "captureWaitMs", warn, { min: 0, max: 4500 }),
    toolTimeoutMs: positiveInt(cfg.toolTimeoutMs, DEFAULTS.toolTimeoutMs, "toolTimeoutMs", warn, { min: 100 }),
    budgetTokens: positiveInt(cfg.budgetTokens, DEFAULTS.budgetTokens, "budgetTokens", warn, { min: 0 }),
    refreshEveryTurns: positiveInt(cfg.refreshEveryTurns, DEFAULTS.refreshEveryTurns, "refreshEveryTurns", warn, { min: 0 }),
    injectEnabled: cfg.injectEnabled !== false,
    captureEnabled: cfg.captureEnabled !== false,
    captureOn: Object.freeze(captureOn),
    daemon: cfg.daemon !== false,
    turnRecall: cfg.turnRecall !== false,
    turnTimeoutMs: positiveInt(cfg.turnTimeoutMs, DEFAULTS.turnTimeoutMs, "turnTimeoutMs", warn, { min: 50, max: 10000 }),
    turnBudgetTokens: positiveInt(cfg.turnBudgetTokens, DEFAULTS.turnBudgetTokens, "turnBudgetTokens", warn, { min: 0, max: 8000 }),
    turnMaxCards: positiveInt(cfg.turnMaxCards, DEFAULTS.turnMaxCards, "turnMaxCards", warn, { min: 0, max: 20 }),
    turnMinSimilarity: fraction(cfg.turnMinSimilarity, "turnMinSimilarity", warn),
  });
}

/** argv for `alaya [--data-dir DIR] <args…>`. */
export function alayaArgv(cfg, args) {
  return [...cfg.command, ...(cfg.dataDir ? ["--data-dir", cfg.dataDir] : []), ...args];
}
