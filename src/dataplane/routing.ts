import type { DatabaseLocator } from "../domain/directory.js";

/** Where a request goes: to a database's data plane, or (undefined) to the management API. */
export type DataRoute = { locator: DatabaseLocator; viaHost: boolean };

const PATH = /^\/db\/([^/]+)\/([^/]+)(?:\/|$)/;

/**
 * Decides from the Host header and path whether a request is for a database. A Host of the form
 * `<db>-<org>.<db domain>` (any port) names a database, as on Turso; for local use without DNS the
 * path `/db/<org>/<db>/...` does the same on the service's own address.
 */
export function routeRequest(
  host: string | undefined,
  pathname: string,
  dbDomain: string,
): DataRoute | undefined {
  const label = hostLabel(host, dbDomain);
  if (label) return { locator: { label }, viaHost: true };
  const m = PATH.exec(pathname);
  if (m?.[1] && m[2]) {
    return { locator: { orgSlug: decodeURIComponent(m[1]), name: decodeURIComponent(m[2]) }, viaHost: false };
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
