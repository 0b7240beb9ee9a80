import type { DatabaseLocator } from "../domain/data-access/ports.js";

/** A request for a database: which one, and the path within its data plane (`/v2/pipeline`, ...). */
export interface DataRoute {
  locator: DatabaseLocator;
  viaHost: boolean;
  path: string;
  /** The instance asked for: a location of the database's group (absent: the primary). */
  location?: string;
}

/** Replicas sync from a primary by database id, so renames and transfers don't move them. */
const REPLICATION = /^\/replication\/([0-9a-f-]{36})(\/[^?]*)?/;

/**
 * Decides from the Host header and path whether a request is for a database (undefined: it is for
 * the management API). A Host of the form `<db>-<org>.<db domain>` (any port) names a database,
 * as on Turso; for local use without DNS the path `/db/<org>/<db>/...` does the same on the
 * service's own address. The instance in one location is `<db>-<org>.<location>.<db domain>`, or
 * `/db/<org>/<db>@<location>/...`.
 */
export function routeRequest(host: string | undefined, url: string, dbDomain: string): DataRoute | undefined {
  const path = pathOf(url);
  const named = hostLabelCached(host, dbDomain);
  if (named) {
    const route: DataRoute = { locator: { label: named.label }, viaHost: true, path };
    if (named.location) route.location = named.location;
    return route;
  }
  if (path.startsWith("/db/")) return pathRoute(path);
  const rep = REPLICATION.exec(path);
  if (rep?.[1]) return { locator: { id: rep[1] }, viaHost: false, path: rep[2] || "/" };
  return undefined;
}

/**
 * `/db/<org>/<db>[@<location>]/...`, taken apart by hand: this runs on every SQL request, and the
 * equivalent regular expression with its captures and a split cost several times as much.
 */
function pathRoute(path: string): DataRoute | undefined {
  const orgEnd = path.indexOf("/", 4);
  if (orgEnd <= 4) return undefined;
  const dbEnd = path.indexOf("/", orgEnd + 1);
  const segment = dbEnd === -1 ? path.slice(orgEnd + 1) : path.slice(orgEnd + 1, dbEnd);
  if (segment === "") return undefined;
  const whole = decoded(segment);
  const at = whole.indexOf("@");
  const route: DataRoute = {
    locator: { orgSlug: decoded(path.slice(4, orgEnd)), name: at === -1 ? whole : whole.slice(0, at) },
    viaHost: false,
    path: dbEnd === -1 ? "/" : path.slice(dbEnd),
  };
  if (at !== -1) {
    const end = whole.indexOf("@", at + 1);
    const location = end === -1 ? whole.slice(at + 1) : whole.slice(at + 1, end);
    if (location) route.location = location;
  }
  return route;
}

/**
 * A path segment with its percent-escapes decoded; a malformed escape is kept as written (no
 * database or organization has such a name, so the request finds nothing instead of failing).
 */
function decoded(segment: string): string {
  // Most names have no escape: spare them the decoder, which every request would pay.
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The last Host looked at, and what it named: a connection, or a pool, sends the same one again and again. */
let lastHost: { host: string; dbDomain: string; named: ReturnType<typeof hostLabel> } | undefined;

function hostLabelCached(host: string | undefined, dbDomain: string): ReturnType<typeof hostLabel> {
  if (host === undefined) return undefined;
  if (lastHost !== undefined && lastHost.host === host && lastHost.dbDomain === dbDomain)
    return lastHost.named;
  const named = hostLabel(host, dbDomain);
  lastHost = { host, dbDomain, named };
  return named;
}

/**
 * The `<db>-<org>` label of a database hostname, and the location label of an instance hostname
 * (`<db>-<org>.<location>.<domain>`); undefined when the host is neither.
 */
export function hostLabel(
  host: string | undefined,
  dbDomain: string,
): { label: string; location?: string } | undefined {
  if (!host) return undefined;
  const name = stripPort(host.toLowerCase());
  const domain = stripPort(dbDomain);
  if (!name.endsWith(`.${domain}`)) return undefined;
  const labels = name.slice(0, -(domain.length + 1)).split(".");
  if (labels.length === 1 && labels[0]) return { label: labels[0] };
  if (labels.length === 2 && labels[0] && labels[1]) return { label: labels[0], location: labels[1] };
  return undefined;
}

function stripPort(host: string): string {
  if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1);
  const i = host.lastIndexOf(":");
  return i === -1 ? host : host.slice(0, i);
}

/** The path of a request target (a bare path, or an absolute URL), without its query. */
function pathOf(url: string): string {
  const start = url.startsWith("/") ? 0 : url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  const q = url.indexOf("?", start);
  return q === -1 ? url.slice(start) : url.slice(start, q);
}
