import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { COMMIT_TIMES_FLUSH_MS, CommitTimes } from "../../src/engine/commit-times.js";

let dir: string;
let times: CommitTimes;
const onDisk = (name: string) =>
  existsSync(path.join(dir, name))
    ? readFileSync(path.join(dir, name), "utf8").split("\n").filter(Boolean)
    : [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-times-"));
  times = new CommitTimes(dir);
});
afterEach(async () => {
  times.close();
  await rm(dir, { recursive: true, force: true });
});

describe("commit times", () => {
  it("keeps a turn's lines in memory and writes them out together shortly after", async () => {
    times.append(3, 1000);
    times.append(5, 1001);
    expect(onDisk("current.commits")).toEqual([]);
    await new Promise((r) => setTimeout(r, COMMIT_TIMES_FLUSH_MS + 100));
    expect(onDisk("current.commits")).toEqual(["3 1000", "5 1001"]);
  });

  it("lets a reader see lines that are still waiting", () => {
    times.append(3, 1000);
    expect(times.read()).toEqual([{ frames: 3, at: 1000 }]);
    times.append(7, 1002);
    expect(times.read()).toEqual([
      { frames: 3, at: 1000 },
      { frames: 7, at: 1002 },
    ]);
  });

  it("writes waiting lines when it closes, and into the archive when the generation ends", () => {
    times.append(3, 1000);
    times.close();
    expect(onDisk("current.commits")).toEqual(["3 1000"]);
    times.append(9, 1005);
    times.archive(4);
    expect(onDisk("4.commits")).toEqual(["3 1000", "9 1005"]);
    expect(times.read(4)).toHaveLength(2);
    expect(times.read()).toEqual([]);
  });

  it("forgets waiting lines with the current generation", async () => {
    times.append(3, 1000);
    times.flush();
    times.append(4, 1001);
    times.dropCurrent();
    await new Promise((r) => setTimeout(r, COMMIT_TIMES_FLUSH_MS + 100));
    expect(existsSync(path.join(dir, "current.commits"))).toBe(false);
    expect(times.read()).toEqual([]);
  });
});
