// The plugin's commands in OpenClaw's CLI (issue 33), both answered by the memory runtime
// (runtime.js), so what they print is what the host's own memory surfaces see:
//  - `openclaw alaya status|search`: the plugin's own namespace, always there (declared in the
//    manifest's cliCommands, as memory-lancedb's `ltm` and mem0's `mem0` are);
//  - `openclaw memory status|search`: memory-core's namespace, registered only where memory-core
//    is disabled (what `alaya openclaw install` sets while alaya holds the slot). With memory-core
//    enabled it owns `memory` and describes its own empty index; two owners of one command are a
//    registration error in OpenClaw.
import { makeManager } from "./runtime.js";

export const CLI_ROOT = "alaya";

/** One answer on stdout: OpenClaw routes the console of plugin code to stderr in its CLI. */
export function print(text) {
  process.stdout.write(`${text}\n`);
}

/** Whether this config leaves the `memory` command free: memory-core disabled by the user. */
export function memoryCommandFree(config) {
  return config?.plugins?.entries?.["memory-core"]?.enabled === false;
}

export function renderHits(hits) {
  if (hits.length === 0) return "No matches.";
  return hits.map((h) => `${h.score.toFixed(3)} ${h.path}\n${h.snippet}`).join("\n\n");
}

export function renderStatus(status) {
  const c = status.custom ?? {};
  const lines = [
    `Memory (alaya): ${status.dbPath ?? "?"}`,
    `Sessions: ${c.sessions ?? 0} · cards: ${c.cards ?? 0} · links: ${c.links ?? 0}` +
      (c.pendingSessions ? ` · ${c.pendingSessions} session(s) waiting to be distilled` : ""),
    `Embedder: ${status.model ?? "?"} · distiller: ${c.distiller ?? "?"}`,
  ];
  if (c.tiers) lines.push(`Tiers: ${Object.entries(c.tiers).map(([k, v]) => `${k} ${v}`).join(" · ")}`);
  if (status.lastSyncError) lines.push(`Error: ${status.lastSyncError}`);
  return lines.join("\n");
}

/** status and search under one command group; `ctx` is the plugin's {cfg, call, log}. */
function addCommands(group, { cfg, call, log }) {
  const manager = (agent) => makeManager(cfg, call, agent ?? "main", log);
  const fail = (err) => {
    console.error(`alaya: ${err?.cliMessage ?? err?.message ?? err}`);
    process.exitCode = 1;
  };
  group
    .command("status")
    .description("Describe alaya's store: sessions, cards, links, embedder, distiller")
    .option("--agent <id>", "Agent id", "main")
    .option("--json", "Print JSON")
    .action(async (opts) => {
      const status = (await manager(opts.agent)).status();
      print(opts.json ? JSON.stringify(status, null, 2) : renderStatus(status));
      if (status.lastSyncError) process.exitCode = 1;
    });
  group
    .command("search")
    .description("Search alaya's memory cards")
    .argument("[query]", "Search query")
    .option("--query <text>", "Search query (alternative to the positional argument)")
    .option("--agent <id>", "Agent id", "main")
    .option("--max-results <n>", "Max results", (v) => Number.parseInt(v, 10))
    .option("--json", "Print JSON")
    .action(async (query, opts) => {
      const q = opts.query ?? query;
      if (!q) return fail(new Error("missing search query"));
      try {
        const hits = await (await manager(opts.agent)).search(q, { maxResults: opts.maxResults });
        print(opts.json ? JSON.stringify({ results: hits }, null, 2) : renderHits(hits));
      } catch (err) {
        fail(err);
      }
    });
}

export function registerCli(api, cfg, call, log) {
  if (typeof api.registerCli !== "function") return;
  const ctx = { cfg, call, log };
  api.registerCli(
    ({ program }) => addCommands(program.command(CLI_ROOT).description("Alaya memory: status and search"), ctx),
    { descriptors: [{ name: CLI_ROOT, description: "Alaya memory: status and search", hasSubcommands: true }] },
  );
  if (!memoryCommandFree(api.config)) return;
  api.registerCli(
    ({ program }) => addCommands(program.command("memory").description("Search and inspect memory (alaya holds the memory slot)"), ctx),
    { descriptors: [{ name: "memory", description: "Search and inspect memory (alaya)", hasSubcommands: true }] },
  );
}
