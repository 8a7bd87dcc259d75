import { test } from "node:test";
import assert from "node:assert/strict";
import { isHiddenRecallSession } from "../lib/sessions.js";

test("Active Memory's hidden recall session is recognised by its key or id, nothing else is", () => {
  assert.equal(isHiddenRecallSession({ sessionKey: "agent:main:main:active-memory:5786f1c6f62c" }), true);
  assert.equal(isHiddenRecallSession({ sessionId: "active-memory-mx42xasq-99f7f242" }), true);
  for (const ctx of [{ sessionKey: "agent:main:main", sessionId: "4fb41a3f" }, { sessionKey: "agent:main:explicit:active-memory" },
    {}, undefined]) {
    assert.equal(isHiddenRecallSession(ctx), false, JSON.stringify(ctx));
  }
});
