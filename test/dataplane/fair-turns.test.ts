import { describe, expect, it } from "vitest";
import { FairTurns } from "../../src/dataplane/fair-turns.js";

/** Resolves once the event loop has gone round `n` times (each turn's end has run). */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

describe("FairTurns", () => {
  it("starts a quiet database's request before the rest of a busy one's backlog", async () => {
    const fair = new FairTurns(8);
    const ran: string[] = [];
    for (let i = 1; i <= 20; i++) fair.run("a", () => ran.push(`a${i}`));
    fair.run("b", () => ran.push("b1"));
    // Eight of a's at once, then b's: the other twelve wait for the end of the turn.
    expect(ran).toEqual(["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "b1"]);
    expect(fair.backlog).toBe(12);
    await turns(4);
    expect(ran).toEqual([
      ...Array.from({ length: 8 }, (_, i) => `a${i + 1}`),
      "b1",
      ...Array.from({ length: 12 }, (_, i) => `a${i + 9}`),
    ]);
    expect(fair.backlog).toBe(0);
  });

  it("lets a request arriving in a later turn in before what a busy database still has waiting", async () => {
    const fair = new FairTurns(4);
    const ran: string[] = [];
    for (let i = 1; i <= 16; i++) fair.run("a", () => ran.push(`a${i}`));
    // Arrives while a's backlog is being worked off, as the next request of another client would.
    // (Its callback runs right after the first turn's end, which started a5-a8.)
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        fair.run("b", () => ran.push("b1"));
        resolve();
      }),
    );
    expect(ran.at(-1)).toBe("b1");
    await turns(6);
    expect(ran).toHaveLength(17);
    expect(ran.indexOf("b1")).toBe(8);
    // A database's own requests keep their order.
    expect(ran.filter((r) => r !== "b1")).toEqual(Array.from({ length: 16 }, (_, i) => `a${i + 1}`));
  });

  it("gives every waiting database the same share of each later turn", async () => {
    const fair = new FairTurns(2);
    const ran: string[] = [];
    for (let i = 1; i <= 6; i++) fair.run("a", () => ran.push(`a${i}`));
    for (let i = 1; i <= 6; i++) fair.run("c", () => ran.push(`c${i}`));
    expect(ran).toEqual(["a1", "a2", "c1", "c2"]);
    await turns(1);
    expect(ran.slice(4)).toEqual(["a3", "a4", "c3", "c4"]);
    await turns(1);
    expect(ran.slice(8)).toEqual(["a5", "a6", "c5", "c6"]);
  });

  it("counts the requests it started late against the next turn", async () => {
    const fair = new FairTurns(2);
    const ran: string[] = [];
    for (let i = 1; i <= 4; i++) fair.run("a", () => ran.push(`a${i}`));
    await turns(1);
    // a3 and a4 were started at the end of the last turn: a5 waits for the next end.
    fair.run("a", () => ran.push("a5"));
    expect(ran).toEqual(["a1", "a2", "a3", "a4"]);
    await turns(2);
    expect(ran).toEqual(["a1", "a2", "a3", "a4", "a5"]);
  });

  it("reports a request that throws when started late, and goes on with the others", async () => {
    const errors: unknown[] = [];
    const fair = new FairTurns(1, (e) => errors.push(e));
    const ran: string[] = [];
    fair.run("a", () => ran.push("a1"));
    fair.run("a", () => {
      throw new Error("boom");
    });
    fair.run("a", () => ran.push("a3"));
    await turns(4);
    expect(ran).toEqual(["a1", "a3"]);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe("boom");
  });
});
