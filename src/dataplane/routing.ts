import type { DatabaseLocator } from "../domain/data-access/ports.js";

/** A request for a database: which one, and the path within its data plane (`/v2/pipeline`, ...). */
export interface DataRoute {
  locator: DatabaseLocator;
  viaHost: boolean;
  path: string;
  /** The instance asked for: a location of the database's group (absent: the primary). */
  location?: string;
}

const PATH = /^\/db\/([^/]+)\/([^/?]+)(\/[^?]*)?/;
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
  const named = hostLabel(host, dbDomain);
  if (named) {
    const route: DataRoute = { locator: { label: named.label }, viaHost: true, path };
    if (named.location) route.location = named.location;
    return route;
  }
  const rep = REPLICATION.exec(path);
  if (rep?.[1]) return { locator: { id: rep[1] }, viaHost: false, path: rep[2] || "/" };
  const m = PATH.exec(path);
  if (m?.[1] && m[2]) {
    const [name, location] = decoded(m[2]).split("@", 2) as [string, string | undefined];
    const route: DataRoute = {
      locator: { orgSlug: decoded(m[1]), name },
      viaHost: false,
      path: m[3] || "/",
    };
    if (location) route.location = location;
    return route;
  }
  return undefined;
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
