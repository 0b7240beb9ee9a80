/**
 * The PostgreSQL store when its server goes away mid-work: the connection reset under an open
 * transaction, a server that stops answering (a partition), and a commit whose answer never comes.
 * Each failure must be a typed 503 saying whether anything changed, never a crash of the process
 * (pg emits "error" on a connection lost while checked out) or a wait without end.
 */
import { type Kysely, sql } from "kysely";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { UnavailableError } from "../../src/errors.js";
import { openPostgresStore } from "../../src/store/postgres.js";
import type { DB } from "../../src/store/schema.js";
import type { Repos, Store } from "../../src/store/store.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { TcpProxy } from "../helpers/tcp-proxy.js";

const QUERY_TIMEOUT_MS = 1000;

let server: PostgresServer;
let proxy: TcpProxy;
let store: Store;

const org = (id: string, slug: string) => ({
  id,
  slug,
  name: slug,
  type: "team" as const,
  overages: 0,
  blocked_reads: 0,
  blocked_writes: 0,
  created_at: "t",
});

const SLUGS = ["kept", "half", "other-half", "maybe", "maybe-too"];

/** Which of the test's organizations the store holds. */
const slugs = (s: Store) =>
  s.read(async (r) => {
    const found = await Promise.all(SLUGS.map((slug) => r.organizations.findBySlug(slug)));
    return found.flatMap((o) => (o ? [o.slug] : [])).sort();
  });

/** Rejects with the store's typed error: its code, and how long it took. */
async function failure(work: Promise<unknown>): Promise<{ code: string | undefined; ms: number }> {
  const started = Date.now();
  const e = await work.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(UnavailableError);
  return { code: (e as UnavailableError).code, ms: Date.now() - started };
}

beforeAll(async () => {
  server = await startPostgres();
});
afterAll(() => server.stop());
beforeEach(async () => {
  const url = new URL(await server.newDatabase());
  proxy = await TcpProxy.start(Number(url.port));
  url.port = String(proxy.port);
  store = await openPostgresStore(url.toString(), { poolSize: 2, queryTimeoutMs: QUERY_TIMEOUT_MS });
  await store.write((r) => r.organizations.insert(org("o1", "kept")));
});
afterEach(async () => {
  proxy.heal();
  await store.close();
  await proxy.close();
});

describe("the PostgreSQL store losing its server", () => {
  it("fails a transaction whose connection is reset mid-way with STORE_UNAVAILABLE, keeps nothing of it, and goes on after", async () => {
    let inside = () => {};
    const reached = new Promise<void>((r) => (inside = r));
    const write = store.write(async (r: Repos) => {
      await r.organizations.insert(org("o2", "half"));
      inside();
      // The connection is checked out with no query running when the reset comes: pg then emits
      // an "error" on it, which ended the process while nothing listened.
      await new Promise((r) => setTimeout(r, 300));
      await r.organizations.insert(org("o3", "other-half"));
    });
    await reached;
    // An "error" event nobody hears is thrown from the socket's callback: it would end a server.
    const uncaught: unknown[] = [];
    const hear = (e: unknown) => uncaught.push(e);
    process.on("uncaughtException", hear);
    try {
      proxy.cut("reset");
      expect((await failure(write)).code).toBe("STORE_UNAVAILABLE");
    } finally {
      process.off("uncaughtException", hear);
    }
    expect(uncaught).toEqual([]);
    expect((await failure(slugs(store))).code).toBe("STORE_UNAVAILABLE");
    proxy.heal();
    expect(await slugs(store)).toEqual(["kept"]);
  });

  it("fails a read on a server that stopped answering after the query timeout, and serves again once it answers", async () => {
    await slugs(store);
    proxy.cut("blackhole");
    // One query, on a connection already made: only the query timeout can end its wait.
    const { code, ms } = await failure(store.read((r) => r.organizations.findBySlug("kept")));
    expect(code).toBe("STORE_UNAVAILABLE");
    expect(ms).toBeGreaterThanOrEqual(QUERY_TIMEOUT_MS - 50);
    expect(ms).toBeLessThan(QUERY_TIMEOUT_MS * 5);
    proxy.heal();
    // The connection left behind its unanswered query was dropped, not handed to this read.
    for (let i = 0; i < 4; i++) expect(await slugs(store)).toEqual(["kept"]);
  });

  it("answers STORE_OUTCOME_UNKNOWN when the commit goes unanswered, and the change is then there or not, whole", async () => {
    const write = store.write(async (r: Repos) => {
      await r.organizations.insert(org("o2", "maybe"));
      await r.organizations.insert(org("o3", "maybe-too"));
      // Everything from here on, the COMMIT first, is held.
      proxy.cut("blackhole");
    });
    expect((await failure(write)).code).toBe("STORE_OUTCOME_UNKNOWN");
    proxy.heal();
    const after = await slugs(store);
    expect([["kept"], ["kept", "maybe", "maybe-too"]]).toContainEqual(after);
  });

  it("ends a transaction its node left open for a minute, so a cut-off node can't hold row locks for hours", async () => {
    // The session setting, read on one of the store's own connections.
    const db = (store as unknown as { db: Kysely<DB> }).db;
    const { rows } = await sql<{
      t: string;
    }>`SELECT current_setting('idle_in_transaction_session_timeout') AS t`.execute(db);
    expect(rows[0]?.t).toBe("1min");
  });
});
