// openclaw-alaya: OpenClaw plugin entry (plain ESM, no build step, no imports from openclaw).
//
//  before_prompt_build (first turn of a session only)  → `alaya hook session-start --budget N`
//      stdin {agentId, sessionKey, sessionId, prompt, messages, workspaceDir}
//      stdout {"prependContext": "..."} → returned to OpenClaw (lands in the current user message)
//  agent_end / before_reset / session_end / before_compaction → `alaya hook session-end`
//      stdin {agentId, sessionKey, sessionId, reason, messages}
//
// Every call has a hard timeout; every failure is logged through api.logger and the turn goes on.
// Requires plugins.entries.openclaw-alaya.hooks.allowConversationAccess = true (OpenClaw silently
// blocks before_prompt_build and agent_end for non-bundled plugins otherwise).
import { registerAlaya, PLUGIN_ID } from "./lib/plugin.js";

export default {
  id: PLUGIN_ID,
  name: "Alaya memory",
  description: "Long-term memory through the alaya CLI: first-turn recall and session capture",
  register(api) {
    registerAlaya(api);
  },
};
