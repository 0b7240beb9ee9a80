/**
 * A node whose PostgreSQL store goes away while management calls arrive: each call is answered
 * 503 `STORE_UNAVAILABLE` (refused connections) or within SHOAL_STORE_TIMEOUT_MS of the store
 * going silent (a partition), nothing is half made, and the process lives on and serves again once
 * the store is back. Before, a connection reset under a running call ended the process.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient as createSqlClient } from "@libsql/client";
import { createClient } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, client } from "../helpers/http.js";
import { rows } from "../helpers/nodes.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { killAndRemove, type ShoalProcess, spawnShoal } from "../helpers/process.js";
import { TcpProxy } from "../helpers/tcp-proxy.js";

const TOKEN = "store-outage-admin-token-1234567890";
const STORE_TIMEOUT_MS = 1000;

let pg: PostgresServer;
let proxy: TcpProxy;
let node: ShoalProcess;
let dataDir: string;
let dbToken: string;
let dbUrl: string;

const api = () => client(node.url, TOKEN);
const names = async () =>
  ((await api().get("/v1/organizations/admin/databases")).body.databases as Array<{ Name: string }>).map(
    (d) => d.Name,
  );

beforeAll(async () => {
  pg = await startPostgres();
  const url = new URL(await pg.newDatabase());
  proxy = await TcpProxy.start(Number(url.port));
  url.port = String(proxy.port);
  dataDir = await mkdtemp(path.join(tmpdir(), "shoal-store-outage-"));
  node = await spawnShoal({
    SHOAL_DATA_DIR: dataDir,
    SHOAL_METADATA_URL: url.toString(),
    SHOAL_STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS),
    SHOAL_ADMIN_TOKEN: TOKEN,
  });
  expect(
    (await api().post("/v1/organizations/admin/groups", { name: "g", location: "aws-us-east-1" })).status,
  ).toBe(200);
  const made = await api().post("/v1/organizations/admin/databases", { name: "kept", group: "g" });
  expect(made.status).toBe(200);
  dbToken = (await api().post("/v1/organizations/admin/databases/kept/auth/tokens")).body.jwt;
  dbUrl = `${node.url}/db/admin/kept/`;
  await rows(dbUrl, dbToken, "SELECT 1");
}, 120_000);
afterAll(async () => {
  await killAndRemove(node, dataDir);
  await proxy?.close();
  await pg?.stop();
});

describe("a node whose store goes away", () => {
  for (const [mode, what] of [
    ["reset", "refuses connections"],
    ["blackhole", "stops answering"],
  ] as const) {
    it(`answers management calls 503 STORE_UNAVAILABLE while the store ${what}, makes nothing, and lives on`, async () => {
      const before = await names();
      proxy.cut(mode);
      try {
        const started = Date.now();
        const [list, create, org] = await Promise.all([
          api().get("/v1/organizations/admin/databases"),
          api().post("/v1/organizations/admin/databases", { name: `new-${mode}`, group: "g" }),
          api().get("/v1/organizations/admin"),
        ]);
        for (const r of [list, create, org]) {
          expect(r.status, r.text).toBe(503);
          expect(r.body.code).toBe("STORE_UNAVAILABLE");
          expect(r.body.error).toMatch(
            /^the control-plane store can't be reached \(.+\): nothing was changed/,
          );
        }
        // As the official client shows it: the status and the message, nothing half made.
        const turso = createClient({ org: "admin", token: TOKEN, baseUrl: `${node.url}/v1/` });
        await expect(turso.databases.create(`sdk-${mode}`, { group: "g" })).rejects.toMatchObject({
          status: 503,
          message: expect.stringContaining("the control-plane store can't be reached"),
        });
        // A silent store: a query's timeout, or making a connection's (as long), then the answer.
        expect(Date.now() - started).toBeLessThan(STORE_TIMEOUT_MS * 6);
        // Liveness holds (restarting the node would not help); readiness says what is wrong.
        expect((await call(node.url, "GET", "/health")).status).toBe(200);
        expect((await call(node.url, "GET", "/health/ready")).status).toBe(503);
        // The database's own data plane goes on from the records read last.
        expect(await rows(dbUrl, dbToken, "SELECT 41 + 1")).toEqual([[42]]);
        const sqlClient = createSqlClient({ url: dbUrl, authToken: dbToken });
        try {
          expect((await sqlClient.execute("SELECT 6 * 7 AS n")).rows[0]?.n).toBe(42);
        } finally {
          sqlClient.close();
        }
      } finally {
        proxy.heal();
      }
      expect(node.proc.exitCode).toBeNull();
      expect(await names()).toEqual(before);
      expect(
        (await api().post("/v1/organizations/admin/databases", { name: `new-${mode}`, group: "g" })).status,
      ).toBe(200);
    }, 60_000);
  }
});
