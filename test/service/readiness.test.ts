import { renameSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, call } from "../helpers/http.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { startTestShoal, TEST_STORE, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
/** On the postgres project, a server of this file's own, to stop under the running Shoal. */
let pg: PostgresServer | undefined;

beforeAll(async () => {
  if (TEST_STORE === "postgres") pg = await startPostgres();
  h = await startTestShoal(pg ? { metadataUrl: await pg.newDatabase() } : {});
});
afterAll(async () => {
  await h?.close();
  await pg?.stop();
});

const ready = () => call(h.url, "GET", "/health/ready");
const orgs = () => call(h.url, "GET", "/v1/organizations", { token: h.adminToken });

/** Polls readiness until it answers `status` (a recovering store may take a moment to reconnect). */
async function readyBecomes(status: number): Promise<Answer> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const r = await ready();
    if (r.status === status || Date.now() > deadline) return r;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("liveness and readiness", () => {
  it("answers ready while the store and the data folder work", async () => {
    expect((await ready()).body).toEqual({ status: "ready", version: "0.0.0-test" });
    expect((await call(h.url, "GET", "/health")).status).toBe(200);
  });

  it("is not ready while the data folder is gone, and ready again once it is back, without a restart", async () => {
    const aside = `${h.dataDir}.aside`;
    renameSync(h.dataDir, aside);
    try {
      const down = await ready();
      expect(down.status).toBe(503);
      expect(down.body.error).toContain("data folder can't be used (ENOENT)");
      // Public answers name no path.
      expect(down.text).not.toContain(h.dataDir);
      expect((await call(h.url, "GET", "/health")).status).toBe(200);
    } finally {
      renameSync(aside, h.dataDir);
    }
    expect((await ready()).status).toBe(200);
  });

  if (TEST_STORE === "postgres") {
    it("is not ready while PostgreSQL is stopped, stays live, and recovers when it returns", async () => {
      expect((await orgs()).status).toBe(200);
      await pg!.halt();
      try {
        const down = await ready();
        expect(down.status).toBe(503);
        expect(down.body).toEqual({
          error: expect.stringMatching(/^not ready: control-plane store can't be used \([\w ]+\)$/),
          code: "not_ready",
        });
        expect(down.text).not.toMatch(/127\.0\.0\.1|postgres:\/\//);
        expect((await call(h.url, "GET", "/health")).status).toBe(200);
      } finally {
        await pg!.resume();
      }
      expect((await readyBecomes(200)).body).toEqual({ status: "ready", version: "0.0.0-test" });
      expect((await orgs()).status).toBe(200);
    });
  } else {
    it("is not ready while the control-plane file is gone, and recovers when it is back", async () => {
      const file = `${h.dataDir}/control-plane.db`;
      renameSync(file, `${file}.aside`);
      try {
        const down = await ready();
        expect(down.status).toBe(503);
        expect(down.body.error).toBe("not ready: control-plane store can't be used (ENOENT)");
      } finally {
        renameSync(`${file}.aside`, file);
      }
      expect((await ready()).status).toBe(200);
      expect((await orgs()).status).toBe(200);
    });
  }
});
