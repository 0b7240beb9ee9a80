/**
 * The cost of encryption at rest as a client sees it: point reads and single-row inserts per
 * second through Shoal's Hrana HTTP pipeline (the requests @libsql/client sends), on an encrypted
 * database (its key in `x-turso-encryption-key` on every request) against the same on a plain one,
 * in the same Shoal, in the same run. Runs alternate so drift on a shared machine hits both alike;
 * each side keeps its best run. The key cache is on (the default), so the key check and the keyed
 * open are paid once, not per request, and the ratio is the engine's page encryption plus the
 * per-request key match.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import { createLogger } from "../src/lib/logger.js";
import { startShoal } from "../src/main.js";
import { benchConfig } from "./config.js";
import { type BenchOptions, fmt, load, table } from "./harness.js";

const ROWS = 10_000;
const ADMIN = "bench-admin-token-0123456789";
const ids = Array.from({ length: 500 }, (_, i) => 1 + ((i * 7919) % ROWS));

const hrana = (sql: string, arg: string) =>
  JSON.stringify({
    requests: [
      { type: "execute", stmt: { sql, args: [{ type: "integer", value: arg }] } },
      { type: "close" },
    ],
  });

export interface HttpEncryptionResult {
  scenario: string;
  plain: number;
  encrypted: number;
  ratio: number;
}

export async function encryptionHttpBenchmark(opts: BenchOptions): Promise<HttpEncryptionResult[]> {
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-enc-http-"));
  const shoal = await startShoal(benchConfig(path.join(dir, "shoal"), ADMIN, { maxConnections: 64 }), {
    log: createLogger("silent"),
    announce: () => {},
  });
  const api = (p: string, body?: unknown) =>
    fetch(`${shoal.url}${p}`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then((r) => r.json() as Promise<Record<string, any>>);
  const key = randomBytes(32).toString("base64");
  await api("/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" });
  await api("/v1/organizations/admin/databases", { name: "plain", group: "default" });
  await api("/v1/organizations/admin/databases", {
    name: "sealed",
    group: "default",
    remote_encryption: { encryption_key: key, encryption_cipher: "aes256cbc" },
  });
  const sides = {
    plain: { jwt: "", headers: {} as Record<string, string> },
    encrypted: { jwt: "", headers: { "x-turso-encryption-key": key } as Record<string, string> },
  };
  for (const [side, db] of [
    ["plain", "plain"],
    ["encrypted", "sealed"],
  ] as const) {
    const jwt = (await api(`/v1/organizations/admin/databases/${db}/auth/tokens`)).jwt as string;
    sides[side].headers.authorization = `Bearer ${jwt}`;
    const c = createClient({
      url: `${shoal.url}/db/admin/${db}/`,
      authToken: jwt,
      ...(side === "encrypted" ? { remoteEncryptionKey: key } : {}),
    });
    await c.execute("CREATE TABLE kv (id INTEGER PRIMARY KEY, v TEXT)");
    await c.execute("CREATE TABLE log (id INTEGER PRIMARY KEY, v TEXT)");
    for (let from = 1; from <= ROWS; from += 1000) {
      const stmts = Array.from({ length: 1000 }, (_, i) => ({
        sql: "INSERT INTO kv (id, v) VALUES (?, ?)",
        args: [from + i, `value-${from + i}`],
      }));
      await c.batch(stmts, "write");
    }
    c.close();
  }
  const scenarios = [
    { name: "point read", bodies: ids.map((i) => hrana("SELECT v FROM kv WHERE id = ?", String(i))) },
    { name: "single-row insert", bodies: ids.map((i) => hrana("INSERT INTO log (v) VALUES (?)", String(i))) },
  ];
  const timing = opts.quick
    ? { concurrency: 16, warmupMs: 300, durationMs: 1500, rounds: 2 }
    : { concurrency: 32, warmupMs: 1000, durationMs: 4000, rounds: 3 };
  const results: HttpEncryptionResult[] = [];
  for (const s of scenarios) {
    const best = { plain: 0, encrypted: 0 };
    for (let round = 0; round < timing.rounds; round++) {
      const order = round % 2 === 0 ? (["plain", "encrypted"] as const) : (["encrypted", "plain"] as const);
      for (const side of order) {
        const db = side === "plain" ? "plain" : "sealed";
        const r = await load({
          url: `${shoal.url}/db/admin/${db}/v2/pipeline`,
          headers: sides[side].headers,
          bodies: s.bodies,
          ...timing,
        });
        if (r.errors > 0) throw new Error(`${s.name} (${side}): ${r.errors} errors`);
        best[side] = Math.max(best[side], r.perSecond);
      }
    }
    results.push({ scenario: s.name, ...best, ratio: best.encrypted / best.plain });
  }
  await shoal.close();
  await rm(dir, { recursive: true, force: true });

  console.log(
    "\nEncryption at rest through the data plane: Hrana HTTP requests per second, plain vs encrypted",
  );
  console.log(
    `(one Shoal, ${fmt(ROWS)}-row table, concurrency ${timing.concurrency}, ${timing.durationMs / 1000}s per run, best of ${timing.rounds}; ratio = encrypted / plain)\n`,
  );
  console.log(
    table(
      ["scenario", "plain req/s", "encrypted req/s", "ratio"],
      results.map((r) => [r.scenario, fmt(r.plain), fmt(r.encrypted), fmt(r.ratio, 2)]),
    ),
  );
  return results;
}
