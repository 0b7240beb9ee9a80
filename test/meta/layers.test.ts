import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(import.meta.dirname, "../../src");

/** house-style.md: data flows api/dataplane -> domain -> store/engine; nothing below imports upward. */
const FORBIDDEN: Record<string, string[]> = {
  api: ["store", "engine", "dataplane", "replication", "backup"],
  dataplane: ["api", "store", "backup"],
  domain: ["api", "dataplane"],
  store: ["domain", "api", "dataplane", "engine", "replication", "backup"],
  engine: ["domain", "api", "store", "dataplane", "replication", "backup"],
  lib: ["domain", "api", "store", "engine", "dataplane", "replication", "backup"],
  cli: ["domain", "api", "store", "engine", "dataplane", "replication", "backup"],
  // Backups sit beside the engine: they read frame logs and files, and know nothing of tenants.
  backup: ["domain", "api", "store", "dataplane", "replication", "cli"],
};
const FORBIDDEN_PACKAGES: Record<string, RegExp> = {
  api: /^(libsql|kysely|pg)$/,
  domain: /^(hono|@hono\/.*|libsql|pg)$/,
};

function* files(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (p.endsWith(".ts")) yield p;
  }
}

function imports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+["']([^"']+)["']/gm)].map((m) => m[1]!);
}

describe("module layering", () => {
  it("keeps every import pointing down the layers", () => {
    const violations: string[] = [];
    for (const file of files(SRC)) {
      const layer = path.relative(SRC, file).split(path.sep)[0]!;
      for (const spec of imports(file)) {
        if (spec.startsWith(".")) {
          const target = path.relative(SRC, path.resolve(path.dirname(file), spec)).split(path.sep)[0]!;
          if (FORBIDDEN[layer]?.includes(target)) violations.push(`${path.relative(SRC, file)} -> ${spec}`);
        } else if (FORBIDDEN_PACKAGES[layer]?.test(spec)) {
          violations.push(`${path.relative(SRC, file)} -> ${spec}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it("reads process.env only in the two composition roots (main.ts, cli/main.ts) and config.ts", () => {
    const readers = [...files(SRC)]
      .filter((f) => readFileSync(f, "utf8").includes("process.env"))
      .map((f) => path.relative(SRC, f))
      .sort();
    expect(readers.filter((f) => !["main.ts", "config.ts", path.join("cli", "main.ts")].includes(f))).toEqual(
      [],
    );
  });
});
