import type { IncomingMessage, ServerResponse } from "node:http";
import { requireDiskSpace } from "../domain/core/disk.js";
import { unlockAccess } from "../domain/data-access/encryption.js";
import { tablePermissionErrors } from "../domain/data-access/errors.js";
import { type DataAccess, openDataAccess, openDataAccessCached } from "../domain/data-access/open.js";
import { AppError, ForbiddenError, UnauthenticatedError } from "../errors.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../lib/request-id.js";
import type { ClientAddress } from "./client-address.js";
import { CORS } from "./cors.js";
import { serveDump, serveExport } from "./export.js";
import { PipelineAnswer } from "./hrana/answer-text.js";
import { batchCursorEntries } from "./hrana/cursor.js";
import { dispatch } from "./hrana/dispatch.js";
import { HranaError, ProtocolError } from "./hrana/errors.js";
import type { HttpStreams } from "./hrana/http-streams.js";
import { type LocationServices, LocationStream } from "./hrana/location-stream.js";
import { openStream } from "./hrana/open-stream.js";
import { parseBatchSliced, parseRequestsSliced } from "./hrana/parse-sliced.js";
import { REPLICA_BEHIND } from "./hrana/remote-primary-stream.js";
import type { StreamRequest } from "./hrana/requests.js";
import type { ResponseBudget, ResponseBytes } from "./hrana/response-budget.js";
import { HTTP_SQL_LIMITS, SqlStore } from "./hrana/sql-store.js";
import type { BatchOutcome, SqlStream, StreamServices } from "./hrana/stream.js";
import { answerFailure, NoRouteError } from "./http-errors.js";
import { readBody, readJson, send, sendJson } from "./http-io.js";
import { cipherHeader, keyHeader } from "./key-header.js";
import type { DataPlaneParts } from "./parts.js";
import { type PullServices, pullUpdates } from "./pull/pull-updates.js";
import { notifyReplica } from "./replica-notify.js";
import { noteStatements } from "./request-log.js";
import type { ResolvedRoute } from "./resolved-route.js";
import { type SyncServices, syncExport, syncFrames, syncInfo } from "./sync.js";
import { isUploadRequest, uploadsOf } from "./upload.js";

const BEARER = /^bearer\s+(\S+)\s*$/i;

function bearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  // What every client sends: "Bearer <token>" with one space and nothing after (no regex needed).
  if (header.length > 7 && header.startsWith("Bearer ") && !header.includes(" ", 7) && !header.includes("\t"))
    return header.slice(7);
  return BEARER.exec(header)?.[1];
}

function batonOf(body: Record<string, unknown>): string | undefined {
  if (body.baton === undefined || body.baton === null) return undefined;
  if (typeof body.baton !== "string") throw new ProtocolError("baton must be a string or null");
  return body.baton;
}

/**
 * Access for a route that hands out (or replaces) the whole database, pages and all: a token
 * limited to some tables would read every other table through it, so such a token is refused.
 */
function wholeFile(a: DataAccess): DataAccess {
  if (a.rights) throw tablePermissionErrors.rawFileRefused();
  return a;
}

/**
 * Hrana over HTTP for one database: `v2/pipeline` (what `@libsql/client` uses), `v3/pipeline`,
 * `v3/cursor` (the Rust client and `@tursodatabase/serverless`), and the version probes.
 *
 * It works on node's request and response directly rather than through the management API's web
 * framework: this is the hot path of every SQL statement, and the framework's Request/Response
 * conversion alone cost more than running a point query (see bench/dataplane.ts).
 */
export class HranaHttp {
  constructor(
    private readonly deps: DataPlaneParts,
    private readonly streams: HttpStreams,
    private readonly services: StreamServices & SyncServices & LocationServices & PullServices,
    private readonly clientAddress: ClientAddress,
    private readonly io: { responses: ResponseBytes; bodyTimeoutMs: number },
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, route: ResolvedRoute): Promise<void> {
    const requestId = requestIdOf(req.headers[REQUEST_ID_HEADER]);
    // Every answer carries it (writeHead adds headers set here), so a failure can be found in the log.
    res.setHeader(REQUEST_ID_HEADER, requestId);
    try {
      await this.route(req, res, route);
    } catch (e) {
      answerFailure(req, res, e, requestId, this.deps.log);
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, route: ResolvedRoute): Promise<void> {
    const method = req.method ?? "GET";
    // libSQL's sync client appends `/info` to its syncUrl, so a URL ending in `/` gives `//info`.
    const path = route.path.includes("//") ? route.path.replace(/\/{2,}/g, "/") : route.path;
    if (method === "OPTIONS") {
      res.writeHead(204, CORS);
      res.end();
      return;
    }
    if (method === "POST" && path === "/notify" && "id" in route.locator)
      return notifyReplica(req, res, route.locator.id, this.deps);
    // This node's own replicas pulling from another node's primary (forward/pull-relay.ts).
    if (path.startsWith("/relay/") && "id" in route.locator && this.deps.relay)
      return this.deps.relay.handle(req, res, route.locator.id, path);
    if (method === "POST" && (path === "/v2/pipeline" || path === "/v3/pipeline"))
      return this.pipeline(req, res, route);
    if (method === "POST" && path === "/v3/cursor") return this.cursor(req, res, route);
    // Turso's sync protocol (@tursodatabase/sync): pages since a revision; pushes are pipelines.
    if (method === "POST" && path === "/pull-updates")
      return pullUpdates(req, res, wholeFile(await this.access(req, route)), this.services);
    if (isUploadRequest(method, path)) {
      requireDiskSpace(this.services.disk, "an upload");
      const token = bearer(req.headers.authorization);
      const peer = this.clientAddress(req);
      const opened = await openDataAccess(this.deps, route.locator, token, "upload", peer);
      const a = unlockAccess(this.deps.keys, opened, keyHeader(req), "http", cipherHeader(req), peer);
      return uploadsOf(this.deps).handle(req, res, path, wholeFile(a));
    }
    if (method === "GET" && (path === "/v2" || path === "/v3")) {
      return send(res, 200, `Hello, this is Shoal: Hrana over HTTP ${path.slice(1)}\n`, "text/plain");
    }
    if (method === "GET") {
      // The database's own copies, as sqld serves `/dump` (and a whole file at `/export`).
      if (path === "/dump")
        return serveDump(res, wholeFile(await this.access(req, route)), this.services.hosted);
      if (path === "/export")
        return serveExport(res, wholeFile(await this.access(req, route)), this.services.hosted);
      // Sync protocol v2, for embedded replicas (the `libsql` package opened with a syncUrl).
      // libSQL's client reads a refusal at /info as "legacy protocol": the key is checked from /export on.
      if (path === "/info") return syncInfo(res, await this.syncAccess(req, route, false), this.services);
      const exp = /^\/export\/(\d+)$/.exec(path);
      if (exp) return syncExport(res, await this.syncAccess(req, route), Number(exp[1]), this.services);
      const frames = /^\/sync\/(\d+)\/(\d+)\/(\d+)$/.exec(path);
      if (frames) {
        const a = await this.syncAccess(req, route);
        return syncFrames(res, a, Number(frames[1]), Number(frames[2]), Number(frames[3]), this.services);
      }
    }
    if (method === "GET" && path === "/health") return send(res, 200, "", "text/plain");
    if (method === "GET" && path === "/version")
      return send(res, 200, `shoal ${this.deps.version}\n`, "text/plain");
    // Without a trailing slash the client drops the database segment of the URL (WHATWG relative
    // resolution), so `/db/acme/v2/pipeline` arrives: say what to fix instead of "not found".
    if (
      !route.viaHost &&
      "name" in route.locator &&
      /^v[23]$/.test(route.locator.name) &&
      /^\/(pipeline|cursor)$/.test(path)
    ) {
      const message = `the database URL must end with a slash: use .../db/${route.locator.orgSlug}/<database>/`;
      throw new NoRouteError("URL_MISSING_TRAILING_SLASH", message);
    }
    throw new NoRouteError("NOT_FOUND", `no such data-plane route: ${method} ${path}`);
  }

  /**
   * Access for a request, with the encryption key its header brings (required for an encrypted
   * database). `at`: the location asked for, for requests a node may serve from that location's
   * replica.
   */
  private access(
    req: IncomingMessage,
    route: ResolvedRoute,
    needKey = true,
    at?: string,
  ): DataAccess | Promise<DataAccess> {
    const token = bearer(req.headers.authorization);
    const peer = this.clientAddress(req);
    const key = keyHeader(req);
    const named = cipherHeader(req);
    const unlock = (a: DataAccess) =>
      needKey || key !== undefined ? unlockAccess(this.deps.keys, a, key, "http", named, peer) : a;
    const cached = openDataAccessCached(this.deps, route, token, peer, at);
    if (cached) return unlock(cached);
    return openDataAccess(this.deps, route.locator, token, "sql", peer, at).then(unlock);
  }

  /**
   * Access for the sync endpoints. The libSQL client reads any answer to its `/info` probe other
   * than 2xx or 401 as "this server speaks the legacy protocol" and fails later and obscurely, so
   * a token that doesn't open this database is a 401 here (its code still says why).
   */
  private async syncAccess(req: IncomingMessage, route: ResolvedRoute, needKey = true): Promise<DataAccess> {
    try {
      return wholeFile(await this.access(req, route, needKey));
    } catch (e) {
      if (e instanceof AppError && e.kind === "forbidden") throw new UnauthenticatedError(e.message, e.code);
      throw e;
    }
  }

  /** Continues the stream a baton names, or opens a new one (at the route's location, if any). */
  private streamFor(
    a: DataAccess,
    baton: string | undefined,
    route: ResolvedRoute,
  ): { id: number; stream: SqlStream } {
    if (baton !== undefined) {
      const resumed = this.streams.resume(baton, a.database.id);
      resumed.stream.access = a;
      return resumed;
    }
    const stream = openStream(a, new SqlStore(HTTP_SQL_LIMITS), this.services, route.location);
    return { id: this.streams.open(stream, a.database.id), stream };
  }

  private async pipeline(req: IncomingMessage, res: ServerResponse, route: ResolvedRoute): Promise<void> {
    // The body is read from the start, as it arrives, while access is decided.
    const text = readBody(req, this.io.bodyTimeoutMs);
    text.catch(() => {});
    const granted = this.access(req, route, true, route.location);
    const a = granted instanceof Promise ? await granted : granted;
    if (a.replicaOf !== undefined)
      throw new ForbiddenError("a replication token only syncs", "AUTH_REPLICATION_ONLY");
    const body = await readJson(text);
    if (!Array.isArray(body.requests)) throw new ProtocolError("requests must be an array");
    const parsed = parseRequestsSliced(body.requests);
    const requests: StreamRequest[] = parsed instanceof Promise ? await parsed : parsed;
    noteStatements(req, requests);
    const { id, stream } = this.streamFor(a, batonOf(body), route);
    const budget = this.io.responses.budget();
    const results = [];
    try {
      let slice = performance.now();
      for (const [i, r] of requests.entries()) {
        try {
          const response = dispatch(stream, r, budget);
          results.push({ type: "ok", response: response instanceof Promise ? await response : response });
        } catch (e) {
          if (!(e instanceof HranaError)) throw e;
          results.push({ type: "error", error: e.toJSON() });
        }
        // A long pipeline gives other requests a turn now and then, but never just before its
        // close: the others would find its connection still held and open their own.
        if (performance.now() - slice > 4 && requests[i + 1]?.type !== "close") {
          await new Promise((resolve) => setImmediate(resolve));
          slice = performance.now();
        }
      }
    } catch (e) {
      budget.settle();
      stream.close();
      this.streams.release(id);
      throw e;
    }
    // A write sent on from another node's replica location, answered before that replica had it.
    if (stream instanceof LocationStream && stream.replicaBehind) res.setHeader(REPLICA_BEHIND, "1");
    await sendJson(res, new PipelineAnswer(this.streams.release(id), results), budget);
  }

  private async cursor(req: IncomingMessage, res: ServerResponse, route: ResolvedRoute): Promise<void> {
    const text = readBody(req, this.io.bodyTimeoutMs);
    text.catch(() => {});
    const a = await this.access(req, route, true, route.location);
    if (a.replicaOf !== undefined)
      throw new ForbiddenError("a replication token only syncs", "AUTH_REPLICATION_ONLY");
    const body = await readJson(text);
    const batch = await parseBatchSliced(body.batch);
    noteStatements(req, [{ type: "batch", batch }]);
    const { id, stream } = this.streamFor(a, batonOf(body), route);
    const budget: ResponseBudget = this.io.responses.budget();
    let outcome: BatchOutcome;
    try {
      outcome = await stream.batch(batch, budget);
    } catch (e) {
      budget.settle();
      stream.close();
      this.streams.release(id);
      throw e;
    }
    const head = { baton: this.streams.release(id), base_url: null };
    await sendJson(res, undefined, budget, "text/plain", cursorLines(head, outcome));
  }
}

/** The lines of a `v3/cursor` answer, made as they are written. */
function* cursorLines(head: unknown, outcome: BatchOutcome): Generator<unknown> {
  yield head;
  yield* batchCursorEntries(outcome);
}
