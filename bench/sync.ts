/**
 * Turso's sync protocol: the time and bytes of `POST .../pull-updates` for a one-row change on a
 * large database, against a full pull of the same database in the same run (the baseline: what
 * serving pulls from the database file instead of the frame log would cost every time). Measured
 * with raw requests (the client's exact bytes) and once through @tursodatabase/sync itself.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import { connect } from "@tursodatabase/sync";
import { createLogger } from "../src/lib/logger.js";
import { ProtobufWriter, readFields, splitDelimited } from "../src/lib/protobuf.js";
import { startShoal } from "../src/main.js";
import { benchConfig } from "./config.js";
import { type BenchOptions, fmt, table } from "./harness.js";

const ADMIN = "bench-admin-token-0123456789";

interface Pull {
  ms: number;
  bytes: number;
  pages: number;
  revision: string;
}

/** One pull over node:http (lighter than fetch, whose stream handling would dominate a 100 MB answer). */
async function pull(base: string, token: string, clientRevision = ""): Promise<Pull> {
  const body = new ProtobufWriter().string(3, clientRevision).message();
  const started = performance.now();
  const { status, data } = await new Promise<{ status: number; data: Buffer }>((resolve, reject) => {
    const req = request(
      `${base}/pull-updates`,
      { method: "POST", headers: { authorization: `Bearer ${token}`, "content-length": body.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, data: Buffer.concat(chunks) }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
  const ms = performance.now() - started;
  if (status !== 200) throw new Error(`pull-updates: ${status} ${data.toString()}`);
  const { messages } = splitDelimited(data);
  const rev = readFields(messages[0]!).find((f) => f.field === 1);
  const revision = rev && "bytes" in rev ? Buffer.from(rev.bytes).toString() : "";
  return { ms, bytes: data.length, pages: messages.length - 1, revision };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export async function syncBenchmark(opts: BenchOptions): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-sync-"));
  const shoal = await startShoal(benchConfig(dir, ADMIN), {
    log: createLogger("silent"),
    announce: () => {},
  });
  const call = async (p: string, body?: unknown) => {
    const r = await fetch(`${shoal.url}${p}`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (r.status !== 200) throw new Error(`${p}: ${r.status} ${await r.text()}`);
    return (await r.json()) as Record<string, any>;
  };
  await call("/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" });
  await call("/v1/organizations/admin/databases", { name: "big", group: "default" });
  const jwt = (await call("/v1/organizations/admin/databases/big/auth/tokens")).jwt as string;
  const c = createClient({ url: `${shoal.url}/db/admin/big/`, authToken: jwt });
  await c.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, body BLOB)");
  const targetMb = opts.quick ? 20 : 100;
  // About 4 KB a row, 10 MB a statement.
  for (let mb = 0; mb < targetMb; mb += 10) {
    await c.execute(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500) INSERT INTO docs (body) SELECT randomblob(4000) FROM n",
    );
  }
  const size = (
    await c.execute("SELECT page_count * page_size AS b FROM pragma_page_count, pragma_page_size")
  ).rows[0]!.b as number;
  const base = `${shoal.url}/db/admin/big`;
  const rounds = opts.quick ? 3 : 5;
  const full: Pull[] = [];
  const small: Pull[] = [];
  for (let i = 0; i < rounds; i++) {
    const whole = await pull(base, jwt);
    full.push(whole);
    await c.execute({ sql: "UPDATE docs SET body = randomblob(4000) WHERE id = ?", args: [1 + i * 997] });
    small.push(await pull(base, jwt, whole.revision));
  }

  // The real client: connect (a full pull into an empty file), then a pull of a one-row change.
  const local = path.join(dir, "local.db");
  let started = performance.now();
  const db = await connect({ path: local, url: base, authToken: jwt });
  const clientFullMs = performance.now() - started;
  const afterConnect = (await db.stats()).networkReceivedBytes;
  await c.execute("UPDATE docs SET body = randomblob(4000) WHERE id = 2");
  started = performance.now();
  await db.pull();
  const clientSmallMs = performance.now() - started;
  const clientSmallBytes = (await db.stats()).networkReceivedBytes - afterConnect;
  await db.close();
  c.close();
  await shoal.close();
  await rm(dir, { recursive: true, force: true });

  const f = { ms: median(full.map((p) => p.ms)), bytes: median(full.map((p) => p.bytes)) };
  const s = { ms: median(small.map((p) => p.ms)), bytes: median(small.map((p) => p.bytes)) };
  console.log(`\nSync pull-updates on a ${fmt(size / 1e6)} MB database (median of ${rounds} pulls each)`);
  console.log(
    table(
      ["pull", "ms", "bytes", "pages"],
      [
        ["full (baseline)", fmt(f.ms, 1), fmt(f.bytes), fmt(full[0]!.pages)],
        ["one-row change", fmt(s.ms, 2), fmt(s.bytes), fmt(small[0]!.pages)],
        ["ratio one-row / full", fmt(s.ms / f.ms, 4), fmt(s.bytes / f.bytes, 5), ""],
        ["@tursodatabase/sync connect (full)", fmt(clientFullMs, 1), fmt(afterConnect), ""],
        ["@tursodatabase/sync pull (one row)", fmt(clientSmallMs, 2), fmt(clientSmallBytes), ""],
        [
          "ratio client pull / connect",
          fmt(clientSmallMs / clientFullMs, 4),
          fmt(clientSmallBytes / afterConnect, 5),
          "",
        ],
      ],
    ),
  );
  return {
    syncPull: {
      databaseBytes: size,
      full: f,
      oneRow: s,
      timeRatio: s.ms / f.ms,
      bytesRatio: s.bytes / f.bytes,
      client: {
        connectMs: clientFullMs,
        connectBytes: afterConnect,
        pullMs: clientSmallMs,
        pullBytes: clientSmallBytes,
      },
    },
  };
}
