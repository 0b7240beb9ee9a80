import {
  ConflictError,
  ForbiddenError,
  InvalidError,
  NotFoundError,
  UnauthenticatedError,
  UnprocessableError,
} from "../../errors.js";

const MINT_API_TOKEN = "mint one with POST /v1/auth/api-tokens/{name} (turso auth api-tokens mint <name>)";

/**
 * Every error message the accounts area answers with. The texts are the API's contract (Turso's wording
 * where Turso has one; clients and tests match on them): change one only on purpose.
 */
export const accountErrors = {
  // Turso's wording first (the official TS client's tests match on it), then what would help.
  notAJwt: () =>
    new UnauthenticatedError(
      "token contains an invalid number of segments: this is no API token of this service (they are " +
        `JWTs: three parts separated by dots, eyJ...); check that the whole token was copied, or ${MINT_API_TOKEN}`,
    ),
  databaseTokenOnApi: () =>
    new UnauthenticatedError(
      `the token is a database token, which opens one database but not the management API: ${MINT_API_TOKEN}`,
    ),
  invalidIdempotencyKey: () =>
    new InvalidError("invalid Idempotency-Key: 1 to 255 printable ASCII characters without spaces"),
  idempotencyKeyReused: () =>
    new UnprocessableError(
      "this Idempotency-Key was already used for a different request; use a new key",
      "idempotency_key_reused",
    ),
  idempotencyInProgress: () =>
    new ConflictError(
      "a request with this Idempotency-Key is still in progress; retry when it has finished",
      "idempotency_in_progress",
    ),
  invalidApiToken: () => new UnauthenticatedError("invalid or revoked API token"),
  tokenNameTaken: (name: string) => new ConflictError(`a token named ${name} already exists`),
  usernameTaken: (username: string) => new ConflictError(`username ${username} is not available`),
  alreadyMember: (username: string, slug: string) =>
    new ConflictError(`user ${username} is already a member of organization ${slug}`),
  noSuchUser: (username: string) => new NotFoundError(`could not find user ${username}`),
  lastAdministrator: () => new InvalidError("cannot delete the last instance administrator"),
  soleOwner: (username: string, slugs: string) =>
    new ConflictError(
      `user ${username} is the only owner of ${slugs}; add another owner or delete those organizations first`,
    ),
  groupTokenCannotMint: () => new ForbiddenError("a group-scoped API token cannot mint API tokens"),
  groupTokenNeedsOrganization: () =>
    new InvalidError("a group-scoped token needs organization as well as group"),
  scopesNeedGroup: () =>
    new InvalidError("scopes apply to group-scoped tokens: pass group (and organization) too"),
  groupTokenNeedsScope: () => new InvalidError("a group-scoped token needs at least one scope"),
  organizationTokenMintsOwnOnly: () =>
    new ForbiddenError("an organization-scoped API token can only mint tokens for its organization"),
  onlyAdminsMintGroupTokens: () =>
    new ForbiddenError("only organization admins or owners can mint group-scoped tokens"),
  tokenNotFound: (name: string) => new NotFoundError(`token ${name} not found`),
  restrictedTokenRevokesOwnOnly: () =>
    new ForbiddenError(
      "a restricted API token can only revoke itself, or tokens of its own organization: use an unrestricted token",
    ),
  lastAdminToken: (name: string) =>
    new ConflictError(
      `token ${name} is the last unrestricted API token of any instance administrator; mint another one before revoking it`,
    ),
  twoPageSizes: () => new InvalidError("give page_size or limit, not two different sizes"),
  pageSizeOutOfRange: (parameter: string, max: number) =>
    new InvalidError(`${parameter} must be between 1 and ${max}`),
  pageBelowOne: () => new InvalidError("page must be 1 or more"),
  foreignCursor: () => new InvalidError("invalid cursor: it belongs to another list"),
  invalidRole: () => new InvalidError("invalid role"),
  memberNotFound: () => new NotFoundError("could not find member"),
  membersForTeamsOnly: () => new InvalidError("members can only be added to team organizations"),
  onlyAdminsChangeRoles: () => new ForbiddenError("updating member roles is only allowed for admin or owner"),
  onlyOwnersMakeOwners: () => new ForbiddenError("only an owner can make or unmake an owner"),
  lastOwnerDemoted: (slug: string) =>
    new InvalidError(`cannot demote the only owner of organization ${slug}`),
  onlyAdminsManageMembers: () => new ForbiddenError("only organization admins or owners can manage members"),
  notAMember: (username: string, slug: string) =>
    new NotFoundError(`user ${username} is not a member of org ${slug}`),
  onlyOwnersRemoveOwners: () => new ForbiddenError("only an owner can remove an owner"),
  lastOwnerRemoved: (slug: string) =>
    new InvalidError(`cannot remove the only owner of organization ${slug}`),
  inviteNotFound: () => new NotFoundError("invite not found", "invite_not_found"),
  invitesForTeamsOnly: () => new InvalidError("invites are only for team organizations"),
  inviteAddressRequired: () => new InvalidError("exactly one of email or username is required"),
  userNotFound: () => new NotFoundError("user not found"),
  organizationNameLength: () => new InvalidError("organization name must be 1 to 64 characters"),
  organizationTokenCannotCreate: () =>
    new InvalidError("an organization-scoped token cannot create organizations"),
  organizationExists: (slug: string) => new ConflictError(`organization ${slug} already exists`),
  personalOrganizationKept: () => new InvalidError("a personal organization cannot be deleted"),
  lastAdminSession: () =>
    new ConflictError(
      "this is the last API token of any instance administrator; mint another one before invalidating this one",
    ),
};
