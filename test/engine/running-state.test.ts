import { EventEmitter } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HostedDatabases } from "../../src/engine/hosted-databases.js";
import { InstanceFiles } from "../../src/engine/instance-files.js";

/**
 * What a database's clients hold of it lives on its HostedDatabase (engine/hosted-database.ts):
 * the streams open on it and the pulls waiting for its next commit, over a real database file.
 */
const ID = "00000000-0000-4000-8000-000000000002";
let dir: string;
let hosted: HostedDatabases;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-running-"));
  const files = new InstanceFiles(dir);
  files.create("loc", ID);
  hosted = new HostedDatabases({ maxOpen: 4, synchronous: "NORMAL" }, files);
});
afterEach(async () => {
  await hosted.closeAll();
  await rm(dir, { recursive: true, force: true });
});

/** When `p` settled, in ms after the call, or "waiting" if it hadn't after `ms`. */
async function settledWithin(p: Promise<void>, ms: number): Promise<"settled" | "waiting"> {
  return Promise.race([
    p.then(() => "settled" as const),
    new Promise<"waiting">((r) => setTimeout(() => r("waiting"), ms)),
  ]);
}

describe("a hosted database's running state", () => {
  it("counts its open streams up to a limit, and a released one makes room", () => {
    const db = hosted.of("loc", ID);
    expect(db.takeStream(2)).toBe(true);
    expect(db.takeStream(2)).toBe(true);
    expect(db.takeStream(2)).toBe(false);
    expect(db.openStreams).toBe(2);
    db.releaseStream();
    expect(db.takeStream(2)).toBe(true);
  });

  it("wakes a pull waiting for the next commit when one is recorded, not before", async () => {
    const db = hosted.of("loc", ID);
    const conn = db.checkout();
    conn.configure({ queryOnly: false, maxPageCount: 0 });
    conn.exec("CREATE TABLE t (x)");
    db.afterWrite(conn);
    await new Promise((r) => setImmediate(r));
    const waiting = db.nextCommit.wait(60_000, new EventEmitter());
    expect(hosted.commitWaiters).toBe(1);
    expect(await settledWithin(waiting, 50)).toBe("waiting");
    conn.exec("INSERT INTO t VALUES (1)");
    db.afterWrite(conn);
    db.checkin(conn);
    expect(await settledWithin(waiting, 2000)).toBe("settled");
    expect(hosted.commitWaiters).toBe(0);
  });

  it("wakes a pull when its database is removed, and one whose client went away", async () => {
    const db = hosted.of("loc", ID);
    const client = new EventEmitter();
    const gone = db.nextCommit.wait(60_000, client);
    const removed = db.nextCommit.wait(60_000, new EventEmitter());
    client.emit("close");
    expect(await settledWithin(gone, 1000)).toBe("settled");
    hosted.remove("loc", ID, true);
    expect(await settledWithin(removed, 1000)).toBe("settled");
  });

  it("lets no pull wait once the node stops, on databases known then or opened after", async () => {
    const db = hosted.of("loc", ID);
    const before = db.nextCommit.wait(60_000, new EventEmitter());
    hosted.stopWaits();
    expect(await settledWithin(before, 1000)).toBe("settled");
    hosted.remove("loc", ID, true);
    const after = hosted.of("loc", ID).nextCommit.wait(60_000, new EventEmitter());
    expect(await settledWithin(after, 1000)).toBe("settled");
  });
});
