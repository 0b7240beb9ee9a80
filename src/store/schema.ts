/**
 * Control-plane tables as Kysely sees them. Columns are snake_case in both dialects; timestamps are
 * ISO-8601 text (fixed width, so they sort the same everywhere) and flags are integers 0/1, which
 * keeps one set of row types valid for SQLite and PostgreSQL alike.
 */
import type { Generated, Insertable, Selectable } from "kysely";

export interface UsersTable {
  id: string;
  username: string;
  email: string;
  is_admin: number;
  created_at: string;
}

export interface OrganizationsTable {
  id: string;
  slug: string;
  name: string;
  type: "personal" | "team";
  overages: number;
  /** Name of the organization's plan (its quotas). */
  plan: Generated<string>;
  blocked_reads: number;
  blocked_writes: number;
  created_at: string;
  /** Kept by triggers (migration 0008): how many databases and groups the organization holds. */
  database_count: Generated<number>;
  group_count: Generated<number>;
  /** 1 (default): deleted databases and groups are kept restorable for the retention window. */
  restore_enabled: Generated<number>;
}

export interface MembersTable {
  org_id: string;
  user_id: string;
  role: "owner" | "admin" | "member" | "viewer";
  created_at: string;
}

export interface ApiTokensTable {
  id: string;
  user_id: string;
  name: string;
  token_hash: string;
  /** Restriction to one organization (null: every organization of the user). */
  org_id: string | null;
  /** Restriction to one group of that organization. */
  group_id: string | null;
  /** JSON array of scopes for restricted tokens. */
  scopes: string | null;
  created_at: string;
}

export interface GroupsTable {
  id: string;
  org_id: string;
  name: string;
  primary_location: string;
  archived: number;
  token_generation: number;
  delete_protection: number;
  created_at: string;
}

export interface GroupLocationsTable {
  group_id: string;
  location: string;
  /** Order in which locations were added; the primary is 0. */
  position: number;
  added_at: string;
}

export interface DatabasesTable {
  id: string;
  org_id: string;
  group_id: string;
  name: string;
  size_limit: string | null;
  block_reads: number;
  block_writes: number;
  allow_attach: number;
  delete_protection: number;
  created_at: string;
  hostname_label: string;
  token_generation: number;
  /** Source database of a branch, and when it was branched. */
  parent_id: Generated<string | null>;
  branched_at: Generated<string | null>;
  is_schema: Generated<number>;
  /** The schema database whose migrations this database follows. */
  schema_id: Generated<string | null>;
  /** 1 while a database created with the `database_upload` seed waits for its file, 2 while it is installed. */
  awaiting_upload: Generated<number>;
  /** For a database following a schema database: the last of the parent's schema changes it has. */
  schema_seq: Generated<number>;
  /** JSON array of the addresses and CIDR blocks the data plane serves; null = every address. */
  allowed_ips: Generated<string | null>;
  /** Encryption at rest (ADR 0016): the cipher, the passphrase salt and the key check; never the key. */
  encryption_cipher: Generated<string | null>;
  encryption_salt: Generated<string | null>;
  encryption_check: Generated<string | null>;
}

export interface UsageDailyTable {
  db_id: string;
  org_id: string;
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  rows_read: number;
  rows_written: number;
  queries: number;
  /** Bytes of the primary after the day's last recorded write; null when unknown. */
  storage_bytes: number | null;
}

export interface QueryStatsTable {
  db_id: string;
  query: string;
  count: number;
  rows_read: number;
  rows_written: number;
  total_ms: number;
}

export interface AuditLogsTable {
  id: Generated<number>;
  org_id: string;
  code: string;
  message: string;
  origin: string;
  author: string;
  data: string;
  created_at: string;
}

export interface PlansTable {
  name: string;
  price: string;
  rows_read: number | null;
  rows_written: number | null;
  storage_bytes: number | null;
  databases: number | null;
  groups: number | null;
  locations: number | null;
  bytes_synced: number | null;
  created_at: string;
}

export interface InvitesTable {
  id: Generated<number>;
  org_id: string;
  email: string | null;
  username: string | null;
  role: "admin" | "member" | "viewer";
  token: string;
  inviter: string;
  created_at: string;
  accepted_at: string | null;
}

export interface IdempotencyKeysTable {
  user_id: string;
  key: string;
  /** What the first request was (method, path, body hash): a reused key must mean the same request. */
  fingerprint: string;
  status: number;
  response: string;
  created_at: string;
}

export interface RevokedDbTokensTable {
  jti: string;
  db_id: string | null;
  group_id: string | null;
  expires_at: number | null;
  revoked_at: string;
}

export interface NodesTable {
  id: string;
  /** How other nodes reach this one (`SHOAL_NODE_URL`). */
  url: string;
  version: string;
  started_at: string;
  heartbeat_at: string;
  stopped_at: string | null;
}

export interface NodeLocationsTable {
  location: string;
  node_id: string;
  claimed_at: string;
}

export interface ClusterKeysTable {
  /** What the key signs, e.g. `db-tokens`. */
  purpose: string;
  /** SHA-256 of the public key: every node must hold the same key pair. */
  fingerprint: string;
  recorded_at: string;
}

/** The lease of a group's primary (see migration 0012). */
export interface PrimaryLeasesTable {
  group_id: string;
  epoch: number;
  location: string;
  node_id: string;
  valid_from: string;
  expires_at: string;
  promoted_from: string | null;
  /** Locations holding every acknowledged write, as a JSON array (migration 0015); NULL: not kept. */
  standbys: string | null;
}

/** An identity provider's key set an organization trusts (see migration 0013). */
export interface OrgJwksTable {
  org_id: string;
  name: string;
  url: string;
  issuer: string | null;
  audience: string | null;
  created_at: string;
}

/** A deleted database kept restorable (migration 0014): its row as it was, as JSON. */
export interface DeletedDatabasesTable {
  id: string;
  org_id: string;
  group_id: string;
  group_name: string;
  name: string;
  deleted_at: string;
  /** Set when it went with its group. */
  group_deleted_at: string | null;
  purge_after: string;
  primary_location: string;
  /** JSON array of the group's locations at deletion. */
  locations: string;
  kept_bytes: Generated<number>;
  record: string;
}

/** A deleted group kept restorable: its row as it was, as JSON, with its locations. */
export interface DeletedGroupsTable {
  id: string;
  org_id: string;
  name: string;
  deleted_at: string;
  purge_after: string;
  locations: string;
  record: string;
}

export interface DB {
  users: UsersTable;
  organizations: OrganizationsTable;
  members: MembersTable;
  api_tokens: ApiTokensTable;
  groups: GroupsTable;
  group_locations: GroupLocationsTable;
  databases: DatabasesTable;
  audit_logs: AuditLogsTable;
  usage_daily: UsageDailyTable;
  query_stats: QueryStatsTable;
  plans: PlansTable;
  invites: InvitesTable;
  idempotency_keys: IdempotencyKeysTable;
  revoked_db_tokens: RevokedDbTokensTable;
  nodes: NodesTable;
  node_locations: NodeLocationsTable;
  primary_leases: PrimaryLeasesTable;
  cluster_keys: ClusterKeysTable;
  org_jwks: OrgJwksTable;
  deleted_databases: DeletedDatabasesTable;
  deleted_groups: DeletedGroupsTable;
}

export type PlanRow = Selectable<PlansTable>;
export type InviteRow = Selectable<InvitesTable>;

export type UserRow = Selectable<UsersTable>;
export type OrganizationRow = Selectable<OrganizationsTable>;
export type MemberRow = Selectable<MembersTable>;
export type ApiTokenRow = Selectable<ApiTokensTable>;
export type GroupRow = Selectable<GroupsTable>;
export type GroupLocationRow = Selectable<GroupLocationsTable>;
export type DatabaseRow = Selectable<DatabasesTable>;
export type DeletedDatabaseRow = Selectable<DeletedDatabasesTable>;
export type DeletedGroupRow = Selectable<DeletedGroupsTable>;
export type AuditLogRow = Selectable<AuditLogsTable>;
export type NewAuditLog = Insertable<AuditLogsTable>;
