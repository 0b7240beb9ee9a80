import type { Socket } from "node:net";
import { errorFromWire, errorToWire, type WireError } from "./wire-errors.js";

/** The end of an IPC pipe: a child process seen from its parent, or `process` seen from the child. */
export interface Endpoint {
  send(
    message: unknown,
    handle?: Socket,
    options?: { keepOpen?: boolean },
    callback?: (error: Error | null) => void,
  ): boolean;
  on(event: "message", listener: (message: unknown, handle?: Socket) => void): unknown;
  off(event: "message", listener: (message: unknown, handle?: Socket) => void): unknown;
  once(event: "disconnect", listener: () => void): unknown;
  readonly connected: boolean;
}

/** Methods one side answers for the other: each takes cloneable arguments and returns a cloneable value. */
// biome-ignore lint/suspicious/noExplicitAny: a method table of any shape; each side names its own.
export type Methods = Record<string, (...args: any[]) => unknown>;

type Call = { t: "call"; id: number; method: string; args: unknown[] };
type Reply =
  | { t: "reply"; id: number; ok: true; value: unknown }
  | { t: "reply"; id: number; ok: false; error: WireError };
type Event = { t: "event"; name: string; data: unknown };
/** A connection handed over with the bytes already read from it (the request head). */
/** A connection handed over; `tls`: its first bytes begin a TLS handshake the receiver answers. */
type Conn = { t: "conn"; head: Uint8Array | null; port: number; tls?: boolean };
type Message = Call | Reply | Event | Conn;

/** The calling side's view of the other side's methods: every answer comes back as a promise. */
export type Remote<M extends Methods> = {
  [K in keyof M]: (...args: Parameters<M[K]>) => Promise<Awaited<ReturnType<M[K]>>>;
};

/** Calls the other side made or got that had no answer when the pipe closed. */
export class ChannelClosedError extends Error {
  readonly code = "SHARD_GONE";
}

/**
 * Requests and answers over a process's IPC pipe (advanced serialization: Buffers, Maps, Sets and
 * bigints cross as they are), in both directions at once, plus one-way events and handed-over
 * sockets. Errors thrown by a method reach the caller as the same class where it is one the
 * other side's code tells apart (see wire-errors.ts); the rest as plain errors with their message.
 */
export class Channel<Local extends Methods, Other extends Methods> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  private readonly events = new Map<string, (data: unknown) => void>();
  private connHandler:
    | ((socket: Socket, head: Buffer | undefined, port: number, tls: boolean) => void)
    | undefined;
  private closed = false;
  private readonly listener = (m: unknown, handle?: Socket) => this.receive(m as Message, handle);
  private readonly sendFailed = (error: Error | null) => {
    if (error) this.close(`the other process is gone (${error.message})`);
  };
  /** The other side's methods, called as if local. */
  readonly remote: Remote<Other>;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly local: Local,
  ) {
    endpoint.on("message", this.listener);
    // The pipe closed (the other process ended): nothing waiting will be answered.
    endpoint.once("disconnect", () => this.close());
    this.remote = new Proxy({} as Remote<Other>, {
      get:
        (_, method) =>
        (...args: unknown[]) =>
          this.call(String(method), args),
    });
  }

  /** Sends a one-way event; dropped when the pipe is closed. */
  emit(name: string, data: unknown): void {
    try {
      this.post({ t: "event", name, data });
    } catch {
      // An event whose data can't cross is dropped, as one sent into a closed pipe is.
    }
  }

  on(name: string, fn: (data: unknown) => void): void {
    this.events.set(name, fn);
  }

  /**
   * Hands `socket` over with the bytes read from it so far; false when the pipe is gone. The
   * socket stays this side's until `sent` says the other side has it (null: this side's copy is
   * closed then) or that it never will (an error: the socket is still whole, here).
   */
  handOver(
    socket: Socket,
    head: Buffer | undefined,
    port: number,
    sent: (error: Error | null) => void,
    tls = false,
  ): boolean {
    if (this.closed || !this.endpoint.connected) return false;
    const msg: Conn = tls
      ? { t: "conn", head: head ?? null, port, tls }
      : { t: "conn", head: head ?? null, port };
    try {
      this.endpoint.send(msg, socket, { keepOpen: true }, (error) => {
        if (!error) socket.destroy();
        sent(error);
      });
      return true;
    } catch {
      return false;
    }
  }

  onConnection(fn: (socket: Socket, head: Buffer | undefined, port: number, tls: boolean) => void): void {
    this.connHandler = fn;
  }

  /** Fails every call still waiting for an answer: the other side is gone. */
  close(reason = "the other process is gone"): void {
    if (this.closed) return;
    this.closed = true;
    this.endpoint.off("message", this.listener);
    for (const p of this.pending.values()) p.reject(new ChannelClosedError(reason));
    this.pending.clear();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private call(method: string, args: unknown[]): Promise<unknown> {
    if (this.closed)
      return Promise.reject(new ChannelClosedError(`can't call ${method}: the other process is gone`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      try {
        if (this.post({ t: "call", id, method, args })) return;
        reject(new ChannelClosedError(`can't call ${method}: the other process is gone`));
      } catch (e) {
        reject(e);
      }
      this.pending.delete(id);
    });
  }

  /**
   * Sends one message; false when the pipe is gone. Throws what can't be sent at all (a value the
   * serializer refuses): the pipe is fine, only that message is lost.
   */
  private post(m: Message): boolean {
    if (this.closed || !this.endpoint.connected) return false;
    try {
      // With a callback, a write that fails once queued (EPIPE: the other process died and this
      // one hasn't read the pipe's end yet) is reported here. Without one, node emits it as an
      // `error` event, which nobody listens to: it would end this process with the other.
      this.endpoint.send(m, undefined, undefined, this.sendFailed);
      return true;
    } catch (e) {
      if (this.closed || !this.endpoint.connected) return false;
      throw e;
    }
  }

  private receive(m: Message, handle: Socket | undefined): void {
    switch (m.t) {
      case "call":
        void this.answer(m);
        return;
      case "reply": {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.ok) p.resolve(m.value);
        else p.reject(errorFromWire(m.error));
        return;
      }
      case "event":
        this.events.get(m.name)?.(m.data);
        return;
      case "conn":
        if (!handle) return;
        if (this.connHandler)
          this.connHandler(handle, m.head ? Buffer.from(m.head) : undefined, m.port, m.tls === true);
        else handle.destroy();
    }
  }

  private async answer(m: Call): Promise<void> {
    const fn = this.local[m.method];
    let reply: Reply;
    try {
      if (!fn) throw new Error(`no such method across the pipe: ${m.method}`);
      reply = { t: "reply", id: m.id, ok: true, value: await fn(...m.args) };
    } catch (e) {
      reply = { t: "reply", id: m.id, ok: false, error: errorToWire(e) };
    }
    try {
      this.post(reply);
    } catch (e) {
      // An answer that can't cross still ends the call: unanswered, the caller would wait forever.
      const why = new Error(`the answer to ${m.method} couldn't be sent: ${(e as Error).message}`);
      this.post({ t: "reply", id: m.id, ok: false, error: errorToWire(why) });
    }
  }
}
