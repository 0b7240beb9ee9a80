import type { IncomingMessage } from "node:http";

/** The most of a request body kept for a second try; larger bodies are never sent twice. */
export const REPLAY_LIMIT_BYTES = 1024 * 1024;

/**
 * Whether a failed forward can be sent again on a fresh connection, because the holder provably
 * never took it: the request went out on a pooled connection the holder had already closed (it
 * restarted, died, or its keep-alive timer fired as the request left), and the holder's kernel
 * answered with a reset. A holder that read the request and then went away closes cleanly
 * instead ("socket hang up", no system call): that one may have run it, so it is never replayed.
 */
export function closedBeforeTaken(e: unknown, reusedSocket: boolean): boolean {
  const err = e as NodeJS.ErrnoException;
  if (!reusedSocket || !err.syscall) return false;
  return err.code === "ECONNRESET" || err.code === "EPIPE";
}

/**
 * Keeps a copy of the request body as it flows to the holder, so a request that met a stale
 * pooled connection can be sent again; dropped once the holder answers or the body outgrows
 * {@link REPLAY_LIMIT_BYTES}.
 */
export class BodyCopy {
  private chunks: Buffer[] | null = [];
  private bytes = 0;

  constructor(private readonly req: IncomingMessage) {
    req.on("data", this.keep);
  }

  private readonly keep = (chunk: Buffer): void => {
    if (!this.chunks) return;
    this.bytes += chunk.length;
    if (this.bytes > REPLAY_LIMIT_BYTES) this.drop();
    else this.chunks.push(chunk);
  };

  /** What was read so far, or null when it can't be sent again. */
  sofar(): Buffer[] | null {
    return this.chunks;
  }

  drop(): void {
    this.chunks = null;
    this.req.off("data", this.keep);
  }
}
