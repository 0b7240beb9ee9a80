import { existsSync, mkdirSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileInstanceFiles } from "../../src/hosting/reconcile.js";
import { createDatabase, createGroup, createUser, type TestUser } from "../helpers/factories.js";
import { instanceFile, isValidDatabase } from "../helpers/files.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
  await createGroup(u, u.username, "default", "aws-us-east-1");
  await u.api.post(`/v1/organizations/${u.username}/groups/default/locations/aws-eu-west-1`);
});
afterAll(() => h.close());

describe("reconciling files with the store on start", () => {
  it("recreates a missing replica, removes every orphan at once and reports a lost primary", async () => {
    const a = await createDatabase(u, u.username, "a");
    const b = await createDatabase(u, u.username, "b");
    const replica = instanceFile(h.dataDir, "aws-eu-west-1", a.DbId);
    unlinkSync(replica);
    const lostPrimary = instanceFile(h.dataDir, "aws-us-east-1", b.DbId);
    unlinkSync(lostPrimary);
    const oldOrphan = instanceFile(h.dataDir, "aws-us-east-1", "00000000-0000-4000-8000-000000000001");
    writeFileSync(oldOrphan, "");
    const anHourAgo = (Date.now() - 3_600_000) / 1000;
    utimesSync(oldOrphan, anHourAgo, anHourAgo);
    // A create that never committed, a moment before the stop: a file, its WAL and frame log.
    const youngOrphan = instanceFile(h.dataDir, "aws-us-east-1", "00000000-0000-4000-8000-000000000002");
    writeFileSync(youngOrphan, "");
    writeFileSync(`${youngOrphan}-wal`, "");
    mkdirSync(`${youngOrphan}.log`);
    // Only companions left (the database file itself was already removed).
    const leftovers = instanceFile(h.dataDir, "aws-eu-west-1", "00000000-0000-4000-8000-000000000003");
    writeFileSync(`${leftovers}-shm`, "");

    await h.restart();

    expect(isValidDatabase(replica)).toBe(true);
    for (const f of [oldOrphan, youngOrphan, `${youngOrphan}-wal`, `${youngOrphan}.log`, `${leftovers}-shm`])
      expect(existsSync(f), f).toBe(false);
    expect(existsSync(lostPrimary)).toBe(false);
  });

  it("never removes a file made after the process started: it may be a create in flight", async () => {
    const inFlight = instanceFile(h.dataDir, "aws-us-east-1", "00000000-0000-4000-8000-000000000004");
    writeFileSync(inFlight, "");
    const report = await reconcileInstanceFiles(h.shoal.deps, { startedAt: Date.now() - 60_000 });
    expect(report.removedOrphans).toBe(0);
    expect(existsSync(inFlight)).toBe(true);
    unlinkSync(inFlight);
  });
});
