/**
 * A TCP proxy a test controls, put between two parts that talk over the network (a node and
 * PostgreSQL, a node and another node, a node and the bucket) to break the link between them
 * as a network does:
 * - `cut("reset")`: connections are closed and new ones refused at once (a host that's down, a
 *   firewall rejecting);
 * - `cut("blackhole")`: connections stay open but nothing gets through, either way, and new ones
 *   are accepted and then hang (a partition: nothing says so). What was sent meanwhile arrives
 *   once the link heals, as TCP's retransmissions deliver it after a short partition;
 * - `cut("one-way", "to-target" | "from-target")`: bytes in one direction are held the same way;
 * - `delay(ms)`: every piece of data waits `ms` before it is passed on;
 * - `heal()`: back to passing everything, what was held first.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

export type CutMode = "reset" | "blackhole" | "one-way";
export type Direction = "to-target" | "from-target";

interface Pair {
  client: Socket;
  upstream: Socket;
}

export class TcpProxy {
  private readonly server: Server;
  private readonly pairs = new Set<Pair>();
  private mode: CutMode | undefined;
  private dropped: Direction | undefined;
  private delayMs = 0;
  private targetPort: number | undefined;
  /** Connections accepted since the start, for tests that want to see a link was used. */
  accepted = 0;

  private constructor(private readonly targetHost: string) {
    this.server = createServer((client) => this.accept(client));
  }

  /** A proxy listening on a free loopback port; its target can be set later (`target`). */
  static async start(targetPort?: number, targetHost = "127.0.0.1"): Promise<TcpProxy> {
    const p = new TcpProxy(targetHost);
    p.targetPort = targetPort;
    await new Promise<void>((resolve) => p.server.listen(0, "127.0.0.1", resolve));
    return p;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  /** Where connections go from now on (existing ones keep theirs). */
  target(port: number): void {
    this.targetPort = port;
  }

  cut(mode: CutMode, direction: Direction = "to-target"): void {
    this.mode = mode;
    this.dropped = mode === "one-way" ? direction : undefined;
    if (mode === "reset") for (const p of [...this.pairs]) this.drop(p);
  }

  delay(ms: number): void {
    this.delayMs = ms;
  }

  heal(): void {
    this.mode = undefined;
    this.dropped = undefined;
    this.delayMs = 0;
  }

  async close(): Promise<void> {
    for (const p of [...this.pairs]) this.drop(p);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.accepted++;
    client.on("error", () => {});
    if (this.mode === "reset" || this.targetPort === undefined) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(this.targetPort, this.targetHost);
    upstream.on("error", () => {});
    const pair = { client, upstream };
    this.pairs.add(pair);
    this.pipe(client, upstream, "to-target");
    this.pipe(upstream, client, "from-target");
    const end = () => this.drop(pair);
    client.once("close", end);
    upstream.once("close", end);
  }

  /** Whether bytes going `way` are held now. */
  private held(way: Direction): boolean {
    return this.mode === "blackhole" || (this.mode === "one-way" && this.dropped === way);
  }

  /**
   * Passes `from`'s data to `to` in order, after the delay if any; while the link is cut that
   * way, data waits (and `from` is paused once some is waiting, as a full TCP window stops a sender).
   */
  private pipe(from: Socket, to: Socket, way: Direction): void {
    const waiting: Buffer[] = [];
    const pass = (chunk: Buffer) => {
      if (this.delayMs > 0) setTimeout(() => to.destroyed || to.write(chunk), this.delayMs);
      else if (!to.destroyed) to.write(chunk);
    };
    const flush = () => {
      if (this.held(way)) return void setTimeout(flush, 20);
      for (const chunk of waiting.splice(0)) pass(chunk);
      from.resume();
    };
    from.on("data", (chunk: Buffer) => {
      if (waiting.length === 0 && !this.held(way)) return pass(chunk);
      waiting.push(chunk);
      if (waiting.length === 1) {
        from.pause();
        setTimeout(flush, 20);
      }
    });
    from.on("end", () => to.end());
  }

  private drop(p: Pair): void {
    if (!this.pairs.delete(p)) return;
    p.client.resetAndDestroy();
    p.upstream.resetAndDestroy();
  }
}
