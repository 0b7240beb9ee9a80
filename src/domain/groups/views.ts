import type { GroupRow } from "../../store/schema.js";
import type { ReplicaStatus } from "../core/ports.js";

export interface Group {
  id: string;
  name: string;
  primary: string;
  /** Every location of the group, the primary first. */
  locations: string[];
  /** Whether each location is serving: a replica location is down while its worker is. */
  status: Record<string, "up" | "down">;
  archived: boolean;
  deleteProtection: boolean;
  createdAt: string;
}

export function toGroup(
  r: GroupRow,
  locations: string[],
  status: (location: string) => "up" | "down" = () => "up",
): Group {
  return {
    id: r.id,
    name: r.name,
    primary: r.primary_location,
    locations,
    status: Object.fromEntries(locations.map((l) => [l, l === r.primary_location ? "up" : status(l)])),
    archived: r.archived === 1,
    deleteProtection: r.delete_protection === 1,
    createdAt: r.created_at,
  };
}

/** How a group reports its locations: the replication layer knows whether each one is serving. */
export function statusOf(deps: { replicas: ReplicaStatus } | undefined): (location: string) => "up" | "down" {
  return (l) => deps?.replicas.status(l) ?? "up";
}
