// What the plugin reads from, and sends on, OpenClaw's session messages.

// The block `alaya hook session-start` returns; on the first turn it lands in the user message.
const MEMORY_BLOCK = /<alaya-memory[\s>]/i;

/** First turn of a session: no earlier user/assistant message in the history. */
export function isFirstTurn(messages) {
  if (!Array.isArray(messages)) return undefined; // unknown
  return !messages.some((m) => m && (m.role === "user" || m.role === "assistant"));
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => (b && typeof b.text === "string" ? b.text : "")).join("\n");
}

/** Whether a user message in the history still carries our memory block (compaction drops it). */
export function hasMemoryBlock(messages) {
  if (!Array.isArray(messages)) return false;
  return messages.some((m) => m && m.role === "user" && MEMORY_BLOCK.test(textOf(m.content)));
}

// A card cited in one of our blocks: "- [card-id] …" (bridge/inject.py's template, bridge/turn.py).
const CITED_CARD = /^- \[([^\]\s]+)\]/gm;

/** The card ids a memory block's text cites. */
export function citedCards(text) {
  return typeof text === "string" ? [...text.matchAll(CITED_CARD)].map((m) => m[1]) : [];
}

/** The card ids cited by the memory blocks still in the history's user messages. */
export function historyCards(messages) {
  if (!Array.isArray(messages)) return [];
  return messages
    .filter((m) => m && m.role === "user")
    .map((m) => textOf(m.content))
    .filter((t) => MEMORY_BLOCK.test(t))
    .flatMap(citedCards);
}

// Images are kept as a marker only: base64 payloads can be megabytes and alaya stores text.
function stripBlock(block) {
  if (block && typeof block === "object" && block.type === "image") {
    const { data, source, ...rest } = block;
    return { ...rest, omitted: true };
  }
  return block;
}

/** Messages as sent to alaya: OpenClaw message objects, minus binary image data. */
export function sanitizeMessages(messages) {
  if (!Array.isArray(messages)) return [];
  return messages
    .filter((m) => m && typeof m === "object")
    .map((m) => (Array.isArray(m.content) ? { ...m, content: m.content.map(stripBlock) } : m));
}
