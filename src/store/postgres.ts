import {
  Kysely,
  type KyselyPlugin,
  OperationNodeTransformer,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  PostgresDialect,
  type PrimitiveValueListNode,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
  type ValueNode,
} from "kysely";
import { Pool, TypeOverrides } from "pg";
import { StartError } from "../errors.js";
import { postgresDialect } from "./dialect.js";
import { GuardedPool } from "./postgres-pool.js";
import type { DB } from "./schema.js";
import { Store } from "./store.js";

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * Opens the control-plane store on a PostgreSQL server and migrates it.
 *
 * Counters are `bigint`, and `count(*)`/`sum()` yield `bigint`/`numeric`, which pg returns as
 * strings by default; the row types promise numbers, so this pool (and only this pool: other pg
 * users in the process keep pg's defaults) parses both as JS numbers.
 */
export async function openPostgresStore(
  url: string,
  opts: {
    poolSize?: number;
    /** How long a query may go unanswered once the store is open (`SHOAL_STORE_TIMEOUT_MS`); 0: no limit. */
    queryTimeoutMs?: number;
  } = {},
): Promise<Store> {
  const types = numberTypes();
  // Bounded waits: an unreachable server fails a request (and lets a shutdown finish) instead
  // of holding it for as long as TCP takes to give up. Keepalives find a dead idle connection.
  const pool = new Pool({
    connectionString: url,
    max: opts.poolSize ?? 10,
    types,
    // Under a short query limit, making a connection waits no longer than a query may.
    connectionTimeoutMillis: Math.min(10_000, opts.queryTimeoutMs || 10_000),
    keepAlive: true,
  });
  // An idle client whose connection drops (server restart, network) is reported on the pool; pg
  // already discards it and the next query reconnects, but an unheard "error" event would end the
  // process.
  pool.on("error", () => {});
  const guarded = new GuardedPool(pool);
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: guarded }),
    plugins: [new BindLikeSqlite()],
  });
  const store = new Store(db, postgresDialect);
  try {
    await pool.query("select 1").catch((e: unknown) => {
      throw unreachable(url, e);
    });
    await store.migrate();
    guarded.limitQueries(opts.queryTimeoutMs ?? 0);
  } catch (e) {
    await store.close();
    throw e;
  }
  return store;
}

/** pg's type parsers with `bigint` and `numeric` read as JS numbers, as the row types promise. */
export function numberTypes(): TypeOverrides {
  const types = new TypeOverrides();
  types.setTypeParser(INT8_OID, "text", Number);
  types.setTypeParser(NUMERIC_OID, "text", Number);
  return types;
}

/**
 * One line saying why the server can't be used, naming it without its password. A server that
 * doesn't answer may come back (exit code 1); one that refuses the login or the database won't
 * until the settings change (2).
 */
function unreachable(url: string, e: unknown): StartError {
  const err = e as { code?: string; message?: string; errors?: Array<{ code?: string; message?: string }> };
  // Node reports a refused connection to a name with several addresses as an AggregateError with
  // an empty message; the first attempt's error says what happened.
  const first = err.errors?.[0] ?? err;
  const reason = first.message?.trim() || err.message?.trim() || first.code || String(e);
  const connection = /^E[A-Z]+$/.test(first.code ?? err.code ?? "") || /timeout/i.test(reason);
  return new StartError(
    `the control-plane store at ${withoutPassword(url)} (SHOAL_METADATA_URL) can't be used: ${reason}`,
    connection ? 1 : 2,
  );
}

/** `url` with its password masked, for messages and logs. */
export function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "SHOAL_METADATA_URL";
  }
}

/**
 * Gives parameters the meaning the SQLite adapter (libsql-driver.ts) gives them, so a value that
 * works on one dialect works on the other: pg would send a boolean as 'true' (rejected by an
 * integer column) and a Date in local time with an offset (not the ISO text stored everywhere else).
 */
class BindLikeSqlite implements KyselyPlugin {
  private readonly transformer = new (class extends OperationNodeTransformer {
    protected override transformValue(node: ValueNode): ValueNode {
      return { ...super.transformValue(node), value: bindable(node.value) };
    }

    protected override transformPrimitiveValueList(node: PrimitiveValueListNode): PrimitiveValueListNode {
      return { ...super.transformPrimitiveValueList(node), values: node.values.map(bindable) };
    }
  })();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node, args.queryId);
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}

function bindable(p: unknown): unknown {
  if (typeof p === "boolean") return p ? 1 : 0;
  if (p instanceof Date) return p.toISOString();
  if (p === undefined) return null;
  if (p !== null && typeof p === "object" && !(p instanceof Uint8Array)) {
    throw new TypeError(`cannot bind a ${p.constructor?.name ?? "object"} to a store parameter`);
  }
  return p;
}
