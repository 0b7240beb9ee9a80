import type { WebSocket } from "ws";
import { unlockAccess } from "../domain/data-access/encryption.js";
import { type DataAccess, openDataAccess } from "../domain/data-access/open.js";
import type { DatabaseLocator } from "../domain/data-access/ports.js";
import { ForbiddenError } from "../errors.js";
import { batchCursorEntries, type Cursor, takeEntries } from "./hrana/cursor.js";
import { dispatch } from "./hrana/dispatch.js";
import { ProtocolError } from "./hrana/errors.js";
import type { LocationServices } from "./hrana/location-stream.js";
import { openStream } from "./hrana/open-stream.js";
import { parseBatch, parseStreamRequest } from "./hrana/requests.js";
import type { ResponseBudget, ResponseBytes } from "./hrana/response-budget.js";
import { inlineStoredSql, SqlStore, WS_SQL_LIMITS } from "./hrana/sql-store.js";
import type { SqlStream, StreamServices } from "./hrana/stream.js";
import { StreamLimitError } from "./hrana/stream-limits.js";
import type { DataPlaneParts } from "./parts.js";
import { observeWsRequest } from "./request-log.js";
import { wsErrorOf } from "./ws-errors.js";
import { WsSender } from "./ws-sender.js";

export interface WebSocketLimits {
  /** Streams one connection may have open (SHOAL_MAX_STREAMS_PER_WEBSOCKET). */
  maxStreams: number;
  responses: ResponseBytes;
  /**
   * Starts the handling of one message: in its database's turn, where a shard takes requests in
   * turns (see fair-turns.ts), so a flood over many sockets can't hold a neighbour back; at once
   * otherwise. A connection's messages keep their order either way.
   */
  turn?: (work: () => void) => void;
}

/** One client's WebSocket: its hello, streams, stored SQL and cursors, in Hrana's order. */
interface StreamEntry {
  stream?: SqlStream;
  chain: Promise<void>;
}

export class HranaWsConnection {
  private readonly sqls = new SqlStore(WS_SQL_LIMITS);
  /** A stream's entry exists from `open_stream` on; `stream` is set once it has actually opened. */
  private readonly streams = new Map<number, StreamEntry>();
  private readonly cursors = new Map<number, Cursor>();
  private readonly sender: WsSender;
  private jwt: string | undefined;
  /** Settles once the latest `hello` is checked; requests wait for it. */
  private authenticated: Promise<DataAccess | undefined> = Promise.resolve(undefined);

  constructor(
    private readonly ws: WebSocket,
    private readonly locator: DatabaseLocator,
    private readonly location: string | undefined,
    /** The client's address, for databases with an IP allowlist. */
    private readonly peer: string | undefined,
    private readonly deps: DataPlaneParts,
    private readonly services: StreamServices & LocationServices,
    private readonly requestId: string,
    /** The upgrade's `x-turso-encryption-key` (Hrana's hello has no field for it). */
    private readonly keyText: string | undefined,
    private readonly limits: WebSocketLimits,
  ) {
    this.sender = new WsSender(ws);
    ws.on("message", (data, isBinary) => {
      const handle = () => {
        try {
          if (isBinary) throw new ProtocolError("only JSON text messages are supported");
          this.receive(JSON.parse(data.toString()));
        } catch (e) {
          this.fail(e);
        }
      };
      if (limits.turn) limits.turn(handle);
      else handle();
    });
  }

  closeStreams(): void {
    for (const s of this.streams.values()) s.stream?.close();
    this.streams.clear();
    for (const c of this.cursors.values()) c.budget.settle();
    this.cursors.clear();
  }

  shutdown(): void {
    this.closeStreams();
    this.ws.close(1001, "server shutting down");
  }

  private receive(msg: unknown): void {
    if (typeof msg !== "object" || msg === null) throw new ProtocolError("messages must be JSON objects");
    const m = msg as Record<string, unknown>;
    if (m.type === "hello") {
      if (m.jwt !== undefined && m.jwt !== null && typeof m.jwt !== "string")
        throw new ProtocolError("jwt must be a string");
      this.jwt = (m.jwt as string | null | undefined) ?? undefined;
      this.authenticated = this.authenticate();
      return;
    }
    if (m.type !== "request" || typeof m.request_id !== "number") throw new ProtocolError("unknown message");
    this.request(m.request_id, m.request);
  }

  /**
   * Access for the hello's token, with the upgrade's encryption key (checked on every request); at
   * the location asked for, which this node may serve from its replica though the primary is elsewhere.
   */
  private async openAccess(): Promise<DataAccess> {
    const access = await openDataAccess(this.deps, this.locator, this.jwt, "sql", this.peer, this.location);
    return unlockAccess(this.deps.keys, access, this.keyText, "ws", undefined, this.peer);
  }

  private async authenticate(): Promise<DataAccess | undefined> {
    try {
      const access = await this.openAccess();
      if (access.replicaOf !== undefined) {
        throw new ForbiddenError("a replication token only syncs", "AUTH_REPLICATION_ONLY");
      }
      for (const s of this.streams.values()) if (s.stream) s.stream.access = access;
      this.send({ type: "hello_ok" });
      return access;
    } catch (e) {
      const answer = wsErrorOf(e, this.requestId, "hello");
      if (answer.internal) this.deps.log.error({ err: e }, "websocket authentication failed");
      this.send({ type: "hello_error", error: answer.error });
      this.ws.close(answer.close.code, answer.close.reason);
      return undefined;
    }
  }

  private request(id: number, raw: unknown): void {
    const r = (raw ?? {}) as Record<string, unknown>;
    const streamId = r.stream_id;
    switch (r.type) {
      case "open_stream":
        this.openStreamRequest(id, streamId);
        return;
      case "close_stream":
        this.closeStreamRequest(id, streamId);
        return;
      case "store_sql":
      case "close_sql":
        this.storeOrCloseSqlRequest(id, r);
        return;
      case "open_cursor":
        this.openCursorRequest(id, r, streamId);
        return;
      case "fetch_cursor":
        this.fetchCursorRequest(id, r);
        return;
      case "close_cursor":
        this.closeCursorRequest(id, r);
        return;
      default:
        this.streamRequest(id, r, streamId);
        return;
    }
  }

  private openStreamRequest(id: number, streamId: unknown): void {
    if (typeof streamId !== "number" || this.streams.has(streamId))
      throw new ProtocolError("invalid stream_id");
    if (this.streams.size >= this.limits.maxStreams) {
      const message =
        `this connection already has ${this.limits.maxStreams} streams open, the most the server ` +
        "allows (SHOAL_MAX_STREAMS_PER_WEBSOCKET): close streams you no longer use";
      void this.authenticated.then((a) => a && this.failRequest(id, new StreamLimitError(message)));
      return;
    }
    const entry: StreamEntry = { chain: Promise.resolve() };
    this.streams.set(streamId, entry);
    this.enqueue(entry, async (access) => {
      try {
        entry.stream = openStream(access, this.sqls, this.services, this.location);
      } catch (e) {
        if (!wsErrorOf(e, this.requestId).error) throw e;
        // Never opened: the id is free again, and it doesn't count against the limit.
        this.streams.delete(streamId);
        this.failRequest(id, e);
        return;
      }
      this.respond(id, { type: "open_stream" });
    });
  }

  private closeStreamRequest(id: number, streamId: unknown): void {
    const entry = this.streamEntry(streamId);
    this.enqueue(entry, async () => {
      entry.stream?.close();
      this.streams.delete(streamId as number);
      this.respond(id, { type: "close_stream" });
    });
  }

  private storeOrCloseSqlRequest(id: number, r: Record<string, unknown>): void {
    // Connection-wide, and applied at once so later requests on any stream see it in order.
    const req = parseStreamRequest(r);
    let error: unknown;
    try {
      if (req.type === "store_sql") this.sqls.store(req.sqlId, req.sql);
      else if (req.type === "close_sql") this.sqls.close(req.sqlId);
    } catch (e) {
      // A protocol error (an id stored twice) ends the connection now, in order.
      if (!wsErrorOf(e, this.requestId).error) throw e;
      error = e;
    }
    void this.authenticated.then((a) => {
      if (!a) return;
      if (error) this.failRequest(id, error);
      else this.respond(id, { type: req.type });
    });
  }

  private openCursorRequest(id: number, r: Record<string, unknown>, streamId: unknown): void {
    const entry = this.streamEntry(streamId);
    const cursorId = r.cursor_id;
    if (typeof cursorId !== "number" || this.cursors.has(cursorId))
      throw new ProtocolError("invalid cursor_id");
    const batch = inlineStoredSql(this.sqls, { type: "batch", batch: parseBatch(r.batch) });
    const cursor: Cursor = {
      streamId: streamId as number,
      entries: undefined,
      next: undefined,
      budget: this.limits.responses.budget(),
      ready: Promise.resolve(),
    };
    this.cursors.set(cursorId, cursor);
    cursor.ready = this.enqueue(entry, async () => {
      if (batch.type !== "batch" || !entry.stream) return;
      const started = performance.now();
      try {
        // Checked again for every request, as for the others: a rotation, a revocation or a
        // changed allowlist applies to a socket that stays open.
        entry.stream.access = await this.openAccess();
        cursor.entries = batchCursorEntries(await entry.stream.batch(batch.batch, cursor.budget));
      } catch (e) {
        if (!wsErrorOf(e, this.requestId).error) throw e;
        // The cursor's own failure, answered as any request's; it stays, empty, until closed
        // (the client may have asked for its entries already).
        cursor.budget.settle();
        this.failRequest(id, e);
        observeWsRequest(this.deps, batch, started, "error");
        return;
      }
      this.respond(id, { type: "open_cursor" });
      observeWsRequest(this.deps, batch, started, "ok");
    });
  }

  private fetchCursorRequest(id: number, r: Record<string, unknown>): void {
    const cursor = typeof r.cursor_id === "number" ? this.cursors.get(r.cursor_id) : undefined;
    if (!cursor) throw new ProtocolError(`cursor ${String(r.cursor_id)} is not open`);
    const max = typeof r.max_count === "number" && r.max_count > 0 ? r.max_count : 1000;
    void cursor.ready.then(() => {
      const entries = takeEntries(cursor, max);
      const done = cursor.next?.done !== false;
      if (done) cursor.budget.settle();
      this.respond(id, { type: "fetch_cursor", entries, done });
    });
  }

  private closeCursorRequest(id: number, r: Record<string, unknown>): void {
    if (typeof r.cursor_id === "number") {
      this.cursors.get(r.cursor_id)?.budget.settle();
      this.cursors.delete(r.cursor_id);
    }
    void this.authenticated.then((a) => a && this.respond(id, { type: "close_cursor" }));
  }

  private streamRequest(id: number, r: Record<string, unknown>, streamId: unknown): void {
    const entry = this.streamEntry(streamId);
    // Stored SQL is resolved now: a later close_sql must not change what this request runs.
    const req = inlineStoredSql(this.sqls, parseStreamRequest(r));
    entry.chain = entry.chain.then(async () => {
      const access = await this.authenticated;
      if (!access || !entry.stream) return;
      const started = performance.now();
      let outcome: "ok" | "error" = "error";
      const budget = this.limits.responses.budget();
      try {
        entry.stream.access = await this.openAccess();
        await this.respondLarge(id, await dispatch(entry.stream, req, budget), budget);
        outcome = "ok";
      } catch (e) {
        budget.settle();
        this.failRequest(id, e);
      } finally {
        observeWsRequest(this.deps, req, started, outcome);
      }
    });
  }

  /**
   * Runs `step` after everything queued on the stream before it and after authentication. Requests
   * of one stream run in order; different streams don't wait for each other (a stream waiting for
   * the write lock must not hold up the stream that has it). A failure ends the connection.
   */
  private enqueue(entry: StreamEntry, step: (access: DataAccess) => Promise<void>): Promise<void> {
    entry.chain = entry.chain
      .then(async () => {
        const access = await this.authenticated;
        if (access) await step(access);
      })
      .catch((e: unknown) => this.fail(e));
    return entry.chain;
  }

  private streamEntry(streamId: unknown): StreamEntry {
    const entry = typeof streamId === "number" ? this.streams.get(streamId) : undefined;
    if (!entry) throw new ProtocolError(`stream ${String(streamId)} is not open`);
    return entry;
  }

  private respond(id: number, response: Record<string, unknown>): void {
    this.send({ type: "response_ok", request_id: id, response });
  }

  /** Sends an answer whose rows were counted in `budget`, settling it once the answer is written out. */
  private respondLarge(id: number, response: Record<string, unknown>, budget: ResponseBudget): Promise<void> {
    return this.sender.send({ type: "response_ok", request_id: id, response }, !budget.small, () =>
      budget.settle(),
    );
  }

  private send(msg: unknown): void {
    void this.sender.send(msg, false);
  }

  /** Answers request `id` with its failure, or ends the connection when the failure isn't the request's own. */
  private failRequest(id: number, e: unknown): void {
    const answer = wsErrorOf(e, this.requestId);
    if (answer.error) this.send({ type: "response_error", request_id: id, error: answer.error });
    else this.fail(e);
  }

  /** Ends the connection: what closes it is decided in `wsErrorOf`. */
  private fail(e: unknown): void {
    const answer = wsErrorOf(e, this.requestId);
    if (answer.internal) this.deps.log.error({ err: e }, "websocket connection failed");
    this.closeStreams();
    this.ws.close(answer.close.code, answer.close.reason);
  }
}
