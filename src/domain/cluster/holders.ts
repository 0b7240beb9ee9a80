import type { StoreAccess } from "../core/ports.js";

/** A node as another node reaches it. */
export interface NodeAddress {
  id: string;
  url: string;
}

/** How long a location's holder is believed without asking the store again (as the directory). */
export const HOLDERS_TTL_MS = 1000;

interface Entry {
  holder: NodeAddress | undefined;
  at: number;
}

/**
 * Which node holds each location, as the data plane needs it to send a request on to the node
 * that serves a database. Locations change hands only when an administrator moves one, so the
 * answer is cached for a second, like the data plane's other views; the fresh answer of a
 * concurrent miss is shared rather than read once per request.
 */
export class LocationHolders {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<NodeAddress | undefined>>();

  constructor(
    private readonly store: StoreAccess,
    private readonly ttlMs = HOLDERS_TTL_MS,
  ) {}

  /** The holder if known and fresh, without waiting; undefined means "ask `of`". */
  peek(location: string, now = Date.now()): Entry | undefined {
    const hit = this.entries.get(location);
    return hit && now - hit.at < this.ttlMs ? hit : undefined;
  }

  /** The node holding `location`; undefined when none does. */
  of(location: string): NodeAddress | undefined | Promise<NodeAddress | undefined> {
    const hit = this.peek(location);
    if (hit) return hit.holder;
    const running = this.pending.get(location);
    if (running) return running;
    const asked = this.store
      .read((r) => r.nodes.holderOf(location))
      .then((row) => {
        const holder = row ? { id: row.id, url: row.url } : undefined;
        this.entries.set(location, { holder, at: Date.now() });
        return holder;
      })
      .finally(() => this.pending.delete(location));
    this.pending.set(location, asked);
    return asked;
  }
}
