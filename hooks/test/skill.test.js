import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CANONICAL = join(repo, "skills", "alaya", "SKILL.md");
// The top-level copy is for skill installers reading the repository root; the plugin's copy
// ships inside the OpenClaw plugin ("skills": ["skills"] in its manifest).
const COPIES = ["SKILL.md", "hooks/openclaw-alaya/skills/alaya/SKILL.md"];

for (const copy of COPIES) {
  test(`${copy} is an exact copy of skills/alaya/SKILL.md (the canonical source)`, () => {
    assert.equal(
      readFileSync(join(repo, copy), "utf8"),
      readFileSync(CANONICAL, "utf8"),
      `run: cp skills/alaya/SKILL.md ${copy}`,
    );
  });
}

test("skill frontmatter: name, description, requires bins alaya, no install spec OpenClaw could not run", () => {
  const text = readFileSync(CANONICAL, "utf8");
  const m = /^---\n([\s\S]*?)\n---\n/.exec(text);
  assert.ok(m, "frontmatter");
  const fm = m[1];
  assert.match(fm, /^name: alaya$/m);
  assert.match(fm, /^description: ".+"$/m);
  // metadata block: JSON5 (trailing commas) — strip them and parse as JSON.
  const meta = fm.slice(fm.indexOf("metadata:") + "metadata:".length).replace(/,(\s*[}\]])/g, "$1");
  const oc = JSON.parse(meta).openclaw;
  assert.deepEqual(oc.requires.bins, ["alaya"]);
  // `kind: "uv"` runs `uv tool install <package>` with an index name only (no path, no git URL),
  // and openclaw-alaya is not on the index yet: the body says how to install from a checkout.
  assert.equal(oc.install, undefined);
  assert.ok(text.includes("uv tool install ."), "skill says how to install alaya from a checkout");
  for (const word of ["CAUSES", "CAUSED_BY", "DEPENDS_ON", "SIMILAR_TO", "CONTRADICTS", "TEMPORAL_NEXT", "EXTRACTED_FROM",
    "alaya schema --relations", "--node-types", "--from-nodes", "h_distance_avg", "explorable", "alaya trace", "alaya link", "untrusted"]) {
    assert.ok(text.includes(word), `skill mentions ${word}`);
  }
});

test("hook pack HOOK.md declares its events and requires bins alaya", () => {
  const text = readFileSync(join(repo, "hooks", "alaya-capture", "HOOK.md"), "utf8");
  const fm = /^---\n([\s\S]*?)\n---\n/.exec(text)[1];
  assert.match(fm, /^name: alaya-capture$/m);
  const meta = fm.slice(fm.indexOf("metadata:") + "metadata:".length).replace(/,(\s*[}\]])/g, "$1");
  const oc = JSON.parse(meta).openclaw;
  assert.deepEqual(oc.events.slice(0, 2), ["command:new", "command:reset"]);
  assert.deepEqual(oc.requires.bins, ["alaya"]);
  // hooks' install kinds are `bundled`, `npm` and `git` (informational); none installs a Python CLI
  assert.equal(oc.install, undefined);
  assert.ok(text.includes("uv tool install ."), "HOOK.md says how to install alaya from a checkout");
});

test("cron.example.json is valid and runs `alaya cron run --once`", () => {
  const cron = JSON.parse(readFileSync(join(repo, "cron.example.json"), "utf8"));
  const text = JSON.stringify(cron);
  assert.ok(text.includes("alaya cron run --once"));
  assert.ok(text.includes("0 */4 * * *") && text.includes("30 3 * * *"));
});
