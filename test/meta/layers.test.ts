import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(import.meta.dirname, "../../src");
const DOMAIN = path.join(SRC, "domain");

/**
 * Everything that must not be imported from below: the process's entry and its assembly, and the
 * node's shard processes (their supervision, and the composition of a shard).
 */
const TOP = ["start", "main.ts", "shards"];
/**
 * house-style.md: data flows api/dataplane -> domain -> store/engine; nothing below imports upward.
 * The hosting services implement ports the domain declares, beside it; replication likewise; only
 * src/start (and main.ts above it) puts the layers together.
 */
const FORBIDDEN: Record<string, string[]> = {
  api: ["store", "engine", "dataplane", "replication", "hosting", "backup", ...TOP],
  dataplane: ["api", "store", "replication", "backup", ...TOP],
  replication: ["api", "dataplane", "store", "hosting", "backup", ...TOP],
  hosting: ["api", "dataplane", "replication", ...TOP],
  domain: ["api", "dataplane", "replication", "hosting", "backup", ...TOP],
  store: ["domain", "api", "dataplane", "engine", "replication", "hosting", "backup", ...TOP],
  engine: ["domain", "api", "store", "dataplane", "replication", "hosting", "backup", ...TOP],
  lib: ["domain", "api", "store", "engine", "dataplane", "replication", "hosting", "backup", ...TOP],
  cli: ["domain", "api", "store", "engine", "dataplane", "replication", "hosting", "backup", ...TOP],
  // Backups sit beside the engine: they read frame logs and files, and know nothing of tenants.
  backup: ["domain", "api", "store", "dataplane", "replication", "cli", "hosting", ...TOP],
  // Metrics know only their own registry: the parts feed them through hooks wired in src/start.
  metrics: [
    "domain",
    "api",
    "store",
    "engine",
    "dataplane",
    "replication",
    "hosting",
    "backup",
    "cli",
    ...TOP,
  ],
  start: ["main.ts", "cli"],
  // The shard processes: assembled like a node (src/start), which starts and feeds them.
  shards: ["api", "cli", "start", "main.ts"],
};
const FORBIDDEN_PACKAGES: Record<string, RegExp> = {
  api: /^(libsql|kysely|pg)$/,
  domain: /^(hono|@hono\/.*|libsql|pg)$/,
};

/**
 * The domain's areas and the areas each may import (src/domain/README.md): `core` <- `cluster`,
 * `plans`, `data-access` <- `accounts`, `groups` <- `databases`.
 */
const AREAS: Record<string, string[]> = {
  core: [],
  cluster: ["core"],
  plans: ["core"],
  "data-access": ["core"],
  accounts: ["core", "plans", "cluster"],
  groups: ["core", "plans", "cluster"],
  databases: ["core", "plans", "cluster", "groups"],
};

/** A typed error built in place; the layers below keep their messages in one `errors.ts` each. */
const INLINE_ERROR =
  /\bnew (Invalid|Unauthenticated|Forbidden|NotFound|Conflict|LimitExceeded|QuotaExceeded|Unprocessable|Unavailable|Misdirected|BadGateway|PayloadTooLarge)Error\(/;
const ONE_FACTORY_PER_AREA = ["domain", "hosting", "api"];

function* files(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (/\.(ts|js)$/.test(p)) yield p;
  }
}

/** Import and re-export specifiers of a file, `import type` included. */
function imports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+["']([^"']+)["']/gm)].map((m) => m[1]!);
}

/** A relative specifier as the file it names (`./x.js` is `./x.ts` when that exists). */
function resolve(file: string, spec: string): string {
  const p = path.resolve(path.dirname(file), spec);
  return p.endsWith(".js") && existsSync(`${p.slice(0, -3)}.ts`) ? `${p.slice(0, -3)}.ts` : p;
}

const rel = (f: string) => path.relative(SRC, f);
const layerOf = (f: string) => rel(f).split(path.sep)[0]!;

/** Groups of files that import each other, directly or through others (Tarjan's algorithm). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) {
      onStack.delete(w);
      group.push(w);
    }
    if (group.length > 1 || graph.get(v)!.includes(v)) out.push(group.map(rel).sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe("module layering", () => {
  it("keeps every import pointing down the layers", () => {
    const violations: string[] = [];
    for (const file of files(SRC)) {
      const layer = layerOf(file);
      for (const spec of imports(file)) {
        if (spec.startsWith(".")) {
          const target = layerOf(resolve(file, spec));
          if (FORBIDDEN[layer]?.includes(target)) violations.push(`${rel(file)} -> ${spec}`);
        } else if (FORBIDDEN_PACKAGES[layer]?.test(spec)) {
          violations.push(`${rel(file)} -> ${spec}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it("has no import circle, type-only imports included", () => {
    const graph = new Map(
      [...files(SRC)].map((f) => [
        f,
        imports(f)
          .filter((s) => s.startsWith("."))
          .map((s) => resolve(f, s)),
      ]),
    );
    expect(circles(graph)).toEqual([]);
  });

  it("reads process.env only in the composition roots (main.ts, cli/main.ts, a shard's entry) and config.ts", () => {
    const roots = ["main.ts", "config.ts", path.join("cli", "main.ts"), path.join("shards", "shard-main.ts")];
    const readers = [...files(SRC)]
      .filter((f) => readFileSync(f, "utf8").includes("process.env"))
      .map((f) => path.relative(SRC, f))
      .sort();
    expect(readers.filter((f) => !roots.includes(f))).toEqual([]);
  });
});

describe("domain areas", () => {
  it("keeps every domain file in an area folder whose README says what lives there", () => {
    const stray = [...files(DOMAIN)].filter((f) => !(path.relative(DOMAIN, f).split(path.sep)[0]! in AREAS));
    const unexplained = Object.keys(AREAS).filter((a) => !existsSync(path.join(DOMAIN, a, "README.md")));
    expect({ stray: stray.map(rel), unexplained }).toEqual({ stray: [], unexplained: [] });
  });

  it("lets an area import only the areas below it", () => {
    const violations: string[] = [];
    for (const file of files(DOMAIN)) {
      const area = path.relative(DOMAIN, file).split(path.sep)[0]!;
      for (const spec of imports(file).filter((s) => s.startsWith("."))) {
        const target = path.relative(DOMAIN, resolve(file, spec)).split(path.sep)[0]!;
        if (target === ".." || target === area) continue;
        if (!AREAS[area]?.includes(target)) violations.push(`${rel(file)} -> ${spec}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("tells verbs, transaction helpers and services apart", () => {
    const misplaced: string[] = [];
    for (const file of [...files(DOMAIN), ...files(path.join(SRC, "hosting"))]) {
      const text = readFileSync(file, "utf8");
      const tx = file.endsWith("-tx.ts");
      for (const m of text.matchAll(
        /^export (?:async )?function (\w+)(?:<[^>]*>)?\(\s*(\w+)\s*:\s*(\w+)/gm,
      )) {
        const [, name, first, type] = m;
        // A transaction helper takes the open transaction first and lives in a *-tx.ts file.
        if ((type === "Repos") !== tx) misplaced.push(`${rel(file)}: ${name}(${first}: ${type}, ...)`);
        // Verbs take the request context first; none lives among the run-time services.
        if (first === "ctx" && layerOf(file) === "hosting") misplaced.push(`${rel(file)}: ${name}`);
      }
      // A transaction helper runs inside its caller's transaction and never opens one.
      if (tx && /\.(read|write)\(/.test(text)) misplaced.push(`${rel(file)} opens a transaction`);
    }
    expect(misplaced).toEqual([]);
  });

  it("takes every error message of the domain, the hosting services and the API from an errors.ts", () => {
    const inline = ONE_FACTORY_PER_AREA.flatMap((d) => [...files(path.join(SRC, d))])
      .filter((f) => path.basename(f) !== "errors.ts" && INLINE_ERROR.test(readFileSync(f, "utf8")))
      .map(rel);
    expect(inline).toEqual([]);
  });
});
