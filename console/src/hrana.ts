import { ApiError, api, session } from "./api.js";

/** Hrana's value encoding: integers travel as strings so no precision is lost. */
export type Value =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };

export interface Column {
  name: string | null;
  decltype: string | null;
}

export interface StatementResult {
  cols: Column[];
  rows: Value[][];
  affected_row_count: number;
  last_insert_rowid: string | null;
  rows_read?: number;
  rows_written?: number;
  query_duration_ms?: number;
}

export interface StepOutcome {
  sql: string;
  result?: StatementResult;
  error?: { message: string; code?: string };
  /** Not run because an earlier statement failed. */
  skipped?: boolean;
}

/** How long the editor's database tokens live; the console mints a new one before that. */
const TOKEN_LIFETIME = "15m";
const TOKEN_REUSE_MS = 12 * 60_000;
const tokens = new Map<string, { jwt: string; at: number }>();

/** A short-lived database token for the editor, minted with the signed-in API token. */
async function editorToken(base: string): Promise<string> {
  const cached = tokens.get(base);
  if (cached && Date.now() - cached.at < TOKEN_REUSE_MS) return cached.jwt;
  const r = await api.post<{ jwt: string }>(
    `${base}/auth/tokens?expiration=${TOKEN_LIFETIME}&authorization=full-access`,
  );
  tokens.set(base, { jwt: r.jwt, at: Date.now() });
  return r.jwt;
}

/** Forgets the editor's token of a database (after a rotation, or when it was refused). */
export function forgetEditorToken(base: string): void {
  tokens.delete(base);
}

/**
 * Runs statements in order on the database's data plane (`/db/<org>/<db>/v2/pipeline`, as any
 * Hrana client would) in one batch: each runs only if the one before succeeded.
 */
export async function runStatements(
  base: string,
  org: string,
  db: string,
  statements: string[],
): Promise<StepOutcome[]> {
  if (!session.token) throw new ApiError("You are signed out.", 401);
  const jwt = await editorToken(base);
  const steps = statements.map((sql, i) => ({
    stmt: { sql, want_rows: true },
    ...(i > 0 ? { condition: { type: "ok", step: i - 1 } } : {}),
  }));
  let res: Response;
  try {
    res = await fetch(`/db/${encodeURIComponent(org)}/${encodeURIComponent(db)}/v2/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${jwt}`, "content-type": "application/json" },
      body: JSON.stringify({
        baton: null,
        requests: [{ type: "batch", batch: { steps } }, { type: "close" }],
      }),
      credentials: "omit",
      cache: "no-store",
    });
  } catch {
    throw new ApiError("The database could not be reached. Check that Shoal is running.", 0);
  }
  const body = (await res.json().catch(() => ({}))) as {
    message?: string;
    code?: string;
    results?: Array<{
      type: string;
      response?: { result?: BatchResult };
      error?: { message: string; code?: string };
    }>;
  };
  if (!res.ok) {
    if (res.status === 401) forgetEditorToken(base);
    const code = body.code ? ` (${body.code})` : "";
    throw new ApiError(
      `The database refused the request${code}: ${body.message ?? `status ${res.status}`}`,
      res.status,
    );
  }
  const first = body.results?.[0];
  if (first?.type !== "ok" || !first.response?.result) {
    const e = first?.error;
    throw new ApiError(
      e
        ? `${e.message}${e.code ? ` (${e.code})` : ""}`
        : "The database sent an answer the console can't read.",
      0,
    );
  }
  const { step_results, step_errors } = first.response.result;
  let failed = false;
  return statements.map((sql, i) => {
    const error = step_errors[i];
    const result = step_results[i];
    if (error) failed = true;
    if (error) return { sql, error };
    if (result) return { sql, result };
    return { sql, skipped: failed };
  });
}

interface BatchResult {
  step_results: Array<StatementResult | null>;
  step_errors: Array<{ message: string; code?: string } | null>;
}
