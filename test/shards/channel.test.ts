import { type ChildProcess, fork } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HranaError } from "../../src/dataplane/hrana/errors.js";
import { AppError, NotFoundError } from "../../src/errors.js";
import { Channel, ChannelClosedError } from "../../src/shards/channel.js";

/** The pipe between a node's processes: calls both ways, errors as their own classes, and a peer that dies. */
type Peer = {
  echo(v: unknown): unknown;
  notFound(): never;
  hrana(): never;
  sqlite(): never;
  askBack(n: number): number;
  die(): never;
  hang(): never;
  unsendable(): never;
};

let child: ChildProcess;
let channel: Channel<{ double(n: number): number }, Peer>;

const forkPeer = () =>
  fork(path.join(import.meta.dirname, "../helpers/channel-peer.ts"), [], {
    execArgv: ["--import", "tsx"],
    serialization: "advanced",
  });

beforeAll(() => {
  child = forkPeer();
  channel = new Channel(child, { double: (n: number) => n * 2 });
});
afterAll(() => child.kill());

describe("the pipe between a node's processes", () => {
  it("carries Buffers, Maps, Sets and bigints as they are", async () => {
    const value = { b: Buffer.from("bytes"), m: new Map([["k", 1]]), s: new Set(["x"]), n: 2n ** 70n };
    const back = (await channel.remote.echo(value)) as typeof value;
    expect(Buffer.from(back.b).toString()).toBe("bytes");
    expect(back.m.get("k")).toBe(1);
    expect(back.s.has("x")).toBe(true);
    expect(back.n).toBe(2n ** 70n);
  });

  it("rethrows the other side's errors as the classes this side tells apart", async () => {
    const notFound = await channel.remote.notFound().catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(NotFoundError);
    expect(notFound).toBeInstanceOf(AppError);
    expect(notFound).toMatchObject({ kind: "not_found", code: "THING_NOT_FOUND", message: "no such thing" });
    const hrana = await channel.remote.hrana().catch((e: unknown) => e);
    expect(hrana).toBeInstanceOf(HranaError);
    expect(hrana).toMatchObject({ code: "STATEMENT_TIMEOUT", message: "too slow" });
    const sqlite = await channel.remote.sqlite().catch((e: unknown) => e);
    expect(sqlite).toBeInstanceOf(Error);
    expect(sqlite).toMatchObject({ code: "SQLITE_ERROR", rawCode: 1 });
  });

  it("answers calls made back while a call is answered", async () => {
    expect(await channel.remote.askBack(20)).toBe(41);
  });

  it("fails a call whose arguments or answer can't cross the pipe, and goes on serving others", async () => {
    await expect(channel.remote.echo(() => 1)).rejects.toThrow(/could not be cloned/);
    await expect(channel.remote.unsendable()).rejects.toThrow(/the answer to unsendable couldn't be sent/);
    expect(channel.isClosed).toBe(false);
    expect(await channel.remote.echo(3)).toBe(3);
  });

  it("fails the calls still waiting, and every later one, once the other process is gone", async () => {
    // The expectation is attached at once: the pipe may close before the exit event comes.
    const waiting = expect(channel.remote.hang()).rejects.toBeInstanceOf(ChannelClosedError);
    const died = new Promise((r) => child.once("exit", r));
    void channel.remote.die().catch(() => undefined);
    await died;
    await waiting;
    await expect(channel.remote.echo(1)).rejects.toBeInstanceOf(ChannelClosedError);
  });

  it("fails calls sent into the pipe of a process that died before this one noticed, without ending this one", async () => {
    const peer = forkPeer();
    const ch = new Channel<{ double(n: number): number }, Peer>(peer, { double: (n: number) => n * 2 });
    expect(await ch.remote.echo(1)).toBe(1);
    // Node reports a failed write to a pipe as an `error` event on the child, unless the send had
    // a callback; unheard, that event ends the process (a node whose shard died, with it).
    const errors: Error[] = [];
    peer.on("error", (e) => errors.push(e));
    const died = new Promise((r) => peer.once("exit", r));
    peer.kill("SIGKILL");
    // The peer is gone but this loop hasn't read the pipe's end: the writes below fail (EPIPE).
    const until = Date.now() + 200;
    while (Date.now() < until) {}
    const call = ch.remote.echo(2).catch((e: unknown) => e);
    ch.emit("ping", 1);
    await died;
    expect(await call).toBeInstanceOf(ChannelClosedError);
    await new Promise((r) => setTimeout(r, 50));
    expect(errors).toEqual([]);
  });
});
