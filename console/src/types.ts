/** The parts of Shoal's API answers the console reads (Turso's wire names). */

export type Role = "owner" | "admin" | "member" | "viewer";

export interface User {
  username: string;
  email: string;
  admin: boolean;
  plan: string;
}

export interface Organization {
  name: string;
  slug: string;
  type: "personal" | "team";
  overages: boolean;
  blocked_reads: boolean;
  blocked_writes: boolean;
  plan_id: string;
}

export interface Group {
  name: string;
  uuid: string;
  primary: string;
  locations: string[];
  archived: boolean;
  delete_protection: boolean;
  status: { locations: Array<{ name: string; status: "up" | "down" }> };
}

export interface Database {
  Name: string;
  DbId: string;
  Hostname: string;
  group: string;
  regions: string[];
  primaryRegion: string;
  block_reads: boolean;
  block_writes: boolean;
  is_schema: boolean;
  /** Only on a database encrypted at rest with its owner's key. */
  encryption_cipher?: string;
  schema: string;
  parent: { id: string; name: string | null; branched_at: string } | null;
}

export interface DatabaseConfiguration {
  size_limit: string;
  allow_attach: boolean;
  block_reads: boolean;
  block_writes: boolean;
  delete_protection: boolean;
  allowed_ips: string[];
}

export interface Member {
  username: string;
  email: string;
  role: Role;
}

export interface Page {
  pagination: { next: string | null };
}
