/**
 * The red team's floods on one database, for the neighbour benchmark (bench/neighbour.ts): each
 * starts against the flooded database and runs until stopped, counting what it was answered.
 * Point reads from 2,000 connections go through the load tool (bench/load.ts); these three need
 * what it doesn't do: a body too large for its command line, streams left open, WebSockets.
 */
import WebSocket from "ws";
import { load } from "./harness.js";

export interface FloodTarget {
  url: string;
  jwt: string;
  /** The flooded database's name (organization `admin`). */
  db: string;
}

export interface RunningFlood {
  stop(): Promise<{ answered: number; refused: number }>;
}

export interface Flood {
  label: string;
  start(t: FloodTarget, durationMs: number): RunningFlood;
}

const pipelinePath = (t: FloodTarget) => `${t.url}/db/admin/${t.db}/v2/pipeline`;
const point = (id: number) => ({
  type: "execute",
  stmt: { sql: "SELECT v FROM kv WHERE id = ?", args: [{ type: "integer", value: String(id) }] },
});

/** `clients` loops, each sending its next request as soon as the last is answered. */
function loops(clients: number, send: (i: number) => Promise<boolean>): RunningFlood {
  let stopped = false;
  let answered = 0;
  let refused = 0;
  const running = Array.from({ length: clients }, async (_, i) => {
    while (!stopped) {
      if (await send(i).catch(() => false)) answered++;
      else refused++;
    }
  });
  return {
    async stop() {
      stopped = true;
      await Promise.all(running);
      return { answered, refused };
    },
  };
}

/** Requests `flood` at a time, each a point read and close (the load tool, in its own process). */
export function inFlight(flood: number): Flood {
  return {
    label: `${flood.toLocaleString("en-US")} requests in flight`,
    start(t, durationMs) {
      const bodies = Array.from({ length: 200 }, (_, i) =>
        JSON.stringify({ requests: [point(1 + ((i * 7919) % 10_000)), { type: "close" }] }),
      );
      const running = load({
        url: t.url,
        headers: { authorization: `Bearer ${t.jwt}` },
        bodies,
        paths: [`/db/admin/${t.db}/v2/pipeline`],
        concurrency: flood,
        warmupMs: 500,
        durationMs,
      });
      return {
        async stop() {
          const r = await running;
          return { answered: r.requests, refused: r.errors };
        },
      };
    },
  };
}

/** Pipelines of `statements` point reads, two at a time, back to back. */
export function longPipelines(statements: number): Flood {
  return {
    label: `pipelines of ${statements.toLocaleString("en-US")} statements`,
    start(t) {
      const requests = Array.from({ length: statements }, (_, i) => point(1 + (i % 10_000)));
      const body = JSON.stringify({ requests: [...requests, { type: "close" }] });
      return loops(2, async () => {
        const r = await fetch(pipelinePath(t), {
          method: "POST",
          headers: { authorization: `Bearer ${t.jwt}`, "content-type": "application/json" },
          body,
        });
        await r.arrayBuffer();
        return r.ok;
      });
    },
  };
}

/**
 * HTTP streams left open: each request runs a read and keeps its stream (a baton), `clients` at a
 * time, until the database's limit on open streams refuses more (STREAMS_TOO_MANY) and idle ones
 * expire.
 */
export function openBatons(clients: number): Flood {
  return {
    label: `${clients.toLocaleString("en-US")} clients opening batons`,
    start(t) {
      return loops(clients, async (i) => {
        const r = await fetch(pipelinePath(t), {
          method: "POST",
          headers: { authorization: `Bearer ${t.jwt}`, "content-type": "application/json" },
          body: JSON.stringify({ requests: [point(1 + (i % 10_000))] }),
        });
        const body = (await r.json()) as { results?: Array<{ type: string }> };
        return r.ok && body.results?.[0]?.type === "ok";
      });
    },
  };
}

/**
 * `sockets` Hrana WebSockets with `perSocket` streams each, every stream reading back to back:
 * streams past the database's limit are refused.
 */
export function webSocketStreams(sockets: number, perSocket: number): Flood {
  return {
    label: `${(sockets * perSocket).toLocaleString("en-US")} WebSocket streams`,
    start(t) {
      let stopped = false;
      let answered = 0;
      let refused = 0;
      const url = `${t.url.replace(/^http/, "ws")}/db/admin/${t.db}`;
      const one = (n: number) =>
        new Promise<void>((resolve) => {
          const ws = new WebSocket(url, ["hrana3"]);
          let next = 1;
          /** The stream each request in flight is on. */
          const streamOf = new Map<number, number>();
          const send = (stream: number, request: Record<string, unknown>) => {
            streamOf.set(next, stream);
            ws.send(JSON.stringify({ type: "request", request_id: next++, request }));
          };
          const read = (stream: number) =>
            send(stream, { ...point(1 + ((n * perSocket + stream) % 10_000)), stream_id: stream });
          ws.on("open", () => {
            ws.send(JSON.stringify({ type: "hello", jwt: t.jwt }));
            for (let s = 1; s <= perSocket; s++) send(s, { type: "open_stream", stream_id: s });
          });
          ws.on("message", (data) => {
            const m = JSON.parse(data.toString()) as { type: string; request_id?: number };
            if (m.type === "hello_ok" || m.request_id === undefined) return;
            const stream = streamOf.get(m.request_id);
            streamOf.delete(m.request_id);
            if (m.type === "response_ok") answered++;
            else refused++;
            if (stopped) return ws.close();
            // A stream opened, or its read answered: it reads again. A refused stream stops.
            if (m.type === "response_ok" && stream !== undefined) read(stream);
          });
          ws.on("error", () => refused++);
          ws.on("close", () => resolve());
        });
      const running = Array.from({ length: sockets }, (_, n) => one(n));
      return {
        async stop() {
          stopped = true;
          await Promise.race([Promise.all(running), new Promise((r) => setTimeout(r, 5000))]);
          return { answered, refused };
        },
      };
    },
  };
}
