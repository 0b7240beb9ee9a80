import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { Hono } from "hono";
import type { Deps } from "../domain/context.js";
import { HttpStreams } from "./hrana/http-streams.js";
import type { StreamLimits, StreamServices } from "./hrana/stream.js";
import { type DataPlaneBindings, dataPlaneRoutes } from "./http.js";
import type { DataRoute } from "./routing.js";
import { HranaWebSockets } from "./ws.js";

export interface DataPlaneSettings extends StreamLimits {
  /** An HTTP stream unused for this long is closed (its transaction rolled back). */
  streamIdleMs: number;
}

export interface DataPlane {
  fetch(req: Request, route: DataRoute, env: object): Response | Promise<Response>;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, route: DataRoute): void;
  /** Open HTTP streams, for tests and diagnostics. */
  openStreams(): number;
  close(): void;
}

/** Everything that serves SQL to clients: Hrana over HTTP and WebSocket, for every database. */
export function createDataPlane(deps: Deps, settings: DataPlaneSettings): DataPlane {
  const services: StreamServices = {
    pool: deps.pool,
    meter: deps.meter,
    limits: { txnTimeoutMs: settings.txnTimeoutMs, lockWaitMs: settings.lockWaitMs },
    async resolveAttach(access, name) {
      const d = await deps.directory.find({ orgSlug: access.database.org_slug, name });
      if (!d) return undefined;
      return { id: d.id, path: deps.files.path(d.primary_location, d.id), allowAttach: d.allow_attach === 1 };
    },
  };
  const streams = new HttpStreams(settings.streamIdleMs);
  const routes = dataPlaneRoutes(deps, streams, services);
  const app = new Hono<{ Bindings: DataPlaneBindings }>();
  // Without a trailing slash the client drops the database segment of the URL (WHATWG relative
  // resolution), so `/db/acme/v2/pipeline` arrives; say what to fix instead of "not found".
  app.post("/db/:org/:version{v[23]}/:op{pipeline|cursor}", (c) => {
    const message = `the database URL must end with a slash: use .../db/${c.req.param("org")}/<database>/`;
    return c.json({ error: message, message, code: "URL_MISSING_TRAILING_SLASH" }, 404);
  });
  app.route("/db/:org/:db", routes);
  app.route("/", routes);
  const ws = new HranaWebSockets(deps, services);

  return {
    fetch: (req, route, env) =>
      app.fetch(req, { ...env, hostLabel: "label" in route.locator ? route.locator.label : undefined }),
    upgrade: (req, socket, head, route) => ws.upgrade(req, socket, head, route.locator),
    openStreams: () => streams.size,
    close() {
      ws.closeAll();
      streams.closeAll();
    },
  };
}
