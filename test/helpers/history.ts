/**
 * Clients that write and read one database while faults happen, recording what each was
 * answered, and the checks over that history once the faults are healed:
 * - no acknowledged write is lost (it is in the final state);
 * - an answer that says "not written" means it (the write is absent), while an answer whose
 *   outcome can't be known (the client timed out, `DATABASE_NODE_FAILED`, `SHARD_FAILED`, ...)
 *   may go either way;
 * - a client never reads older data than it already read or wrote through the same URL.
 *
 * Each client writes rows `(client, n)` with its own n counting up, and reads the highest n of
 * its own rows: both are plain `@libsql/client`-style Hrana pipelines over HTTP.
 */

/** Codes whose write may or may not have taken effect. */
const OUTCOME_UNKNOWN = new Set([
  "DATABASE_NODE_FAILED",
  "SHARD_FAILED",
  "PRIMARY_FAILED",
  "WRITE_UNCONFIRMED",
  "UNKNOWN",
  "INTERNAL_ERROR",
]);

export interface HistoryOp {
  client: string;
  kind: "write" | "read";
  /** The row written, or the highest of the client's rows read. */
  n: number;
  start: number;
  end: number;
  outcome: "ok" | "refused" | "unknown";
  /** The error code or reason when not ok. */
  why?: string;
}

export interface WorkloadClient {
  name: string;
  /** The database URL (ending in `/`) this client goes through. */
  url: string;
  token: string;
}

async function pipeline(
  c: WorkloadClient,
  sql: string,
  args: unknown[],
  timeoutMs: number,
): Promise<{ ok: true; rows: unknown[][] } | { ok: false; code: string }> {
  let r: Response;
  try {
    r = await fetch(`${c.url}v2/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${c.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        requests: [
          {
            type: "execute",
            stmt: {
              sql,
              args: args.map((a) => ({ type: typeof a === "number" ? "integer" : "text", value: String(a) })),
            },
          },
          { type: "close" },
        ],
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    return { ok: false, code: `client: ${(e as Error).name}` };
  }
  const body = (await r.json().catch(() => ({}))) as {
    code?: string;
    results?: Array<{
      type: string;
      error?: { code?: string };
      response?: { result?: { rows: Array<Array<{ value?: unknown }>> } };
    }>;
  };
  const first = body.results?.[0];
  if (r.status !== 200 || !first) return { ok: false, code: body.code ?? `HTTP ${r.status}` };
  if (first.type !== "ok") return { ok: false, code: first.error?.code ?? "UNKNOWN" };
  return {
    ok: true,
    rows: (first.response?.result?.rows ?? []).map((row) => row.map((v) => v.value ?? null)),
  };
}

function outcomeOf(code: string): "refused" | "unknown" {
  return code.startsWith("client:") || code.startsWith("HTTP 5") || OUTCOME_UNKNOWN.has(code)
    ? "unknown"
    : "refused";
}

/**
 * Runs `clients` until `stop()` is called, each alternating a write and a read, and records the
 * history. The table `t (client TEXT, n INTEGER, PRIMARY KEY (client, n))` must exist.
 */
export function runWorkload(clients: WorkloadClient[], opts: { timeoutMs: number; pauseMs?: number }) {
  const history: HistoryOp[] = [];
  let stopped = false;
  const loops = clients.map(async (c) => {
    let n = 0;
    while (!stopped) {
      n++;
      const ws = Date.now();
      const w = await pipeline(c, "INSERT INTO t (client, n) VALUES (?, ?)", [c.name, n], opts.timeoutMs);
      history.push({
        client: c.name,
        kind: "write",
        n,
        start: ws,
        end: Date.now(),
        outcome: w.ok ? "ok" : outcomeOf(w.code),
        ...(w.ok ? {} : { why: w.code }),
      });
      const rs = Date.now();
      const r = await pipeline(
        c,
        "SELECT coalesce(max(n), 0) FROM t WHERE client = ?",
        [c.name],
        opts.timeoutMs,
      );
      history.push({
        client: c.name,
        kind: "read",
        n: r.ok ? Number(r.rows[0]?.[0] ?? 0) : 0,
        start: rs,
        end: Date.now(),
        outcome: r.ok ? "ok" : outcomeOf(r.code),
        ...(r.ok ? {} : { why: r.code }),
      });
      if (opts.pauseMs) await new Promise((resolve) => setTimeout(resolve, opts.pauseMs));
    }
  });
  return {
    history,
    async stop(): Promise<HistoryOp[]> {
      stopped = true;
      await Promise.all(loops);
      return history;
    },
  };
}

/** What the checks found wrong; empty when the history is sound. */
export function checkHistory(history: HistoryOp[], final: Map<string, Set<number>>): string[] {
  const problems: string[] = [];
  const clients = new Set(history.map((o) => o.client));
  for (const client of clients) {
    const ops = history.filter((o) => o.client === client);
    const present = final.get(client) ?? new Set<number>();
    let floor = 0;
    for (const o of ops) {
      if (o.kind === "write") {
        if (o.outcome === "ok" && !present.has(o.n))
          problems.push(`${client}: acknowledged write ${o.n} lost`);
        if (o.outcome === "refused" && present.has(o.n))
          problems.push(`${client}: write ${o.n} answered ${o.why} (not written) is there`);
        if (o.outcome === "ok") floor = Math.max(floor, o.n);
      } else if (o.outcome === "ok") {
        if (o.n < floor) problems.push(`${client}: read ${o.n} after having seen or written ${floor}`);
        floor = Math.max(floor, o.n);
      }
    }
  }
  return problems;
}

/** Counts of a history's outcomes by kind, for a test's message or a benchmark's figures. */
export function tally(history: HistoryOp[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of history) {
    const k = `${o.kind} ${o.outcome}${o.why ? ` ${o.why}` : ""}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}
