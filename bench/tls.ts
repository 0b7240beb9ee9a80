/**
 * What Shoal's own TLS costs: point reads over 16 kept-alive connections against a plain-HTTP
 * node (the baseline), a TLS node reached by the database's hostname (the handshake names it, so
 * the shard owning it answers), and the same TLS node reached by path (the node's main process
 * decrypts and passes each request on to the shard). Server CPU per request counts the node and
 * its shards; the load runs in this process.
 */

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { selfSignedCertificate } from "../test/helpers/certificate.js";
import { type ShoalProcess, spawnShoal } from "../test/helpers/process.js";
import { type BenchOptions, fmt, table } from "./harness.js";
import { cpuSeconds } from "./load-spread.js";
import { processTree } from "./shards-servers.js";

const ADMIN = "bench-admin-token-0123456789";
const HOST = "bench-admin.localhost";
const CONNECTIONS = 16;

type Mode = { name: string; tls: boolean; byHostname: boolean };
const MODES: Mode[] = [
  { name: "plain HTTP, by path", tls: false, byHostname: false },
  { name: "TLS, by hostname", tls: true, byHostname: true },
  { name: "TLS, by path", tls: true, byHostname: false },
];

interface Client {
  call(
    method: string,
    p: string,
    token: string,
    body?: unknown,
    host?: string,
  ): Promise<{ status: number; text: string }>;
  close(): void;
}

function client(port: number, ca: string | undefined): Client {
  const mod = ca ? https : http;
  const agent = new (ca ? https.Agent : http.Agent)({ keepAlive: true, maxSockets: CONNECTIONS });
  return {
    call: (method, p, token, body, host) =>
      new Promise((resolve, reject) => {
        const data = body === undefined ? undefined : JSON.stringify(body);
        const headers = {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          ...(host ? { host } : {}),
        };
        const options = {
          host: "127.0.0.1",
          port,
          method,
          path: p,
          agent,
          headers,
          ...(ca ? { ca, servername: host ?? "localhost" } : {}),
        };
        const req = mod.request(options, (res) => {
          let text = "";
          res.on("data", (d: Buffer) => (text += d.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on("error", reject);
        req.end(data);
      }),
    close: () => agent.destroy(),
  };
}

const serverCpu = (pid: number) => processTree(pid).reduce((sum, p) => sum + (cpuSeconds(p) ?? 0), 0);

async function measure(shoal: ShoalProcess, mode: Mode, ca: string | undefined, ms: number) {
  const c = client(Number(new URL(shoal.url).port), ca);
  try {
    const q = (sql: string) => ({ requests: [{ type: "execute", stmt: { sql } }, { type: "close" }] });
    await c.call("POST", "/v1/organizations/admin/groups", ADMIN, {
      name: "default",
      location: "aws-us-east-1",
    });
    await c.call("POST", "/v1/organizations/admin/databases", ADMIN, { name: "bench", group: "default" });
    const jwt = JSON.parse(
      (await c.call("POST", "/v1/organizations/admin/databases/bench/auth/tokens", ADMIN)).text,
    ).jwt;
    await c.call(
      "POST",
      "/db/admin/bench/v2/pipeline",
      jwt,
      q("CREATE TABLE kv (id INTEGER PRIMARY KEY, v TEXT)"),
    );
    await c.call("POST", "/db/admin/bench/v2/pipeline", jwt, q("INSERT INTO kv VALUES (1, 'one')"));
    const read = q("SELECT v FROM kv WHERE id = 1");
    const run = async (forMs: number) => {
      let n = 0;
      const end = Date.now() + forMs;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (Date.now() < end) {
            const r = mode.byHostname
              ? await c.call("POST", "/v2/pipeline", jwt, read, HOST)
              : await c.call("POST", "/db/admin/bench/v2/pipeline", jwt, read);
            if (r.status !== 200) throw new Error(`${mode.name}: ${r.status} ${r.text}`);
            n++;
          }
        }),
      );
      return n;
    };
    await run(Math.min(1000, ms / 3));
    const cpu0 = serverCpu(shoal.proc.pid!);
    const t0 = performance.now();
    const n = await run(ms);
    const seconds = (performance.now() - t0) / 1000;
    return { perSecond: n / seconds, cpuUsPerRequest: ((serverCpu(shoal.proc.pid!) - cpu0) * 1e6) / n };
  } finally {
    c.close();
  }
}

export async function tlsBenchmark(o: BenchOptions): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(path.join(tmpdir(), "shoal-bench-tls-"));
  const { cert, key } = selfSignedCertificate({ dns: ["localhost", HOST] });
  await writeFile(path.join(dir, "cert.pem"), cert);
  await writeFile(path.join(dir, "key.pem"), key);
  const results: Record<string, { perSecond: number; cpuUsPerRequest: number }> = {};
  try {
    for (const mode of MODES) {
      const env: Record<string, string> = {
        SHOAL_DATA_DIR: path.join(dir, mode.name.replace(/\W+/g, "-")),
        SHOAL_ADMIN_TOKEN: ADMIN,
        SHOAL_LOG_LEVEL: "info",
      };
      if (mode.tls)
        Object.assign(env, {
          SHOAL_TLS_CERT: path.join(dir, "cert.pem"),
          SHOAL_TLS_KEY: path.join(dir, "key.pem"),
        });
      const shoal = await spawnShoal(env, 60_000);
      try {
        results[mode.name] = await measure(shoal, mode, mode.tls ? cert : undefined, o.quick ? 2000 : 6000);
      } finally {
        shoal.proc.kill("SIGTERM");
        await shoal.exited;
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const base = results[MODES[0]!.name]!;
  console.log(
    table(
      ["mode", "requests/s", "server CPU µs/request", "CPU vs plain"],
      MODES.map((m) => {
        const r = results[m.name]!;
        return [
          m.name,
          fmt(r.perSecond),
          fmt(r.cpuUsPerRequest),
          `${fmt(r.cpuUsPerRequest / base.cpuUsPerRequest, 2)}x`,
        ];
      }),
    ),
  );
  return { tls: results };
}
