import type { WebSocket } from "ws";
import { writePieces } from "./hrana/json-pieces.js";

/** Bytes handed to a socket and not yet written out past which it stops reading requests... */
const HIGH_WATER = 1024 * 1024;
/** ...and below which it reads again. */
const LOW_WATER = 256 * 1024;

/**
 * Writes a WebSocket connection's messages with backpressure. A large message is encoded a slice
 * at a time (other requests get turns in between); and while the client leaves more than
 * HIGH_WATER of answers unread, the connection stops reading its requests, so a client that
 * sends but doesn't read can't make the server pile up answers for it.
 */
export class WsSender {
  private pending = 0;

  constructor(private readonly ws: WebSocket) {}

  /** Sends `msg`; `onWritten` runs once it is written out (or can't be: the socket closed). */
  async send(msg: unknown, large: boolean, onWritten?: () => void): Promise<void> {
    const text = large && this.open ? await encode(msg) : JSON.stringify(msg);
    if (!this.open) {
      onWritten?.();
      return;
    }
    const size = text.length;
    this.pending += size;
    if (this.pending > HIGH_WATER && !this.ws.isPaused) this.ws.pause();
    this.ws.send(text, () => {
      this.pending -= size;
      if (this.pending < LOW_WATER && this.ws.isPaused) this.ws.resume();
      onWritten?.();
    });
  }

  private get open(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }
}

async function encode(msg: unknown): Promise<string> {
  const parts: string[] = [];
  const rest = await writePieces(msg, 256 * 1024, (chunk) => {
    parts.push(chunk);
    return undefined;
  });
  parts.push(rest);
  return parts.join("");
}
