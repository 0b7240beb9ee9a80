/**
 * A write forwarded to the primary's node that got no answer: refused before the connection was
 * made, it was never sent (PRIMARY_UNREACHABLE, nothing written); any other failure (a timeout, a
 * connection cut after sending) may have let it run, and says so (PRIMARY_FAILED). The errors are
 * the ones `fetch` really throws, against real sockets.
 */
import { createServer, type Server } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { forwardFailure } from "../../src/dataplane/hrana/remote-primary-stream.js";

const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

/** A loopback server doing `onConnection` with each socket; its port. */
async function server(onConnection: (s: import("node:net").Socket) => void): Promise<number> {
  const s = createServer(onConnection);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return (s.address() as { port: number }).port;
}

async function failureOf(url: string, timeoutMs = 2000) {
  try {
    await fetch(url, { method: "POST", body: "{}", signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    return forwardFailure("aws-us-east-1", e);
  }
  throw new Error("the request was answered");
}

describe("a forwarded request that got no answer", () => {
  it("is PRIMARY_UNREACHABLE when the connection was refused: nothing was sent", async () => {
    const port = await server(() => {});
    await new Promise<void>((r) => servers.pop()!.close(() => r()));
    const e = await failureOf(`http://127.0.0.1:${port}/`);
    expect(e.code).toBe("PRIMARY_UNREACHABLE");
    expect(e.message).toMatch(/nothing was written/);
  });

  it("is PRIMARY_FAILED when the primary's node took the request and never answered", async () => {
    const port = await server((s) => s.on("data", () => {}));
    const e = await failureOf(`http://127.0.0.1:${port}/`, 300);
    expect(e.code).toBe("PRIMARY_FAILED");
    expect(e.message).toMatch(/may or may not have taken effect/);
  });

  it("is PRIMARY_FAILED when the connection was cut after the request was sent", async () => {
    const port = await server((s) => s.once("data", () => s.resetAndDestroy()));
    const e = await failureOf(`http://127.0.0.1:${port}/`);
    expect(e.code).toBe("PRIMARY_FAILED");
  });
});
