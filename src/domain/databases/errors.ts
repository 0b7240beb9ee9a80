import {
  ConflictError,
  ForbiddenError,
  InvalidError,
  LimitExceededError,
  NotFoundError,
  UnavailableError,
} from "../../errors.js";

/**
 * Every error message the databases area answers with. The texts are the API's contract (Turso's wording
 * where Turso has one; clients and tests match on them): change one only on purpose.
 */
export const databaseErrors = {
  tursoDbEngine: () =>
    new InvalidError(
      "use_tursodb: the Turso Database engine is not available on Shoal, which runs libSQL; send false or leave it out",
    ),
  groupIdMismatch: (group: string) =>
    new InvalidError(
      `group_id names another group than group ${group}: send one of them, or both for the same group`,
    ),
  encryptionWithSchema: () =>
    new InvalidError(
      "remote_encryption can't be used with is_schema or schema: a schema database's changes are kept and replayed into the databases following it in plain text",
      "ENCRYPTION_NOT_SUPPORTED",
    ),
  sourceEncrypted: (name: string) =>
    new InvalidError(
      `database ${name} is encrypted: a branch or point-in-time restore of it needs its key in remote_encryption.encryption_key (it keeps the source's cipher and key)`,
      "ENCRYPTION_KEY_REQUIRED",
    ),
  sourceKeyWrong: (name: string) =>
    new ForbiddenError(
      `remote_encryption.encryption_key doesn't open database ${name}: a branch or restore keeps its source's key, and rekeying is not supported (export with the old key and upload into a new database)`,
      "ENCRYPTION_KEY_INVALID",
    ),
  encryptionNotObject: () =>
    new InvalidError(
      "remote_encryption must be an object: {encryption_key: <base64 of 32 bytes>, encryption_cipher: aes256cbc}",
      "ENCRYPTION_KEY_MALFORMED",
    ),
  encryptionNotOnConfiguration: () =>
    new InvalidError(
      "remote_encryption can only be given when a database is created: an existing database can't be encrypted or rekeyed in place (export it and upload it into a new database created with remote_encryption)",
      "ENCRYPTION_NOT_SUPPORTED",
    ),
  attachEncrypted: (name: string) =>
    new InvalidError(
      `allow_attach can't be turned on for database ${name}: it is encrypted, and other databases can't read it without its key`,
      "ENCRYPTION_NOT_SUPPORTED",
    ),
  invalidTime: (name: string, reason: string) => new InvalidError(`invalid ${name} parameter: ${reason}`),
  periodReversed: () => new InvalidError("invalid period: from is after to"),
  transferTargetMissing: () =>
    new InvalidError("organization is required: the slug of the organization to transfer to"),
  alreadyInOrganization: (slug: string) => new InvalidError(`already in organization ${slug}`),
  transferTargetRefused: (slug: string) =>
    new InvalidError(
      `cannot transfer to organization ${slug}: it does not exist, or you (with this API token) are not an owner or admin of it`,
    ),
  schemaStaysBehind: (name: string, schema: string) =>
    new InvalidError(
      `database ${name} follows schema database ${schema}, which would stay behind; a database can only move with its schema database`,
    ),
  followersStayBehind: (name: string, followers: string) =>
    new InvalidError(`schema database ${name} is followed by ${followers}, which would stay behind`),
  namesTakenInTarget: (slug: string, names: string) =>
    new ConflictError(`organization ${slug} already has databases named ${names}`),
  hostnamesTaken: (labels: string) =>
    new ConflictError(`the hostnames ${labels} are taken by databases of other organizations`),
  groupExistsInTarget: (name: string, slug: string) =>
    new ConflictError(`group ${name} already exists in organization ${slug}`),
  landingGroupElsewhere: (
    name: string,
    group: string,
    slug: string,
    groupPrimary: string,
    dbPrimary: string,
  ) =>
    new InvalidError(
      `cannot move database ${name} into group ${group} of organization ${slug}: that group's primary location is ${groupPrimary} and the database's is ${dbPrimary}; rename one of the groups, or transfer the whole group`,
    ),
  onlyAdminsTransfer: () => new ForbiddenError("only organization admins or owners can transfer databases"),
  tooManyAllowedIps: (max: number, count: number) =>
    new InvalidError(`allowed_ips can hold at most ${max} entries, not ${count}`),
  invalidAllowedIp: (reason: string) => new InvalidError(`invalid allowed_ips entry: ${reason}`),
  noPrivateLink: () =>
    new InvalidError(
      "allowed_aws_vpc_ids: AWS PrivateLink is not available on Shoal; restrict access with allowed_ips instead",
    ),
  seedNotObject: () =>
    new InvalidError('seed must be an object such as {"type": "database", "name": "my-db"}'),
  seedTypeMissing: (allowed: string) => new InvalidError(`seed.type is required: one of ${allowed}`),
  seedTypeUnknown: (type: string, allowed: string) =>
    new InvalidError(`unknown seed type "${type}": use one of ${allowed}`),
  seedTimestampMisplaced: () =>
    new InvalidError('seed.timestamp only applies to seed type "database" (a point-in-time copy)'),
  seedSourceMissing: () =>
    new InvalidError('seed type "database" needs seed.name (or seed.value): the database to copy'),
  seedTimestampNotText: () => new InvalidError("seed.timestamp must be an ISO-8601 time"),
  seedTimestampInvalid: (reason: string) =>
    new InvalidError(
      `seed.timestamp must be an ISO-8601 time with a time zone, such as 2026-05-01T12:00:00Z: ${reason}`,
    ),
  seedUrlMissing: () =>
    new InvalidError('seed type "dump" needs seed.url: the dump_url returned by POST .../databases/dumps'),
  badDumpUrl: (why: string, orgSlug: string) =>
    new InvalidError(
      `seed.url ${why}: it must be a dump_url returned by POST /v1/organizations/${orgSlug}/databases/dumps on this server. Shoal doesn't download dumps from other addresses (fetching caller-supplied URLs from the server would expose its internal network); upload the dump there first`,
    ),
  sourceAwaitingUpload: (name: string) =>
    new InvalidError(`database ${name} has no content to copy yet: it is waiting for an upload`),
  sourceElsewhere: (name: string, location: string) =>
    new UnavailableError(
      `the primary of database ${name} is not served by this node; send the request to the node holding location ${location}`,
    ),
  schemaAndIsSchema: () =>
    new InvalidError(
      "is_schema and schema can't both be set: a database is either a schema database or follows one",
    ),
  schemaAndSeed: () =>
    new InvalidError(
      "a database following a schema database gets its schema from it: it can't have a seed too",
    ),
  groupNotFoundForCreate: () => new InvalidError("group not found"),
  nameTaken: (name: string) => new ConflictError(`database with name ${name} already exists`),
  dumpGone: () =>
    new InvalidError(
      "seed.url names a dump that doesn't exist or has expired (a dump is kept 24 hours, until a database is created from it): upload it again",
    ),
  schemaAwaitingUpload: (name: string) =>
    new InvalidError(`schema database ${name} has no schema yet: it is waiting for an upload`),
  notASchema: (name: string) =>
    new InvalidError(
      `database ${name} is not a schema database: create it with is_schema true to share its schema`,
    ),
  schemaElsewhere: (name: string, location: string) =>
    new UnavailableError(
      `the primary of schema database ${name} is not served by this node; send the request to the node holding location ${location}`,
    ),
  schemaDeleted: (name: undefined | string) =>
    new NotFoundError(`schema database ${name} was deleted while this database was created`),
  hostnameTaken: (name: string, label: string, dbDomain: string) =>
    new ConflictError(`database name ${name} is not available: the hostname ${label}.${dbDomain} is taken`),
  deleteProtected: (name: string) =>
    new InvalidError(`database ${name} is protected against deletion; turn delete_protection off first`),
  /** Names the first five followers. */
  schemaFollowed: (name: string, followers: readonly string[]) =>
    new InvalidError(
      `schema database ${name} can't be deleted while databases follow its schema (${followers.slice(0, 5).join(", ")}${followers.length > 5 ? ", ..." : ""}); delete them first`,
    ),
  groupDeleteProtected: (name: string, group: string) =>
    new InvalidError(
      `database ${name} is in group ${group}, which is protected against deletion; turn the group's delete_protection off first`,
    ),
  dumpRoomFull: (slug: string, max: number) =>
    new LimitExceededError(
      `organization ${slug} already has ${max} bytes of dumps waiting; create databases from them or let them expire first`,
    ),
  /** `roomLeft`: the limit is what this organization's waiting dumps leave, not the largest dump. */
  dumpTooLarge: (maxBytes: number, roomLeft: boolean) =>
    new InvalidError(
      `the dump is larger than ${maxBytes} bytes${roomLeft ? " (the room left for this organization's waiting dumps)" : ""}`,
    ),
  dumpEmpty: () => new InvalidError("the dump is empty: send the SQL text in the multipart field `file`"),
  instanceNotFound: (instance: string, db: string) =>
    new NotFoundError(`could not find instance ${instance} of database ${db}`),
  locationRequired: () => new InvalidError("location is required"),
  primaryInstanceKept: (instance: string, db: string) =>
    new InvalidError(
      `instance ${instance} is the primary of database ${db} and can't be deleted; delete the database instead`,
    ),
  instanceBehind: (instance: string, db: string, timeoutMs: number) =>
    new UnavailableError(`instance ${instance} of database ${db} did not catch up within ${timeoutMs} ms`),
  periodTooLong: (days: number) => new InvalidError(`invalid period: at most ${days} days at a time`),
};

/** What recovering deleted databases and groups answers when it refuses (restore.ts). */
export const restoreErrors = {
  noDeletedDatabase: (id: string) =>
    new NotFoundError(
      `no deleted database with id ${id} can be restored: it wasn't deleted in this organization, or its time to be restored is over`,
    ),
  noDeletedGroup: (id: string) =>
    new NotFoundError(
      `no deleted group with id ${id} can be restored: it wasn't deleted in this organization, or its time to be restored is over`,
    ),
  recoveryOff: (org: string) =>
    new ConflictError(
      `recovery of deleted databases is turned off for organization ${org}: turn it on with PATCH /v1/organizations/${org} {"restore_enabled": true}`,
    ),
  groupGone: (name: string, group: string, withIt: boolean) =>
    new ConflictError(
      withIt
        ? `database ${name} was deleted with its group ${group}: restore the group, which brings back its databases`
        : `the group ${group} of database ${name} no longer exists`,
    ),
  nameTaken: (name: string) =>
    new ConflictError(
      `database with name ${name} already exists: restore it under another name with {"name": "<new name>"}`,
    ),
  groupNameTaken: (name: string) =>
    new ConflictError(
      `group with name ${name} already exists: rename or delete it before restoring this one`,
    ),
  primaryMoved: (name: string, from: string, to: string) =>
    new ConflictError(
      `database ${name} was kept where its group's primary was (${from}); the group's primary is now ${to}: fail the group back over before restoring it`,
    ),
  filesMissing: (name: string, why: string) =>
    new UnavailableError(
      `database ${name} couldn't be brought back: ${why}; it stays deleted and restorable`,
    ),
};
