import type { DatabaseLocator } from "../domain/directory.js";

/** A request for a database: which one, and the path within its data plane (`/v2/pipeline`, ...). */
export interface DataRoute {
  locator: DatabaseLocator;
  viaHost: boolean;
  path: string;
}

const PATH = /^\/db\/([^/]+)\/([^/?]+)(\/[^?]*)?/;
/** Replicas sync from a primary by database id, so renames and transfers don't move them. */
const REPLICATION = /^\/replication\/([0-9a-f-]{36})(\/[^?]*)?/;

/**
 * Decides from the Host header and path whether a request is for a database (undefined: it is for
 * the management API). A Host of the form `<db>-<org>.<db domain>` (any port) names a database,
 * as on Turso; for local use without DNS the path `/db/<org>/<db>/...` does the same on the
 * service's own address.
 */
export function routeRequest(host: string | undefined, url: string, dbDomain: string): DataRoute | undefined {
  const path = pathOf(url);
  const label = hostLabel(host, dbDomain);
  if (label) return { locator: { label }, viaHost: true, path };
  const rep = REPLICATION.exec(path);
  if (rep?.[1]) return { locator: { id: rep[1] }, viaHost: false, path: rep[2] || "/" };
  const m = PATH.exec(path);
  if (m?.[1] && m[2]) {
    return {
      locator: { orgSlug: decodeURIComponent(m[1]), name: decodeURIComponent(m[2]) },
      viaHost: false,
      path: m[3] || "/",
    };
  }
  return undefined;
}

/** The `<db>-<org>` label of a database hostname, or undefined when the host isn't one. */
export function hostLabel(host: string | undefined, dbDomain: string): string | undefined {
  if (!host) return undefined;
  const name = stripPort(host.toLowerCase());
  const domain = stripPort(dbDomain);
  if (!name.endsWith(`.${domain}`)) return undefined;
  const label = name.slice(0, -(domain.length + 1));
  return label !== "" && !label.includes(".") ? label : undefined;
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
