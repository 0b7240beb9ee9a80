import { ForbiddenError, InvalidError, NotFoundError } from "../../errors.js";

/** Who may do what, where a refusal says more than "your role does not allow it". */
const DENIED: Readonly<Record<string, string>> = {
  "members:manage": "only organization admins or owners can manage members",
  "audit:read": "only organization admins or owners can read the audit log",
  "group:transfer": "only organization admins or owners can transfer groups",
  "org:delete": "only the organization owner can do this",
};

/**
 * Every error message the core (names, roles and scopes, lookups shared by every area) answers with. The texts are the API's contract (Turso's wording
 * where Turso has one; clients and tests match on them): change one only on purpose.
 */
export const coreErrors = {
  roleDenied: (role: string, action: string) =>
    new ForbiddenError(DENIED[action] ?? `your role (${role}) does not allow ${action}`),
  invalidScope: (name: string, allowed: string) =>
    new InvalidError(`invalid scope: ${name} (one of ${allowed})`),
  groupTokenCannot: (action: string) => new ForbiddenError(`a group-scoped API token cannot do ${action}`),
  missingScope: (action: string) => new ForbiddenError(`this API token lacks the ${action} scope`),
  otherGroup: (groupName: string) =>
    new ForbiddenError(`this API token is restricted to another group than ${groupName}`),
  needsUnrestrictedToken: (what: string, limitedTo: string) =>
    new ForbiddenError(`${what} needs an unrestricted API token: this one is limited to ${limitedTo}`),
  adminOnly: (what: string) => new ForbiddenError(`only the instance administrator can ${what}`),
  nameRequired: (kind: string) => new InvalidError(`${kind} name is required`),
  nameTooLong: (kind: string, max: number) =>
    new InvalidError(`${kind} name must be at most ${max} characters`),
  nameCharacters: (kind: string) =>
    new InvalidError(`${kind} name must contain only lowercase letters, digits and dashes`),
  nameDash: (kind: string) => new InvalidError(`${kind} name must not start or end with a dash`),
  hostnameLabelTooLong: (label: string, length: number, max: number) =>
    new InvalidError(
      `database name is too long for this organization: the hostname label "${label}" has ${length} characters and DNS allows ${max}`,
    ),
  invalidAccountName: (kind: string, name: string) =>
    new InvalidError(`invalid ${kind} "${name}": use 1 to 40 lowercase letters, digits or inner dashes`),
  invalidEmail: (email: string) => new InvalidError(`invalid email address: ${email}`),
  invalidTokenName: () =>
    new InvalidError("token name must be 1 to 64 letters, digits, dots, dashes or underscores"),
  invalidSizeLimit: (text: string) =>
    new InvalidError(`invalid size_limit "${text}": use bytes or a unit such as 256mb or 1gb`),
  sizeLimitOutOfRange: (text: string) => new InvalidError(`invalid size_limit "${text}"`),
  groupNotFound: () => new NotFoundError("group not found"),
  databaseNotFound: (name: string) =>
    new NotFoundError(`could not find database with name ${name}: record not found`),
  notAMember: (slug: string) => new ForbiddenError(`you are not a member of organization ${slug}`),
  organizationNotFound: () => new NotFoundError("organization not found"),
};
