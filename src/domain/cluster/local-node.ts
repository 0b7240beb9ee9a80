import { StartError } from "../../errors.js";
import type { Logger } from "../../lib/logger.js";
import { type Clock, isoTime } from "../../lib/time.js";
import type { Store } from "../../store/store.js";
import type { Placement } from "../core/ports.js";

/** How often a node tells the store it is alive. */
export const HEARTBEAT_MS = 5_000;
/** A node whose last heartbeat is older than this (three missed beats) counts as gone. */
export const LIVE_WITHIN_MS = 3 * HEARTBEAT_MS;

/** A start-up refusal: this process can't join the nodes already sharing the store. */
export class NodeStartError extends StartError {}

export function isLive(n: { heartbeat_at: string; stopped_at: string | null }, now: Date): boolean {
  return n.stopped_at === null && now.getTime() - Date.parse(n.heartbeat_at) <= LIVE_WITHIN_MS;
}

/**
 * This process as one node of those sharing the store. A node holds locations: it serves their
 * database files, from its own data folder. On start it takes the locations it offers that no
 * node holds; a location stays with its node across restarts and while the node is down (its
 * files are on that node's disk, nowhere else), until an administrator forgets the node.
 */
export class LocalNode implements Placement {
  private held: ReadonlySet<string> = new Set();
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> = Promise.resolve();
  private startedAt = "";

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly log: Logger,
    readonly id: string,
  ) {}

  get nodeId(): string {
    return this.id;
  }

  private readonly watchers: Array<(held: ReadonlySet<string>) => void> = [];

  /** Calls `fn` whenever the locations this node holds change (its join, a takeover of its record). */
  onChange(fn: (held: ReadonlySet<string>) => void): void {
    this.watchers.push(fn);
  }

  private setHeld(held: ReadonlySet<string>): void {
    this.held = held;
    for (const fn of this.watchers) fn(held);
  }

  /** Locations this node holds, as of its start. */
  get locations(): ReadonlySet<string> {
    return this.held;
  }

  holds(location: string): boolean {
    return this.held.has(location);
  }

  /**
   * Registers the node, takes the free locations among `offered` and starts the heartbeat.
   * Refuses a node id whose record says it is live at another address when something still
   * answers there (`answers`); a process that was killed a moment ago doesn't block its restart.
   */
  async join(
    url: string,
    version: string,
    offered: readonly string[],
    answers: (url: string) => Promise<boolean> = async () => true,
  ): Promise<void> {
    const now = this.clock();
    const at = isoTime(now);
    const before = await this.store.read((r) => r.nodes.find(this.id));
    const twin = before && before.url !== url && isLive(before, now) && (await answers(before.url));
    this.setHeld(
      new Set(
        await this.store.write(async (r) => {
          const existing = await r.nodes.find(this.id);
          if (twin && existing) {
            const ago = Math.round((now.getTime() - Date.parse(existing.heartbeat_at)) / 1000);
            throw new NodeStartError(
              `node id ${this.id} is in use by a live node at ${existing.url} (last heartbeat ${ago} s ago): ` +
                "give each process its own SHOAL_NODE_ID or data folder",
            );
          }
          await r.nodes.register({ id: this.id, url, version, started_at: at, heartbeat_at: at });
          await r.nodes.claim(this.id, offered, at);
          return r.nodes.locationsOf(this.id);
        }),
      ),
    );
    this.startedAt = at;
    this.timer = setInterval(() => {
      this.beating = this.heartbeat();
    }, HEARTBEAT_MS);
    this.timer.unref();
    this.log.info({ node: this.id, url, locations: [...this.held] }, "joined the nodes sharing the store");
  }

  /** Stops the heartbeat and records a clean stop, so others see at once that the node is gone. */
  async leave(): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    await this.store
      .write((r) => r.nodes.markStopped(this.id, this.startedAt, isoTime(this.clock())))
      .catch((e: unknown) => this.log.warn({ err: e }, "could not record this node's stop"));
  }

  /** Tells the store this node is alive; run by the timer every `HEARTBEAT_MS`. */
  async heartbeat(): Promise<void> {
    try {
      const ours = await this.store.write((r) =>
        r.nodes.heartbeat(this.id, this.startedAt, isoTime(this.clock())),
      );
      if (ours || !this.timer) return;
      this.log.error(
        { node: this.id },
        "this node's record was taken over (forgotten by an administrator, or another process started with the same SHOAL_NODE_ID); heartbeats stop",
      );
      clearInterval(this.timer);
      this.timer = undefined;
      // Its locations may be another node's now: this process makes and serves no files any more
      // (management calls for them are forwarded, data-plane requests refused) until restarted.
      this.setHeld(new Set());
    } catch (e) {
      this.log.warn({ err: e, node: this.id }, "heartbeat failed; will retry");
    }
  }
}
