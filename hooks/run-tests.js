// `node --test hooks/` on Node >= 22 no longer expands a directory argument: it runs the
// directory as a module, i.e. this file (package.json "main"). Import every *.test.js below
// hooks/ so the same command works on Node 20 (which expands the directory and never runs
// this file, whose name matches none of its test-file patterns) and on Node 22/24.
import { readdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = dirname(fileURLToPath(import.meta.url));

function findTests(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findTests(p));
    else if (entry.name.endsWith(".test.js")) out.push(p);
  }
  return out.sort();
}

for (const file of findTests(root)) await import(pathToFileURL(file).href);
