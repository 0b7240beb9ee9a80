import { rmSync } from "node:fs";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import net, { type Server, type Socket } from "node:net";
import type { Logger } from "../lib/logger.js";
import { type AnswerSink, asIncoming, type HopExchange } from "./hop-exchange.js";
import { encodeFrame, FrameReader, type HopRequestHead, Kind } from "./hop-frames.js";

/** Hop requests still running this long after the shard starts draining are cut off. */
const DRAIN_DEADLINE_MS = 15_000;

/**
 * A shard's end of the SQL hop: a Unix socket the node's other shards send the SQL requests they
 * receive for this shard's databases on (sql-hop.ts), already parsed, many at once per socket.
 * Each is served as if it had arrived on a connection of this shard's own (`serve`), and its
 * answer goes back framed.
 */
export class HopServer {
  private readonly server: Server;
  private readonly links = new Set<Socket>();
  private readonly running = new Set<HopExchange>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly socketPath: string,
    private readonly serve: (req: IncomingMessage, res: ServerResponse) => void,
    private readonly log: Logger,
  ) {
    this.server = net.createServer((socket) => this.link(socket));
  }

  /** Starts listening (a socket file left by this shard's previous process is replaced). */
  listen(): Promise<void> {
    rmSync(this.socketPath, { force: true });
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.socketPath, () => {
        this.server.off("error", reject);
        // A failed accept is emitted here; the server goes on listening.
        this.server.on("error", () => {});
        resolve();
      });
    });
  }

  /** Takes no more requests, lets those running finish (cut after a deadline), then closes the links. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.server.close();
      const deadline = Date.now() + DRAIN_DEADLINE_MS;
      while (this.running.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      for (const x of this.running) x.control.destroy();
      for (const s of this.links) s.destroy();
      rmSync(this.socketPath, { force: true });
    })();
    return this.closing;
  }

  private link(socket: Socket): void {
    this.links.add(socket);
    const reader = new FrameReader();
    const open = new Map<number, HopExchange>();
    socket.on("data", (chunk: Buffer) => {
      let frames: ReturnType<FrameReader["push"]>;
      try {
        frames = reader.push(chunk);
      } catch (e) {
        this.log.error({ err: e }, "a shard sent a hop frame that can't be read: its link is closed");
        socket.destroy();
        return;
      }
      for (const f of frames) {
        if (f.kind === Kind.Request) this.start(socket, open, f.id, f.head as HopRequestHead, f.payload);
        else if (f.kind === Kind.Abort) open.get(f.id)?.control.destroy(true);
        else if (f.kind === Kind.Pause) open.get(f.id)?.control.pause(true);
        else if (f.kind === Kind.Resume) open.get(f.id)?.control.pause(false);
      }
    });
    socket.on("drain", () => {
      for (const x of open.values()) x.control.linkDrained();
    });
    const gone = () => {
      this.links.delete(socket);
      // The sender is gone, and its clients with it: nothing will take these answers.
      for (const x of open.values()) x.control.destroy(true);
      open.clear();
    };
    socket.on("close", gone);
    socket.on("error", () => socket.destroy());
  }

  private start(
    socket: Socket,
    open: Map<number, HopExchange>,
    id: number,
    head: HopRequestHead,
    body: Buffer,
  ): void {
    if (this.closing) {
      // A sender that sent before it saw this shard stop: nothing ran, it may send again.
      socket.write(encodeFrame(Kind.Abort, id, { refused: true }));
      return;
    }
    const x = asIncoming(head, body, sinkOf(socket, id));
    open.set(id, x);
    this.running.add(x);
    x.control.once("close", () => {
      open.delete(id);
      this.running.delete(x);
    });
    this.serve(x.req, x.res);
  }
}

/** Frames an answer's parts onto the link, several frames of one turn in one write. */
function sinkOf(socket: Socket, id: number): AnswerSink {
  const send = (frame: Buffer) => {
    if (socket.destroyed) return;
    if (!socket.writableCorked) {
      socket.cork();
      process.nextTick(() => socket.uncork());
    }
    socket.write(frame);
  };
  return {
    whole: (status, headers, body) =>
      send(encodeFrame(Kind.Answer, id, { status, headers: plain(headers) }, body)),
    head: (status, headers) => send(encodeFrame(Kind.Head, id, { status, headers: plain(headers) })),
    chunk: (bytes) => send(encodeFrame(Kind.Chunk, id, undefined, bytes)),
    end: (bytes) => send(encodeFrame(Kind.End, id, undefined, bytes)),
    abort: () => send(encodeFrame(Kind.Abort, id)),
    hasRoom: () => !socket.writableNeedDrain,
  };
}

function plain(headers: OutgoingHttpHeaders): Record<string, string | number | string[]> {
  const out: Record<string, string | number | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = v as string | number | string[];
  return out;
}
