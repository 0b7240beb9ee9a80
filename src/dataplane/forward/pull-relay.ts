import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import https from "node:https";
import type { TokenClaims } from "../../domain/data-access/token-verifier.js";
import type { Logger } from "../../lib/logger.js";
import type { ShoalCode } from "../hrana/error-codes.js";
import { errorBody } from "../http-io.js";
import { agents, connectWithin } from "./http-proxy.js";
import { PrimaryHealth } from "./primary-health.js";

/** A replica's pulls reach this node at `/replication/<db>/relay/<location>/...`. */
const RELAY = "/relay/";
const PULL_PATH = /^(\/[A-Za-z0-9_-]+)+$/;
/** What goes on to the primary: the replica's own token, and nothing else of the request's. */
const SENT_ON = ["authorization", "accept", "user-agent"];
const NOT_RETURNED = new Set(["connection", "keep-alive", "transfer-encoding", "proxy-connection"]);

interface Target {
  /** The primary's replication URL for the database, fixed when the replica was set up. */
  base: URL;
  /** Ends each of the replica's pulls in flight. */
  inflight: Set<() => void>;
}

const key = (dbId: string, location: string) => `${dbId}/${location}`;

function answer(res: ServerResponse, status: number, error: string, code: ShoalCode): void {
  const body = Buffer.from(errorBody(code, error));
  res.writeHead(status, { "content-type": "application/json", "content-length": body.length });
  res.end(body);
}

/**
 * The way this node's replicas of other nodes' primaries pull. A replica's libSQL sync client
 * (in its location's worker, where a request blocks the thread until it ends, and has no time
 * limit of its own) syncs from this node, which sends each request on to the primary registered
 * for that replica and streams the answer back, under limits the client lacks:
 *
 * - a pull that makes no progress (no connection, no answer, no bytes) for `timeoutMs` is ended
 *   with 408, and every replica following that primary's node is then answered 408 at once until
 *   the node answers a probe (`primary-health.ts`): a hung machine holds the worker, and the reads
 *   queued behind it, for one limit, not one limit per pull;
 * - `cut` ends a replica's pulls in flight at once (a failover promoting it, a rebuild dropping it).
 *
 * Refusals are 4xx (408 no progress in time, 424 the primary's node refused or reset the
 * connection): libSQL retries a 5xx answer to a pull five times, sleeping in between. It is
 * no open proxy: only GETs, only carrying the replication token of that very replica, only to the
 * URL registered for it (never looked up again per request: a replica must not be fed another
 * primary's history, which the replication manager handles by rebuilding it).
 */
export class PullRelay {
  private readonly targets = new Map<string, Target>();
  private readonly health: PrimaryHealth;

  constructor(
    private readonly tokens: { verify(token: string): Promise<TokenClaims> },
    /** A pull making no progress for this long is ended. */
    readonly timeoutMs: number,
    log: Logger,
  ) {
    this.health = new PrimaryHealth(timeoutMs, (origin) => this.follows(origin), log);
  }

  /**
   * Relays the pulls of the replica of `dbId` in `location` to `target` (the primary's
   * `.../replication/<db>` URL); returns the path, on this node, the replica syncs from.
   */
  register(dbId: string, location: string, target: string): string {
    const k = key(dbId, location);
    const was = this.targets.get(k);
    if (was?.base.href === new URL(target).href) return this.pathOf(dbId, location);
    // The primary's node moved: pulls still talking to the old address end now.
    if (was) for (const end of [...was.inflight]) end();
    this.targets.set(k, { base: new URL(target), inflight: new Set() });
    return this.pathOf(dbId, location);
  }

  /** Ends the replica's pulls in flight and stops relaying its pulls (until registered again). */
  cut(dbId: string, location: string): void {
    const k = key(dbId, location);
    const t = this.targets.get(k);
    this.targets.delete(k);
    if (t) for (const end of [...t.inflight]) end();
  }

  /** A request at `/replication/<dbId>` whose `path` starts with `/relay/`. */
  async handle(req: IncomingMessage, res: ServerResponse, dbId: string, path: string): Promise<void> {
    const rest = path.slice(RELAY.length);
    const slash = rest.indexOf("/");
    const location = slash === -1 ? rest : rest.slice(0, slash);
    const tail = slash === -1 ? "" : rest.slice(slash);
    if (req.method !== "GET")
      return answer(res, 405, "a replica's pulls are GET requests", "METHOD_NOT_ALLOWED");
    // `/info`, `/export/<generation>`, `/sync/<generation>/<from>/<to>`: plain segments only, so
    // nothing (`..`, an escape) can name a path outside the primary's replication URL.
    if (!PULL_PATH.test(tail)) return answer(res, 404, "not a replica's pull", "NOT_A_PULL");
    const token = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
    const claims = token ? await this.tokens.verify(token).catch(() => undefined) : undefined;
    if (claims?.id !== dbId || claims.rep !== location)
      return answer(res, 401, "only this replica's own replication token may pull through here", "NODE_ONLY");
    const t = this.targets.get(key(dbId, location));
    if (!t) return answer(res, 404, `no replica in ${location} pulls this database here`, "NOT_RELAYED");
    const since = this.health.downSince(t.base.origin);
    if (since !== undefined) {
      const ago = Date.now() - since;
      const why = `the primary's node (${t.base.origin}) hasn't answered for ${ago} ms; pulls resume once it answers`;
      return answer(res, 408, why, "PRIMARY_NOT_ANSWERING");
    }
    this.forward(res, t, tail, req.headers);
  }

  close(): void {
    this.health.close();
    for (const t of this.targets.values()) for (const end of [...t.inflight]) end();
    this.targets.clear();
  }

  private forward(res: ServerResponse, t: Target, tail: string, incoming: http.IncomingHttpHeaders): void {
    const headers: OutgoingHttpHeaders = {};
    for (const name of SENT_ON) if (incoming[name] !== undefined) headers[name] = incoming[name];
    const protocol = t.base.protocol === "https:" ? "https:" : "http:";
    const out = (protocol === "https:" ? https.request : http.request)({
      protocol,
      hostname: t.base.hostname.replace(/^\[|\]$/g, ""),
      port: t.base.port || undefined,
      method: "GET",
      path: `${t.base.pathname.replace(/\/+$/, "")}${tail}`,
      headers,
      agent: agents[protocol],
    });
    connectWithin(out);
    let settled = false;
    const settle = (then: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      t.inflight.delete(cut);
      then();
    };
    const expire = () =>
      settle(() => {
        this.health.failed(t.base.origin);
        const why = `the primary's node (${t.base.origin}) made no progress on this pull within ${this.timeoutMs} ms`;
        if (res.headersSent) res.destroy();
        else answer(res, 408, why, "PRIMARY_NOT_ANSWERING");
        out.destroy();
      });
    // A replica being promoted or dropped: its sync client sees the connection end, at once.
    const cut = () =>
      settle(() => {
        res.destroy();
        out.destroy();
      });
    const timer = setTimeout(expire, this.timeoutMs);
    t.inflight.add(cut);
    res.on("close", () => settle(() => (res.writableFinished ? undefined : out.destroy())));
    out.on("response", (from) => {
      if (settled) return from.resume();
      timer.refresh();
      const back: OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(from.headers))
        if (value !== undefined && !NOT_RETURNED.has(name)) back[name] = value;
      res.writeHead(from.statusCode ?? 502, back);
      from.on("data", () => timer.refresh());
      from.on("error", () => res.destroy());
      from.pipe(res);
    });
    out.on("error", (e) => {
      const err = e as NodeJS.ErrnoException;
      if (err.code === "ETIMEDOUT_CONNECT") return expire();
      // Refused, reset: said in the answer, which the replica's log shows.
      settle(() => {
        if (res.headersSent) return res.destroy();
        const why = `the primary's node (${t.base.origin}) can't be reached: ${err.code ?? ""} ${err.message}`;
        answer(res, 424, why, "PRIMARY_UNREACHABLE");
      });
    });
    out.end();
  }

  private pathOf(dbId: string, location: string): string {
    return `/replication/${dbId}${RELAY}${location}`;
  }

  private follows(origin: string): boolean {
    for (const t of this.targets.values()) if (t.base.origin === origin) return true;
    return false;
  }
}
