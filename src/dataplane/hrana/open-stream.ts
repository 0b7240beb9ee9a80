import type { DataAccess } from "../../domain/data-access/open.js";
import { NotFoundError } from "../../errors.js";
import { type LocationServices, LocationStream } from "./location-stream.js";
import { RemotePrimaryStream } from "./remote-primary-stream.js";
import type { SqlStore } from "./sql-store.js";
import { HranaStream, type SqlStream, type StreamServices } from "./stream.js";

/**
 * A new stream for a request: on the primary, or, when the request named another location of the
 * group, at that location (reads on its replica, the rest forwarded to the primary).
 */
export function openStream(
  access: DataAccess,
  sqls: SqlStore,
  services: StreamServices & LocationServices,
  location: string | undefined,
): SqlStream {
  if (location !== undefined && !access.database.locations.includes(location)) {
    throw new NotFoundError(
      `database ${access.database.name} has no instance in ${location}`,
      "INSTANCE_NOT_FOUND",
    );
  }
  if (access.primaryElsewhere && location !== undefined && services.peers) {
    const remote = new RemotePrimaryStream(access, sqls, location, services.peers, () =>
      services.lagging?.mark(access.database.id, location),
    );
    return new LocationStream(location, remote, services, "primary-elsewhere");
  }
  const primary = new HranaStream(access, sqls, services);
  if (location === undefined || location === access.database.primary_location) return primary;
  const mode = services.holds && !services.holds(location) ? "replica-elsewhere" : "local";
  return new LocationStream(location, primary, services, mode);
}
