import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";
import { afterAll, describe, expect, it } from "vitest";
import { readOnlyFile } from "../../src/lib/read-only-file.js";

const dir = await mkdtemp(path.join(tmpdir(), "shoal ro? #"));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("readOnlyFile", () => {
  it("opens a database that refuses every write, even in a folder whose name holds ? and #", async () => {
    const file = path.join(dir, "x.db");
    const w = new Database(file);
    w.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1)");
    w.close();
    const before = await readFile(file);
    const ro = new Database(readOnlyFile(file));
    expect(ro.prepare("SELECT count(*) AS n FROM t").get()).toMatchObject({ n: 1 });
    expect(() => ro.exec("INSERT INTO t VALUES (2)")).toThrow(/readonly/);
    ro.close();
    expect((await readFile(file)).equals(before)).toBe(true);
  });

  it("doesn't create a file that isn't there", () => {
    expect(() =>
      new Database(readOnlyFile(path.join(dir, "missing.db"))).prepare("SELECT 1").get(),
    ).toThrow();
  });
});
