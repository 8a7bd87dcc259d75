// The memory slot's search runtime (issue 33): what OpenClaw's own memory surfaces ask of the
// slot owner — `openclaw status`, doctor's memory check, the Memory settings page and
// `openclaw memory search/status` (lib/cli.js) — answered from alaya's store.
//
// OpenClaw's contract (MemoryPluginRuntime / MemorySearchManager, dist/plugin-entry-*.d.ts of
// 2026.9.6): getMemorySearchManager({cfg, agentId, purpose}) → {manager}; a manager's search()
// is async, its status() is synchronous, so the status is fetched (`alaya status --json`) when
// the manager is made. A hit is {path, startLine, endLine, score, snippet, source}; alaya's hits
// are cards, never transcripts (source "memory"), and a card's path is `alaya:<card id>`, which
// readFile resolves with memory_get. No authorizeSearchHits: it is for runtimes that return
// session-transcript hits, and without it the host withholds only those (fail closed); every
// alaya hit is a card, already scoped to the requesting agent by `hook tool memory_search`.

const SEARCH_TIMEOUT_FLOOR_MS = 1000;
export const CARD_PATH_PREFIX = "alaya:";

/** One alaya card as OpenClaw's MemorySearchResult. */
export function hitOf(node) {
  const snippet = [node.title, node.content].filter(Boolean).join("\n").slice(0, 700);
  return {
    path: `${CARD_PATH_PREFIX}${node.card_id}`,
    startLine: 1,
    endLine: 1,
    score: typeof node.score === "number" ? node.score : 0,
    snippet,
    source: "memory",
    ...(node.origin ? { originClass: node.origin } : {}),
  };
}

/** alaya's `status --json` in the shape of OpenClaw's MemoryProviderStatus. */
export function providerStatus(status, dataDir) {
  const cards = status?.cards ?? 0;
  return {
    backend: "builtin", // the only value the host's type admits; `custom.engine` says what it is
    provider: "alaya",
    model: status?.embedder,
    files: status?.sessions ?? 0,
    chunks: cards,
    dirty: (status?.pending_sessions ?? 0) > 0 || (status?.pending_embeddings ?? 0) > 0,
    workspaceDir: status?.data_dir ?? dataDir,
    dbPath: status?.data_dir ?? dataDir,
    sources: ["memory"],
    sourceCounts: [{ source: "memory", files: status?.sessions ?? 0, chunks: cards }],
    fts: { enabled: true, available: true },
    vector: { enabled: true, available: true, storeAvailable: true, semanticAvailable: true, index: { state: cards ? "complete" : "empty" } },
    custom: {
      engine: "alaya",
      sessions: status?.sessions ?? 0,
      cards,
      links: status?.links ?? 0,
      pendingSessions: status?.pending_sessions ?? 0,
      distiller: status?.distiller,
      tiers: status?.tiers,
    },
  };
}

/** A manager for one agent: search and readFile through `alaya hook tool`, status fetched now. */
export async function makeManager(cfg, call, agentId, log) {
  let status;
  try {
    status = await call(["status", "--json"], {}, cfg.toolTimeoutMs);
  } catch (err) {
    log.warn(`memory runtime: alaya status failed: ${err?.cliMessage ?? err?.message ?? err}`);
    status = { error: err?.cliMessage ?? err?.message ?? String(err) };
  }
  const tool = (name, params) => call(["hook", "tool", name], { agentId, params }, Math.max(SEARCH_TIMEOUT_FLOOR_MS, cfg.toolTimeoutMs));
  return {
    async search(query, opts = {}) {
      const params = { query };
      if (opts.maxResults) params.maxResults = opts.maxResults;
      const out = await tool("memory_search", params);
      const hits = (out?.details?.nodes ?? []).map(hitOf);
      return typeof opts.minScore === "number" ? hits.filter((h) => h.score >= opts.minScore) : hits;
    },
    async readFile({ relPath }) {
      const id = String(relPath ?? "").replace(CARD_PATH_PREFIX, "");
      const out = await tool("memory_get", { ids: [id] });
      const text = typeof out?.text === "string" ? out.text : "";
      return text ? { status: "ok", text, path: relPath } : { status: "not_found", text: "", path: relPath };
    },
    status: () => ({ ...providerStatus(status, cfg.dataDir), ...(status?.error ? { lastSyncError: status.error } : {}) }),
    probeEmbeddingAvailability: async () => ({ ok: !status?.error, ...(status?.error ? { error: status.error } : {}) }),
    probeVectorAvailability: async () => !status?.error,
    close: async () => {},
  };
}

/** OpenClaw's MemoryPluginRuntime for the slot. */
export function memoryRuntime(cfg, call, log) {
  return {
    async getMemorySearchManager({ agentId } = {}) {
      try {
        return { manager: await makeManager(cfg, call, agentId, log) };
      } catch (err) {
        return { manager: null, error: err?.message ?? String(err) };
      }
    },
    resolveMemoryBackendConfig: () => ({ backend: "builtin" }),
    async closeMemorySearchManager() {},
    async closeAllMemorySearchManagers() {},
  };
}
