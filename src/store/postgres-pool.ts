import type { PostgresPool, PostgresPoolClient } from "kysely";
import type { Pool, PoolClient, QueryConfig } from "pg";
import { isConnectionLoss } from "./dialect.js";

/**
 * How long a session may sit inside a transaction without a statement before the server ends it.
 * Shoal's transactions only touch the store, so this never ends one at work; it ends one whose
 * node was cut off in the middle, which would otherwise keep its row locks (a group's lease row,
 * blocking the failover that the cut calls for) until the server's TCP gave up, hours later.
 */
const IDLE_IN_TRANSACTION_MS = 60_000;

/**
 * pg's pool as the store uses it, made safe for a server that goes away or goes silent:
 * - every connection listens for errors for its whole life. pg's pool listens only while a
 *   connection is idle in it, so one lost while checked out (between a transaction's statements)
 *   emitted an "error" nobody heard, which ends a Node process;
 * - once `limitQueries` is called (after the migrations, which may take long), a query unanswered
 *   for that long fails, and a connection that failed or timed out is dropped as it is released
 *   rather than handed to the next caller, whose query would queue behind the unanswered one.
 */
export class GuardedPool implements PostgresPool {
  private queryTimeoutMs = 0;
  /** Connections whose session was set up (see IDLE_IN_TRANSACTION_MS). */
  private readonly prepared = new WeakSet<PoolClient>();

  constructor(private readonly pool: Pool) {
    // The query that was running, if any, fails with the error; pg marks the client unusable.
    pool.on("connect", (client) => client.on("error", () => {}));
  }

  /** From now on, queries fail once unanswered for `ms` (0: never). */
  limitQueries(ms: number): void {
    this.queryTimeoutMs = ms;
  }

  async connect(): Promise<PostgresPoolClient> {
    const client = await this.pool.connect();
    const timeout = this.queryTimeoutMs || undefined;
    let lost: Error | undefined;
    if (!this.prepared.has(client)) {
      try {
        await client.query({
          text: `SET idle_in_transaction_session_timeout = ${IDLE_IN_TRANSACTION_MS}`,
          query_timeout: timeout,
        } as QueryConfig);
      } catch (e) {
        if (isConnectionLoss(e)) {
          client.release(e as Error);
          throw e;
        }
        // A server that doesn't know the setting (or a pooler that refuses it) still serves.
      }
      this.prepared.add(client);
    }
    const query = (text: unknown, values?: readonly unknown[]) => {
      // A cursor (Kysely's streaming) passes through as it is.
      if (typeof text !== "string") return client.query(text as never);
      // pg reads a per-query `query_timeout`; its types don't list it.
      const config: QueryConfig & { query_timeout?: number } = { text, values: values as unknown[] };
      if (timeout) config.query_timeout = timeout;
      return client.query(config).catch((e: unknown) => {
        if (isConnectionLoss(e)) lost = e as Error;
        throw e;
      });
    };
    return { query: query as unknown as PostgresPoolClient["query"], release: () => client.release(lost) };
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}
