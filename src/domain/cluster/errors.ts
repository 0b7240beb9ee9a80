import {
  BadGatewayError,
  ConflictError,
  InvalidError,
  MisdirectedError,
  NotFoundError,
  UnavailableError,
} from "../../errors.js";

/**
 * Every error message the cluster area answers with. The texts are the API's contract (Turso's wording
 * where Turso has one; clients and tests match on them): change one only on purpose.
 */
export const clusterErrors = {
  filesElsewhere: (locations: readonly string[], holder: { id: string; url: string }, self: string) =>
    new MisdirectedError(
      `the database files of location ${locations.join(", ")} are kept by node ${holder.id} (${holder.url}), ` +
        `not by this node (${self}): send this request to ${holder.url}`,
      "misdirected",
      { id: holder.id, url: holder.url },
    ),
  notReady: (reasons: string) => new UnavailableError(`not ready: ${reasons}`, "not_ready"),
  locationUnheld: (location: string) =>
    new MisdirectedError(
      `no node holds location ${location} yet: start a node whose SHOAL_LOCATIONS includes it`,
    ),
  spansNodes: (holders: string) =>
    new ConflictError(
      `this call involves database files kept by several nodes (${holders}), which no single node can act on: act on the groups of each node's locations separately`,
      "spans_nodes",
    ),
  nodeNotFound: (id: string) => new NotFoundError(`node ${id} not found`),
  nodeLive: (id: string) => new ConflictError(`node ${id} is live; stop it first`),
  backupsOff: () =>
    new ConflictError(
      "backups are off on this node: set SHOAL_BACKUP_URL (see docs/operations/backups.md)",
      "backups_off",
    ),
  backupOrgNotFound: (org: string) => new NotFoundError(`organization ${org} not found`),
  backupDbNotFound: (org: string, name: string) =>
    new NotFoundError(`database ${name} not found in organization ${org}`),
  noBackup: (name: string) =>
    new NotFoundError(`the bucket holds no backup of database ${name} (no snapshot was shipped yet)`),
  badRestoreTime: (reason: string) => new InvalidError(`invalid timestamp: ${reason}`),
  restoreBodyInvalid: (reason: string) => new InvalidError(`invalid restore request: ${reason}`),
  restoreInFuture: (at: string, now: string) =>
    new InvalidError(`timestamp ${at} is in the future (the server's time is ${now})`),
  restoreBeforeHistory: (at: string, name: string, earliest: string) =>
    new InvalidError(
      `timestamp ${at} is older than the backups of database ${name} kept in the bucket: the oldest restorable moment is ${earliest}`,
    ),
  restoreBusy: (name: string) =>
    new ConflictError(`a restore of database ${name} is already running`, "restore_busy"),
  bucketUnavailable: (reason: string) =>
    new UnavailableError(
      `the backup bucket can't be used now (nothing was changed): ${reason}`,
      "bucket_unavailable",
    ),
  backupDamaged: (reason: string) =>
    new BadGatewayError(
      `the backup in the bucket can't be restored (nothing was changed): ${reason}`,
      "restore_failed",
    ),
  restoreDrainTimeout: (name: string) =>
    new UnavailableError(
      `database ${name} is busy (a write transaction held it too long); retry the restore`,
    ),
};
