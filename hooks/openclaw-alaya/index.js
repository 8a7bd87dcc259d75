// openclaw-alaya: OpenClaw memory-slot plugin entry (plain ESM, no build step, no imports from
// openclaw). Everything goes through the `alaya` CLI, JSON on stdin and stdout:
//
//  tools memory_search, memory_get, memory_store, memory_forget → `alaya hook tool NAME`
//      (lib/tools.js); the system prompt's memory section (lib/capability.js)
//  before_prompt_build → `alaya hook session-start --budget N` on a session's first turn
//      (prependContext) and after compaction (appendSystemContext, cached) (lib/inject.js)
//  agent_end / before_reset / session_end / before_compaction → `alaya hook session-end`, handed
//      over: acknowledged once stored, distilled by the daemon after (lib/capture.js, issue 33)
//  the Gateway's service and a "full" registration → `alaya serve start` (lib/daemon.js)
//
// Every call has a hard timeout; every failure is logged through api.logger and the turn goes on.
// Requires plugins.entries.openclaw-alaya.hooks.allowConversationAccess = true (OpenClaw silently
// blocks before_prompt_build and agent_end for non-bundled plugins otherwise).
import { registerAlaya, PLUGIN_ID } from "./lib/plugin.js";

export default {
  id: PLUGIN_ID,
  name: "Alaya memory",
  description: "Long-term memory through the alaya CLI: memory tools, recall injection, session capture and a warm daemon",
  register(api) {
    registerAlaya(api);
  },
};
