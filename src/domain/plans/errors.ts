import {
  ConflictError,
  ForbiddenError,
  InvalidError,
  NotFoundError,
  QuotaExceededError,
} from "../../errors.js";

/**
 * Every error message the plans area answers with. The texts are the API's contract (Turso's wording
 * where Turso has one; clients and tests match on them): change one only on purpose.
 */
export const planErrors = {
  planInUse: (name: string, organizations: number) =>
    new ConflictError(
      `plan ${name} is used by ${organizations} organization${organizations === 1 ? "" : "s"}; move them to another plan first`,
    ),
  groupTokenCannotReadUsage: () =>
    new ForbiddenError("a group-scoped API token cannot read the organization's usage or invoices"),
  /** `held`: what the organization has, counted up to one past the cap. */
  quotaUsedUp: (org: { plan: string; slug: string }, cap: number, noun: string, held: number) =>
    new QuotaExceededError(
      `the ${org.plan} plan of organization ${org.slug} allows ${cap} ${noun} and it has ${held > cap ? `more than ${cap}` : held}; ask the instance administrator for a larger plan, or turn overages on`,
    ),
  invalidPrice: (price: string) =>
    new InvalidError(`invalid price "${price}": a decimal amount such as 0, 29 or 4.99`),
  invalidQuota: (column: string) =>
    new InvalidError(`invalid quota ${column}: a whole number from 0, or null for unlimited`),
  planNotFound: (name: string) => new NotFoundError(`plan ${name} not found`),
  invalidPlanName: (name: string) =>
    new InvalidError(`invalid plan name "${name}": 1 to 64 lowercase letters, digits or inner dashes`),
  planExists: (name: string) => new ConflictError(`plan ${name} already exists`),
  defaultPlanKept: (name: string) =>
    new ConflictError(`plan ${name} is the plan of new organizations and cannot be deleted`),
  unknownPlan: (name: string) => new InvalidError(`unknown plan: ${name}`),
};
