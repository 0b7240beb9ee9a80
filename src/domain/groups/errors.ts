import { ConflictError, InvalidError, NotFoundError, UnavailableError } from "../../errors.js";

/**
 * Every error message the groups area answers with. The texts are the API's contract (Turso's wording
 * where Turso has one; clients and tests match on them): change one only on purpose.
 */
export const groupErrors = {
  instanceBelongsToGroup: (location: string, database: string, group: string) =>
    new InvalidError(
      `instance ${location} of database ${database} can't be deleted on its own: locations belong to the group, and group ${group} has other databases there; remove the location from the group instead (DELETE .../groups/${group}/locations/${location})`,
    ),
  invalidLocation: (code: string) => new InvalidError(`invalid location: ${code}`),
  locationNotFound: (code: string) => new NotFoundError(`location ${code} not found`),
  exists: () => new ConflictError("group already exists"),
  locationNotInGroup: (location: string, group: string) =>
    new InvalidError(`location ${location} is not part of group ${group}`),
  locationNotBuilt: (location: string) =>
    new UnavailableError(`location ${location} could not be added: its replicas could not be built`),
  primaryLocationKept: () => new InvalidError("cannot remove primary location"),
  alreadyPrimary: (location: string, group: string) =>
    new ConflictError(`location ${location} is already the primary of group ${group}`, "already_primary"),
  notStandby: (location: string, group: string) =>
    new ConflictError(
      `location ${location} is not a standby of group ${group}: it may lack writes the primary acknowledged`,
      "not_standby",
    ),
  locationBehind: (location: string, timeoutMs: number) =>
    new UnavailableError(`replicas in ${location} did not catch up within ${timeoutMs} ms`),
  deleteProtected: (name: string) =>
    new InvalidError(`group ${name} is protected against deletion; turn delete_protection off first`),
  holdsProtected: (name: string, databases: string) =>
    new InvalidError(`group ${name} holds databases protected against deletion: ${databases}`),
};
