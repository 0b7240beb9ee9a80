import { describe, expect, it } from "vitest";
import { Catalog } from "../../src/backup/catalog.js";
import {
  archiveKey,
  databaseIdOf,
  framesKey,
  manifestKey,
  parseObjectKey,
  snapshotKey,
} from "../../src/backup/layout.js";

const ID = "3f0c5b8e-0d0e-4a39-9a55-4a8f7e7b8c01";
const folder = `p/${ID}/`;
const sized = (key: string, size = 100) => ({ ...parseObjectKey(folder, key)!, size });
const snap = (g: number, f: number, at: number) => sized(snapshotKey("p", ID, g, f, at));
const frames = (g: number, a: number, b: number) => sized(framesKey("p", ID, g, a, b));
const archive = (g: number, n: number) => sized(archiveKey("p", ID, g, n));

describe("backup object names", () => {
  it("name each object by what it holds, padded so listings sort numerically", () => {
    expect(snapshotKey("p", ID, 2, 15, 1_700_000_000_000)).toBe(
      `p/${ID}/0000000002/snapshot-0000000015-1700000000000.db.gz`,
    );
    expect(framesKey("", ID, 1, 16, 20)).toBe(`${ID}/0000000001/frames-0000000016-0000000020.gz`);
    expect(parseObjectKey(folder, archiveKey("p", ID, 3, 4001))).toMatchObject({
      kind: "archive",
      generation: 3,
      frames: 4001,
    });
    expect(parseObjectKey(folder, manifestKey("p", ID))).toBeUndefined();
    expect(parseObjectKey(folder, `${folder}0000000001/notes.txt`)).toBeUndefined();
    expect(databaseIdOf("p", `p/${ID}/`)).toBe(ID);
    expect(databaseIdOf("p", "p/../")).toBeUndefined();
    expect(() => manifestKey("p", "../etc")).toThrow();
  });
});

describe("the catalog of one database's objects", () => {
  it("walks from a snapshot through frames and archives, skipping what the snapshot holds", () => {
    const c = new Catalog([
      snap(1, 5, 1000),
      frames(1, 1, 5),
      frames(1, 6, 8),
      frames(1, 6, 10),
      frames(1, 11, 12),
      archive(2, 7),
      frames(2, 1, 3),
      frames(3, 1, 2),
      frames(3, 5, 6),
    ]);
    // Generation 1 has no archive: the chain can't go past its last shipped frame into 2.
    expect(c.walk(c.snapshotFor()!).end).toEqual({ generation: 1, frame: 12, finished: false });
    expect(c.walk(c.snapshotFor()!).steps.map((s) => [s.generation, s.first, s.last])).toEqual([
      [1, 6, 8],
      [1, 6, 10],
      [1, 11, 12],
    ]);
    c.add(archive(1, 12));
    const { steps, end } = c.walk(c.snapshotFor()!);
    expect(steps.map((s) => [s.generation, s.first, s.last])).toEqual([
      [1, 1, 12],
      [2, 1, 7],
      [3, 1, 2],
    ]);
    // Frames 3-4 of generation 3 are missing: the chain stops before the gap.
    expect(end).toEqual({ generation: 3, frame: 2, finished: false });
  });

  it("chooses the newest snapshot current at a moment, and keeps only what the retention needs", () => {
    const c = new Catalog([
      snap(1, 0, 1000),
      frames(1, 1, 4),
      archive(1, 9),
      snap(2, 3, 5000),
      frames(2, 1, 3),
      frames(2, 4, 6),
      snap(4, 0, 9000),
      frames(4, 1, 2),
    ]);
    expect(c.snapshotFor(999)).toBeUndefined();
    expect(c.snapshotFor(4999)).toMatchObject({ generation: 1 });
    expect(c.snapshotFor(5000)).toMatchObject({ generation: 2, frame: 3 });
    expect(c.snapshotFor()).toMatchObject({ generation: 4 });
    expect(c.earliest()).toBe(1000);
    expect(c.expired(999)).toEqual([]);
    expect(c.expired(6000).map((k) => parseObjectKey(folder, k)?.kind)).toEqual([
      "snapshot",
      "archive",
      "frames",
      "frames",
    ]);
    expect(c.expired(6000)).not.toContain(frames(2, 4, 6).key);
    expect(c.lastGeneration).toBe(4);
  });
});
