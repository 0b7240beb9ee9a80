import { type Kysely, Migrator } from "kysely";
import { type ApiTokensRepo, apiTokensRepo } from "./api-tokens.js";
import { type AuditRepo, auditRepo } from "./audit.js";
import { type DatabasesRepo, databasesRepo } from "./databases.js";
import type { StoreDialect } from "./dialect.js";
import { type GroupsRepo, groupsRepo } from "./groups.js";
import { type IdempotencyRepo, idempotencyRepo } from "./idempotency.js";
import { type InvitesRepo, invitesRepo } from "./invites.js";
import { type MembersRepo, membersRepo } from "./members.js";
import { migrationProvider } from "./migrations/index.js";
import { type NodesRepo, nodesRepo } from "./nodes.js";
import { type OrganizationsRepo, organizationsRepo } from "./organizations.js";
import { type PlansRepo, plansRepo } from "./plans.js";
import type { DB } from "./schema.js";
import { type UsageRepo, usageRepo } from "./usage.js";
import { type UsersRepo, usersRepo } from "./users.js";

/** Every aggregate's repository, bound to one connection or transaction. */
export interface Repos {
  users: UsersRepo;
  organizations: OrganizationsRepo;
  members: MembersRepo;
  apiTokens: ApiTokensRepo;
  groups: GroupsRepo;
  databases: DatabasesRepo;
  audit: AuditRepo;
  usage: UsageRepo;
  invites: InvitesRepo;
  idempotency: IdempotencyRepo;
  plans: PlansRepo;
  nodes: NodesRepo;
}

/**
 * The control-plane store: the same interface over an embedded SQLite file or PostgreSQL.
 * Every mutation goes through `write`, which runs it in one transaction: it all lands or none does.
 */
export class Store {
  constructor(
    private readonly db: Kysely<DB>,
    readonly dialect: StoreDialect,
  ) {}

  /** Reads outside a transaction (each query sees committed data). */
  read<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    return fn(this.repos(this.db));
  }

  /** Runs `fn` in one transaction; it commits when `fn` resolves and rolls back when it throws. */
  write<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((tx) => fn(this.repos(tx)));
  }

  async migrate(): Promise<void> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider(this.dialect.kind) });
    const { error, results } = await migrator.migrateToLatest();
    const failed = results?.find((r) => r.status === "Error");
    if (error || failed) {
      const cause = error instanceof Error ? error.message : String(error ?? "");
      throw new Error(`control-plane migration ${failed?.migrationName ?? ""} failed: ${cause}`);
    }
  }

  close(): Promise<void> {
    return this.db.destroy();
  }

  private repos(db: Kysely<DB>): Repos {
    const ex = { db, dialect: this.dialect };
    return {
      users: usersRepo(ex),
      organizations: organizationsRepo(ex),
      members: membersRepo(ex),
      apiTokens: apiTokensRepo(ex),
      groups: groupsRepo(ex),
      databases: databasesRepo(ex),
      audit: auditRepo(ex),
      usage: usageRepo(ex),
      invites: invitesRepo(ex),
      idempotency: idempotencyRepo(ex),
      plans: plansRepo(ex),
      nodes: nodesRepo(ex),
    };
  }
}
