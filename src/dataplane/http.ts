import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Deps } from "../domain/context.js";
import { type DataAccess, openDataAccess } from "../domain/data-access.js";
import type { DatabaseLocator } from "../domain/directory.js";
import { AppError, type ErrorKind } from "../errors.js";
import { batchCursorEntries } from "./hrana/cursor.js";
import { dispatch } from "./hrana/dispatch.js";
import { HranaError, ProtocolError } from "./hrana/errors.js";
import type { HttpStreams } from "./hrana/http-streams.js";
import { parseBatch, parseStreamRequest, type StreamRequest } from "./hrana/requests.js";
import { HTTP_SQL_LIMITS, SqlStore } from "./hrana/sql-store.js";
import { HranaStream, type StreamServices } from "./hrana/stream.js";

/** Set by the top-level router for requests that reached a database through its hostname. */
export interface DataPlaneBindings {
  hostLabel?: string;
}

type DataEnv = { Bindings: DataPlaneBindings };

const STATUS: Record<ErrorKind, ContentfulStatusCode> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  limit_exceeded: 429,
  unavailable: 503,
};

/**
 * Errors at the HTTP level. `@libsql/client` surfaces the code only when the content type is
 * exactly `application/json` and the body has `message`; `error` is there too, as sqld sends it.
 */
function errorResponse(
  c: Context<DataEnv>,
  status: ContentfulStatusCode,
  code: string,
  message: string,
): Response {
  return c.json({ error: message, message, code }, status);
}

function bearer(header: string | undefined): string | undefined {
  const m = header ? /^bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
}

export function locatorOf(c: Context<DataEnv>): DatabaseLocator {
  const org = c.req.param("org");
  const db = c.req.param("db");
  if (org && db) return { orgSlug: org, name: db };
  return { label: c.env?.hostLabel ?? "" };
}

async function readJson(c: Context<DataEnv>): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch {
    throw new ProtocolError("the request body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ProtocolError("the request body must be a JSON object");
  }
  return body as Record<string, unknown>;
}

function batonOf(body: Record<string, unknown>): string | undefined {
  if (body.baton === undefined || body.baton === null) return undefined;
  if (typeof body.baton !== "string") throw new ProtocolError("baton must be a string or null");
  return body.baton;
}

/**
 * Hrana over HTTP for one database: `v2/pipeline` (what `@libsql/client` uses), `v3/pipeline`,
 * `v3/cursor` (the Rust client and `@tursodatabase/serverless`), and the version probes.
 */
export function dataPlaneRoutes(deps: Deps, streams: HttpStreams, services: StreamServices): Hono<DataEnv> {
  const app = new Hono<DataEnv>();
  const access = (c: Context<DataEnv>) =>
    openDataAccess(deps, locatorOf(c), bearer(c.req.header("authorization")));

  /** Continues the stream a baton names, or opens a new one. */
  function streamFor(a: DataAccess, baton: string | undefined): { id: number; stream: HranaStream } {
    if (baton !== undefined) {
      const resumed = streams.resume(baton, a.database.id);
      resumed.stream.access = a;
      return resumed;
    }
    const stream = new HranaStream(a, new SqlStore(HTTP_SQL_LIMITS), services);
    return { id: streams.open(stream, a.database.id), stream };
  }

  const pipeline = async (c: Context<DataEnv>) => {
    const a = await access(c);
    const body = await readJson(c);
    if (!Array.isArray(body.requests)) throw new ProtocolError("requests must be an array");
    const requests: StreamRequest[] = body.requests.map(parseStreamRequest);
    const { id, stream } = streamFor(a, batonOf(body));
    try {
      const results = [];
      for (const req of requests) {
        try {
          results.push({ type: "ok", response: await dispatch(stream, req) });
        } catch (e) {
          if (!(e instanceof HranaError)) throw e;
          results.push({ type: "error", error: e.toJSON() });
        }
      }
      return c.json({ baton: streams.release(id), base_url: null, results });
    } catch (e) {
      stream.close();
      streams.release(id);
      throw e;
    }
  };

  app.post("/v2/pipeline", pipeline);
  app.post("/v3/pipeline", pipeline);

  app.post("/v3/cursor", async (c) => {
    const a = await access(c);
    const body = await readJson(c);
    const batch = parseBatch(body.batch);
    const { id, stream } = streamFor(a, batonOf(body));
    let lines: string[];
    try {
      const outcome = await stream.batch(batch);
      lines = [{ baton: streams.release(id), base_url: null }, ...batchCursorEntries(outcome)].map((e) =>
        JSON.stringify(e),
      );
    } catch (e) {
      stream.close();
      streams.release(id);
      throw e;
    }
    return c.body(`${lines.join("\n")}\n`, 200, { "content-type": "text/plain" });
  });

  // Version probes: a 2xx answer means the protocol version is served.
  for (const v of ["v2", "v3"])
    app.get(`/${v}`, (c) => c.text(`Hello, this is Shoal: Hrana over HTTP ${v}\n`));
  app.get("/health", (c) => c.body(null, 200));
  app.get("/version", (c) => c.text(`shoal ${deps.version}\n`));

  app.notFound((c) =>
    errorResponse(c, 404, "NOT_FOUND", `no such data-plane route: ${c.req.method} ${c.req.path}`),
  );
  app.onError((err, c) => {
    if (err instanceof AppError) return errorResponse(c, STATUS[err.kind], err.code ?? "ERROR", err.message);
    if (err instanceof ProtocolError) return errorResponse(c, 400, err.code, err.message);
    deps.log.error({ err, path: c.req.path }, "data plane request failed");
    return errorResponse(c, 500, "INTERNAL_ERROR", "internal error");
  });
  return app;
}
