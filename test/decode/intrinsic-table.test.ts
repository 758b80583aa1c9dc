// The one intrinsics table: the VM's reserved names, the bindings and the docs all come from it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { INTRINSIC_TABLE, intrinsicName } from "../../src/decode/intrinsic-table.js";
import { withIntrinsicsTable } from "../../src/decode/intrinsic-docs.js";
import { bindIntrinsics, LiveBinding } from "../../src/decode/intrinsics.js";
import { KNOWN_INTRINSICS, parseSignature } from "../../src/vm/index.js";
import type { Engine } from "../../src/engine/types.js";

test("docs/decode-loop.md's intrinsics table is the one generated from the table", () => {
  const doc = readFileSync(new URL("../../../docs/decode-loop.md", import.meta.url), "utf8");
  assert.equal(doc, withIntrinsicsTable(doc), "run `npm run docs:intrinsics`");
  for (const spec of INTRINSIC_TABLE) assert.ok(doc.includes(`\`${spec.signature}\``));
});

test("each signature parses as C, to the name the table gives it, once", () => {
  const names = INTRINSIC_TABLE.map((spec) => {
    const name = intrinsicName(spec);
    assert.equal(parseSignature(spec.signature).name, name);
    return name;
  });
  assert.equal(new Set(names).size, names.length);
  assert.deepEqual([...KNOWN_INTRINSICS], names);
});

test("binding a sequence registers exactly the table's intrinsics", () => {
  // Binding touches no engine state; calls would, and those are tested against the real engine.
  const registry = bindIntrinsics(new LiveBinding({} as Engine, 0));
  assert.deepEqual(registry.names(), [...KNOWN_INTRINSICS]);
});
