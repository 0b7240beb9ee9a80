import type { EncryptionParams } from "../../engine/encryption/keys.js";
import { UniqueViolationError } from "../../errors.js";
import { newUuid } from "../../lib/ids.js";
import { isoTime } from "../../lib/time.js";
import type { GroupRow, OrganizationRow } from "../../store/schema.js";
import type { Repos } from "../../store/store.js";
import { requireFilesHere } from "../cluster/placement-tx.js";
import { requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { diskFullError, requireDiskSpace } from "../core/disk.js";
import { coreErrors } from "../core/errors.js";
import { checkDatabaseName, parseSizeLimit } from "../core/names.js";
import type { Ref } from "../core/ref.js";
import { requireGroupInScope } from "../core/roles.js";
import { groupErrors } from "../groups/errors.js";
import { requireQuota } from "../plans/quota-tx.js";
import { planEncryption } from "./encryption-plan.js";
import { databaseErrors } from "./errors.js";
import type { BuiltContent, ContentPlan, DatabaseCtx, Seed } from "./ports.js";
import { buildReplicasAfter } from "./replicas.js";
import { dumpIdFromUrl, parseSeed, requireSeedSource } from "./seeds.js";
import { type Database, toDatabase } from "./views.js";

export interface CreateDatabaseInput {
  name: string;
  /** Group to create the database in; Turso's older clients omit it and mean `default`. */
  group?: string;
  /** The turso CLI always sends one (possibly empty); when set it must be a location of the group. */
  location?: string;
  sizeLimit?: string;
  /** The request's `seed` object, checked here (see seeds.ts). */
  seed?: unknown;
  /** Whether other databases may follow this one's schema. */
  isSchema?: boolean;
  /** Name of the schema database this one follows. */
  schema?: string;
  /** Host the request was sent to: a dump URL must point to this same server. */
  host?: string;
  /** The request's `remote_encryption` (`{encryption_key, encryption_cipher}`), checked here. */
  remoteEncryption?: unknown;
  /** The group by id (the v3 TS client's `groupId`): placement, so never ignored. */
  groupId?: string;
  /** Asks for the Turso Database engine: refused when true (Shoal runs libSQL). */
  useTursoDb?: boolean;
  /**
   * A branch that names no group goes to its source's group rather than `default` (the v3 API:
   * the turso CLI sends a fork there with neither `group` nor `group_id`).
   */
  branchInSourceGroup?: boolean;
}

interface Destination {
  org: OrganizationRow;
  group: GroupRow;
  locations: string[];
}

/**
 * Core operation 1. The new database's file is built first (empty, or from its seed), then its
 * row is committed in one transaction with the audit entry; if the row can't be committed the file
 * is removed, so a create either happens whole or leaves nothing, whatever the seed. Everything
 * that can be checked without the content (rights, name, group, quota, the seed's source) is
 * checked before building, so a create that can't happen costs nothing. Once committed, a replica
 * is built in every other location of the group (it copies the primary through the sync protocol,
 * which needs the committed row); a replica that can't be built now is logged and built by the
 * next reconciliation, while the database serves.
 */
export async function createDatabase(
  ctx: DatabaseCtx,
  slug: Ref,
  input: CreateDatabaseInput,
): Promise<Database> {
  const sizeLimit = input.sizeLimit?.trim().toLowerCase() || null;
  const maxBytes = sizeLimit === null ? 0 : parseSizeLimit(sizeLimit);
  const seed = input.seed === undefined || input.seed === null ? undefined : parseSeed(input.seed);
  if (input.useTursoDb === true) throw databaseErrors.tursoDbEngine();
  if (input.isSchema && input.schema) {
    throw databaseErrors.schemaAndIsSchema();
  }
  if (input.schema && seed) {
    throw databaseErrors.schemaAndSeed();
  }
  const { deps } = ctx;
  const plan = await deps.store.read(async (r) => {
    const placed = await place(r, ctx, slug, input, seed);
    await requireQuota(r, placed.org, "databases");
    return { placed, content: await planContent(r, ctx, placed.org, input, seed) };
  });
  const id = newUuid();
  const location = plan.placed.group.primary_location;
  const create = async () => {
    const built = await deps.content
      .build(location, id, plan.content, maxBytes)
      .catch((e: unknown) =>
        Promise.reject(diskFullError(e, deps.disk, `creating database ${input.name}`) ?? e),
      );
    try {
      const encryption = plan.content.encryption?.params;
      return await commitCreate(ctx, slug, input, { id, sizeLimit, seed, built, encryption });
    } catch (e) {
      deps.content.discard(location, id);
      throw e;
    }
  };
  // A child is created in its schema database's queue: no schema change can slip in between.
  const parent = plan.content.schemaParent;
  const created = parent ? await deps.schema.run(parent.id, create) : await create();
  if (plan.content.dumpId) deps.dumps.remove(plan.content.dumpId);
  await buildReplicasAfter(deps, created.id, created.locations, created.primaryLocation);
  return created;
}

/** The organization and group a new database goes to, once the caller may create it there. */
async function place(
  r: Repos,
  ctx: DatabaseCtx,
  slug: Ref,
  input: CreateDatabaseInput,
  seed: Seed | undefined,
): Promise<Destination> {
  const { org } = await requireOrgAccess(r, ctx.actor, slug, "db:create");
  checkDatabaseName(input.name, org.slug);
  const group = await findGroup(r, org.id, input, seed);
  if (!group) throw databaseErrors.groupNotFoundForCreate();
  requireGroupInScope(ctx.actor, group.id, group.name);
  const locations = (await r.groups.locationsOf([group.id])).get(group.id) ?? [];
  if (input.location && !locations.includes(input.location)) {
    throw groupErrors.locationNotInGroup(input.location, group.name);
  }
  if (await r.databases.findByName(org.id, input.name)) {
    throw databaseErrors.nameTaken(input.name);
  }
  // The primary is made here; the replicas of locations other nodes hold are built by them.
  await requireFilesHere(r, ctx.deps, [group.primary_location]);
  requireDiskSpace(ctx.deps.disk, `creating database ${input.name}`);
  return { org, group, locations };
}

/** The group a create names, by `group` (default `default`), by `group_id`, or by both alike. */
async function findGroup(
  r: Repos,
  orgId: string,
  input: CreateDatabaseInput,
  seed: Seed | undefined,
): Promise<GroupRow | undefined> {
  if (!input.groupId && !input.group && input.branchInSourceGroup && seed?.type === "database") {
    const source = await r.databases.findByName(orgId, seed.source);
    // An unknown source is reported as such by the seed's own checks.
    if (source) return r.groups.findById(source.group_id);
  }
  if (!input.groupId) return r.groups.findByName(orgId, input.group || "default");
  const byId = await r.groups.findById(input.groupId);
  const group = byId?.org_id === orgId ? byId : undefined;
  if (group && input.group && input.group !== group.name) throw databaseErrors.groupIdMismatch(input.group);
  return group;
}

/** Resolves what a seed or a schema refers to, all within the caller's organization and reach. */
async function planContent(
  r: Repos,
  ctx: DatabaseCtx,
  org: OrganizationRow,
  input: CreateDatabaseInput,
  seed: Seed | undefined,
): Promise<ContentPlan> {
  const { deps } = ctx;
  if (seed?.type === "database") {
    const found = await r.databases.findByName(org.id, seed.source);
    const source = requireSeedSource(deps, found, seed.source, ctx.actor.groupId);
    const encryption = planEncryption({ ...request(input), source });
    return { seed, source, ...(encryption ? { encryption } : {}) };
  }
  const encryption = planEncryption(request(input));
  if (encryption) return { ...(await planPlain(r, ctx, org, input, seed)), encryption };
  return planPlain(r, ctx, org, input, seed);
}

function request(input: CreateDatabaseInput) {
  return { remoteEncryption: input.remoteEncryption, isSchema: input.isSchema, schema: input.schema };
}

/** The plan of a create that copies no database. */
async function planPlain(
  r: Repos,
  ctx: DatabaseCtx,
  org: OrganizationRow,
  input: CreateDatabaseInput,
  seed: Seed | undefined,
): Promise<ContentPlan> {
  const { deps } = ctx;
  if (seed?.type === "dump") {
    const dumpId = dumpIdFromUrl(seed.url, org.slug, input.host);
    if (deps.dumps.find(dumpId)?.orgId !== org.id) {
      throw databaseErrors.dumpGone();
    }
    return { seed, dumpId };
  }
  if (input.schema) {
    const parent = await r.databases.findByName(org.id, input.schema);
    if (!parent || (ctx.actor.groupId !== null && parent.group_id !== ctx.actor.groupId)) {
      throw coreErrors.databaseNotFound(input.schema);
    }
    if (parent.awaiting_upload !== 0) {
      throw databaseErrors.schemaAwaitingUpload(input.schema);
    }
    if (parent.is_schema !== 1) {
      throw databaseErrors.notASchema(input.schema);
    }
    if (!deps.files.exists(parent.primary_location, parent.id)) {
      throw databaseErrors.schemaElsewhere(input.schema, parent.primary_location);
    }
    return { seed, schemaParent: parent };
  }
  return { seed };
}

/** Commits the row of a database whose file is built, with its audit entry. */
async function commitCreate(
  ctx: DatabaseCtx,
  slug: Ref,
  input: CreateDatabaseInput,
  made: {
    id: string;
    sizeLimit: string | null;
    seed: Seed | undefined;
    built: BuiltContent;
    encryption?: EncryptionParams;
  },
): Promise<Database> {
  const { deps } = ctx;
  const { built } = made;
  return deps.store.write(async (r) => {
    const { org, group } = await place(r, ctx, slug, input, made.seed);
    // The insert bumps the organization's count (a trigger): take its row before the group's,
    // the order every transaction locks them in.
    await r.organizations.lockAll([org.id]);
    await requireQuota(r, org, "databases");
    await r.groups.lock(group.id);
    if (built.schemaId) {
      // The schema database may have been deleted while this one was built; locked, it can't be
      // deleted until this child is committed (its deletion then sees the child and refuses).
      await r.databases.lock(built.schemaId);
      if (!(await r.databases.findById(built.schemaId))) {
        throw databaseErrors.schemaDeleted(input.schema);
      }
    }
    // Read again under the lock: a location added meanwhile must get this database's replica too.
    const locations = (await r.groups.locationsOf([group.id])).get(group.id) ?? [];
    const row = {
      id: made.id,
      org_id: org.id,
      group_id: group.id,
      name: input.name,
      size_limit: made.sizeLimit,
      block_reads: 0,
      block_writes: 0,
      allow_attach: 0,
      delete_protection: 0,
      created_at: isoTime(deps.clock()),
      hostname_label: `${input.name}-${org.slug}`,
      token_generation: 0,
      parent_id: built.parentId ?? null,
      branched_at: built.branchedAt ?? null,
      is_schema: input.isSchema ? 1 : 0,
      schema_id: built.schemaId ?? null,
      schema_seq: built.schemaSeq ?? 0,
      awaiting_upload: built.awaitingUpload ? 1 : 0,
      // Never the key: only what tells it apart (ADR 0016).
      encryption_cipher: made.encryption?.cipher ?? null,
      encryption_salt: made.encryption?.salt ?? null,
      encryption_check: made.encryption?.check ?? null,
    };
    try {
      await r.databases.insert(row);
    } catch (e) {
      if (!(e instanceof UniqueViolationError)) throw e;
      if (await r.databases.findByName(org.id, input.name)) {
        throw databaseErrors.nameTaken(input.name);
      }
      // Another organization's database has the same hostname (`a-b` + `c` vs `a` + `b-c`).
      throw databaseErrors.hostnameTaken(input.name, row.hostname_label, deps.dbDomain);
    }
    const seeded = made.seed ? seedSummary(made.seed) : {};
    await audit(r, ctx, org.id, "db-create", `database ${input.name} created in group ${group.name}`, {
      database: input.name,
      group: group.name,
      ...seeded,
      ...(input.isSchema ? { is_schema: true } : {}),
      ...(input.schema ? { schema: input.schema } : {}),
      ...(made.encryption ? { encryption_cipher: made.encryption.cipher } : {}),
    });
    const created = await r.databases.findById(made.id);
    return toDatabase(created!, locations, deps.dbDomain);
  });
}

function seedSummary(seed: Seed): Record<string, unknown> {
  if (seed.type !== "database") return { seed: { type: seed.type } };
  const at = seed.at === undefined ? {} : { timestamp: new Date(seed.at).toISOString() };
  return { seed: { type: seed.type, name: seed.source, ...at } };
}
