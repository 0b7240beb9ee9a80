/**
 * How a request names an organization, group or database: by its name (slug for an organization),
 * as the v1 API does, or by its id, as the v3 API does. Resolving either happens in the same
 * transaction as the operation, so an id never turns into a name that a concurrent rename or
 * re-create could make point at something else.
 */
export type Ref = string | { id: string };

/** The reference as the caller wrote it, for messages. */
export function refText(ref: Ref): string {
  return typeof ref === "string" ? ref : ref.id;
}
