// Sessions the plugin leaves alone: Active Memory's hidden recall sub-agent. In OpenClaw 2026.9.6
// it runs as session key "<parent key>:active-memory:<hex>", session id "active-memory-…",
// trigger "manual", and fires before_prompt_build and agent_end like any run. Its prompt is
// OpenClaw's recall instructions plus the user's message, not a conversation: injecting memory
// there spends its recall budget on what its tools return anyway, and capturing it would store
// the recall prompt and the recalled text as new memory (a recall loop).
export function isHiddenRecallSession(ctx) {
  const key = typeof ctx?.sessionKey === "string" ? ctx.sessionKey : "";
  const id = typeof ctx?.sessionId === "string" ? ctx.sessionId : "";
  return key.includes(":active-memory:") || id.startsWith("active-memory-");
}
