import { type ChildProcess, fork } from "node:child_process";
import type { Socket } from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Channel } from "./channel.js";
import type { PrimaryMethods, ShardInit, ShardMethods } from "./protocol.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** Run from the sources (tests, `npm run dev`), a shard runs its TypeScript through tsx too. */
const FROM_SOURCES = fileURLToPath(import.meta.url).endsWith(".ts");
const ENTRY = path.join(HERE, FROM_SOURCES ? "shard-main.ts" : "shard-main.js");

/**
 * Takes a socket this process read from out of its hands, with every byte read so far: the head
 * given, and whatever arrived after it into the stream's buffer. Its reading stops first, in this
 * same turn of the event loop: once sent, what this process's handle would read is dropped
 * (node sets its `onread` to nothing), so the bytes must stay in the kernel for the shard.
 */
function detach(socket: Socket, head: Buffer | undefined): Buffer | undefined {
  const parts: Buffer[] = head ? [head] : [];
  for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null)
    parts.push(chunk);
  (socket as unknown as { _handle?: { readStop?(): number } })._handle?.readStop?.();
  return parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

/** How the shard ended, for the log and for deciding how soon to start it again. */
export interface ShardExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Killed by the watchdog, not by itself. */
  killed: boolean;
  /** Why it never started (fork failed: no memory, no more processes allowed). */
  failedToStart?: string;
}

/**
 * One shard: a child process running the data plane for the databases it owns. This object is
 * its parent's end, across restarts: the pipe of calls both ways, the hand-over of connections,
 * and how the process ended. `start` starts a process; `ready` settles once it serves.
 */
export class ShardProcess {
  private child: ChildProcess | undefined;
  private channel: Channel<PrimaryMethods, ShardMethods> | undefined;
  private killedByWatchdog = false;
  private readonly handlers = new Map<string, (data: unknown) => void>();
  /** Connections sent that the shard hasn't taken yet. */
  private readonly inFlight = new Set<{
    socket: Socket;
    bytes: Buffer | undefined;
    undelivered: (socket: Socket, head: Buffer | undefined) => void;
  }>();
  /** Settles once the current process said it is ready; rejects if it ended before. */
  ready: Promise<void> = Promise.reject(new Error("not started"));
  /** Settles when the current process has ended. */
  exited: Promise<ShardExit> = Promise.resolve({ code: 0, signal: null, killed: false });
  /** Whether the current process is ready and serving. */
  serving = false;
  /** When the current process was started (ms). */
  startedAt = 0;

  constructor(readonly index: number) {
    this.ready.catch(() => {});
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The shard's methods; calls fail with `ChannelClosedError` once it is gone. */
  get remote() {
    if (!this.channel) throw new Error(`shard ${this.index} was never started`);
    return this.channel.remote;
  }

  start(init: ShardInit, primary: PrimaryMethods, logLines: ((line: string) => void) | undefined): void {
    // Its index on the command line tells an operator's `ps` which shard a process is.
    const child = fork(ENTRY, ["--shard", String(this.index)], {
      execArgv: FROM_SOURCES ? ["--import", "tsx"] : [],
      serialization: "advanced",
      // Its log lines go straight to the node's output unless the node logs elsewhere (logger.ts).
      stdio: ["ignore", logLines ? "pipe" : "inherit", "inherit", "ipc"],
    });
    this.child = child;
    this.serving = false;
    this.startedAt = Date.now();
    this.killedByWatchdog = false;
    const channel = new Channel<PrimaryMethods, ShardMethods>(child, primary);
    this.channel = channel;
    for (const [name, fn] of this.handlers) channel.on(name, fn);
    // readline passes on the pipe's errors as its own: heard, so one can't end the primary.
    if (child.stdout && logLines)
      createInterface({ input: child.stdout })
        .on("line", logLines)
        .on("error", () => {});
    this.exited = new Promise((resolve) => {
      const ended = (exit: ShardExit) => {
        this.serving = false;
        channel.close(`shard ${this.index} ended`);
        // Still ours: sent into a pipe the shard never read. They go to its next process.
        for (const e of [...this.inFlight]) {
          this.inFlight.delete(e);
          if (!e.socket.destroyed) e.undelivered(e.socket, e.bytes);
        }
        resolve(exit);
      };
      child.once("exit", (code, signal) => ended({ code, signal, killed: this.killedByWatchdog }));
      // Every message is sent with a callback (channel.ts), so what comes here is a fork that
      // failed, which has no `exit` to follow, or a kill that failed. Unheard, it would end the node.
      child.on("error", (e) => {
        if (child.pid === undefined)
          ended({ code: null, signal: null, killed: false, failedToStart: e.message });
      });
    });
    this.ready = new Promise<void>((resolve, reject) => {
      channel.on("ready", () => {
        this.serving = true;
        resolve();
      });
      void this.exited.then((e) =>
        reject(new Error(`shard ${this.index} ended before it was ready (${e.signal ?? `exit ${e.code}`})`)),
      );
    });
    this.ready.catch(() => {});
    channel.emit("init", init);
  }

  /** Follows an event of the shard's, across its restarts. */
  on(event: string, fn: (data: unknown) => void): void {
    this.handlers.set(event, fn);
    this.channel?.on(event, fn);
  }

  emit(event: string, data: unknown): void {
    this.channel?.emit(event, data);
  }

  /**
   * Hands a connection to the shard; false if it can't take it now (ended). One the shard never
   * got (it ended meanwhile; its pipe keeps connections queued until the last one is taken) comes
   * back through `undelivered`, whole, with the bytes read from it.
   */
  handOver(
    socket: Socket,
    head: Buffer | undefined,
    undelivered: (socket: Socket, head: Buffer | undefined) => void,
    tls = false,
  ): boolean {
    const channel = this.channel;
    if (!channel || channel.isClosed) return false;
    const bytes = detach(socket, head);
    const entry = { socket, bytes, undelivered };
    this.inFlight.add(entry);
    return channel.handOver(
      socket,
      bytes,
      0,
      (error) => {
        if (!this.inFlight.delete(entry)) return;
        if (error && !socket.destroyed) undelivered(socket, bytes);
      },
      tls,
    );
  }

  /** Ends the shard at once (a watchdog kill: its event loop stopped answering). */
  kill(): void {
    if (!this.alive) return;
    this.killedByWatchdog = true;
    this.child?.kill("SIGKILL");
  }

  /** Asks the shard to finish and exit; kills it if it hasn't within `ms`. */
  async stop(ms: number): Promise<void> {
    if (!this.alive) return;
    const timer = setTimeout(() => this.child?.kill("SIGKILL"), ms);
    this.channel?.emit("stop", null);
    await this.exited;
    clearTimeout(timer);
  }
}
