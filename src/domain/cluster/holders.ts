import { OutageTolerantCache } from "../../lib/outage-cache.js";
import type { StoreAccess } from "../core/ports.js";

/** A node as another node reaches it. */
export interface NodeAddress {
  id: string;
  url: string;
}

/** How long a location's holder is believed without asking the store again (as the directory). */
export const HOLDERS_TTL_MS = 1000;

/**
 * Which node holds each location, as the data plane needs it to send a request on to the node
 * that serves a database. Locations change hands only when an administrator moves one, so the
 * answer is cached for a second, like the data plane's other views; the fresh answer of a
 * concurrent miss is shared rather than read once per request, and while the store is out of
 * reach the last answer is used (ADR 0022), so writes sent on to another node don't need it.
 */
export class LocationHolders {
  private readonly cache: OutageTolerantCache<NodeAddress | undefined>;

  constructor(
    private readonly store: StoreAccess,
    ttlMs = HOLDERS_TTL_MS,
  ) {
    this.cache = new OutageTolerantCache(ttlMs);
  }

  /** The holder if known and fresh, without waiting; undefined means "ask `of`". */
  peek(location: string, now = Date.now()): { holder: NodeAddress | undefined; at: number } | undefined {
    const hit = this.cache.fresh(location, now);
    return hit && { holder: hit.value, at: hit.at };
  }

  /** The node holding `location`; undefined when none does. */
  of(location: string): NodeAddress | undefined | Promise<NodeAddress | undefined> {
    return this.cache.get(location, async () => {
      const row = await this.store.read((r) => r.nodes.holderOf(location));
      return row ? { id: row.id, url: row.url } : undefined;
    });
  }
}
