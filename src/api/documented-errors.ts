/**
 * Error texts named in the OpenAPI document's route descriptions, kept once here so the document
 * and the domain's errors (src/domain/*\/errors.ts, which make the real answers) can't drift apart
 * route by route. `<name>` stands for the name in the request.
 */
export const DATABASE_NOT_FOUND = {
  404: "could not find database with name <name>: record not found",
} as const;
