import { z } from "@hono/zod-openapi";

/** A path segment, documented as a path parameter. */
export function pathParam(name: string, description: string, example: string) {
  return z
    .string()
    .min(1)
    .openapi({ param: { name, in: "path" }, description, example });
}

export const orgParam = pathParam(
  "organizationName",
  "Organization slug; for a personal organization, the username.",
  "acme",
);
export const groupParam = pathParam("groupName", "Group name.", "default");
export const databaseParam = pathParam("databaseName", "Database name.", "my-db");
export const locationParam = pathParam("location", "Location code.", "aws-eu-west-1");

export const OrgParams = z.object({ organizationName: orgParam });
export const GroupParams = z.object({ organizationName: orgParam, groupName: groupParam });
export const DatabaseParams = z.object({ organizationName: orgParam, databaseName: databaseParam });

/** An optional field that some clients send as `null` to mean "not given". */
export function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((v) => v ?? undefined);
}

/** `limit` and `cursor` of every list that can grow (the turso CLI pages databases with them). */
export const PageQuery = z.object({
  limit: optional(z.coerce.number().int().min(1).max(10_000)).openapi({
    description: "Items per page (1 to 10000). Without it, the whole list comes in one answer.",
    example: 100,
  }),
  cursor: optional(z.string()).openapi({
    description: "`pagination.next` of the previous page.",
  }),
});

export const PaginationWire = z
  .object({
    next: z.string().nullable().openapi({ description: "Cursor of the next page; null on the last page." }),
  })
  .openapi("Pagination");
