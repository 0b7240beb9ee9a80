import type { PlanRow, PlansTable } from "../../store/schema.js";

/** What a plan allows; null is unlimited. */
export interface Quotas {
  rowsRead: number | null;
  rowsWritten: number | null;
  storageBytes: number | null;
  databases: number | null;
  groups: number | null;
  locations: number | null;
  bytesSynced: number | null;
}

export interface Plan {
  name: string;
  /** Monthly price, a decimal string such as `29` or `4.99`; Shoal takes no payments. */
  price: string;
  quotas: Quotas;
  createdAt: string;
}

export interface Subscription {
  plan: string;
  overages: boolean;
  /** Plans are monthly: quotas reset on the first day of each calendar month (UTC). */
  timeline: "monthly";
}

export const COLUMN: Record<keyof Quotas, keyof PlansTable> = {
  rowsRead: "rows_read",
  rowsWritten: "rows_written",
  storageBytes: "storage_bytes",
  databases: "databases",
  groups: "groups",
  locations: "locations",
  bytesSynced: "bytes_synced",
};

export function toPlan(r: PlanRow): Plan {
  const q = (v: number | null) => (v === null ? null : Number(v));
  return {
    name: r.name,
    price: r.price,
    quotas: {
      rowsRead: q(r.rows_read),
      rowsWritten: q(r.rows_written),
      storageBytes: q(r.storage_bytes),
      databases: q(r.databases),
      groups: q(r.groups),
      locations: q(r.locations),
      bytesSynced: q(r.bytes_synced),
    },
    createdAt: r.created_at,
  };
}
