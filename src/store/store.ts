import { type Kysely, Migrator, sql } from "kysely";
import { StartError } from "../errors.js";
import { type ApiTokensRepo, apiTokensRepo } from "./api-tokens.js";
import { type AuditRepo, auditRepo } from "./audit.js";
import { type DatabasesRepo, databasesRepo } from "./databases.js";
import {
  type DeletedDatabasesRepo,
  type DeletedGroupsRepo,
  deletedDatabasesRepo,
  deletedGroupsRepo,
} from "./deleted.js";
import type { StoreDialect } from "./dialect.js";
import { storeOutcomeUnknown, storeUnreachable } from "./errors.js";
import { type GroupsRepo, groupsRepo } from "./groups.js";
import { type IdempotencyRepo, idempotencyRepo } from "./idempotency.js";
import { type InvitesRepo, invitesRepo } from "./invites.js";
import { type LeasesRepo, leasesRepo } from "./leases.js";
import { type MembersRepo, membersRepo } from "./members.js";
import { migrationProvider } from "./migrations/index.js";
import { type NodesRepo, nodesRepo } from "./nodes.js";
import { type OrgJwksRepo, orgJwksRepo } from "./org-jwks.js";
import { type OrganizationsRepo, organizationsRepo } from "./organizations.js";
import { type PlansRepo, plansRepo } from "./plans.js";
import { type RevokedDbTokensRepo, revokedDbTokensRepo } from "./revoked-db-tokens.js";
import type { DB } from "./schema.js";
import { type UsageRepo, usageRepo } from "./usage.js";
import { type UsersRepo, usersRepo } from "./users.js";

/** How many times a write transaction is tried when PostgreSQL aborts it for a transient reason. */
const WRITE_ATTEMPTS = 4;

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
  leases: LeasesRepo;
  revokedDbTokens: RevokedDbTokensRepo;
  orgJwks: OrgJwksRepo;
  deletedDatabases: DeletedDatabasesRepo;
  deletedGroups: DeletedGroupsRepo;
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
    return fn(this.repos(this.db)).catch((e: unknown) => {
      throw this.dialect.lostConnection(e) ? storeUnreachable(e) : e;
    });
  }

  /**
   * Runs `fn` in one transaction; it commits when `fn` resolves and rolls back when it throws.
   * On PostgreSQL a transaction chosen as a deadlock victim or failing serialization is run again
   * (a few times, after a short random pause): it changed nothing, and the retry usually goes
   * through. `fn` must therefore only touch the store.
   *
   * A lost connection (PostgreSQL down, cut off, or silent past its query timeout) fails with a
   * typed 503: STORE_UNAVAILABLE while `fn` ran (the server rolls back a transaction whose
   * connection ended), STORE_OUTCOME_UNKNOWN once it had finished and the commit was on its way.
   */
  async write<T>(fn: (r: Repos) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let committing = false;
      try {
        return await this.db.transaction().execute(async (tx) => {
          const done = await fn(this.repos(tx));
          committing = true;
          return done;
        });
      } catch (e) {
        if (this.dialect.lostConnection(e)) throw committing ? storeOutcomeUnknown(e) : storeUnreachable(e);
        if (attempt >= WRITE_ATTEMPTS || !this.dialect.isTransient(e)) throw e;
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
      }
    }
  }

  async migrate(): Promise<void> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider(this.dialect.kind) });
    const { error, results } = await migrator.migrateToLatest();
    const failed = results?.find((r) => r.status === "Error");
    if (error || failed) {
      const cause = error instanceof Error ? error.message || error.name : String(error ?? "unknown error");
      const which = failed ? `migration ${failed.migrationName}` : "migrations";
      throw new StartError(`control-plane ${which} failed: ${cause}`, 1);
    }
  }

  /** Resolves when the store answers a query on its own tables (readiness); throws when it can't. */
  async ping(): Promise<void> {
    await this.read(() => sql`select count(*) from kysely_migration`.execute(this.db));
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
      leases: leasesRepo(ex),
      revokedDbTokens: revokedDbTokensRepo(ex),
      orgJwks: orgJwksRepo(ex),
      deletedDatabases: deletedDatabasesRepo(ex),
      deletedGroups: deletedGroupsRepo(ex),
    };
  }
}
