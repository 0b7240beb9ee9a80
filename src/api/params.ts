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

export const orgIdParam = pathParam(
  "organizationId",
  "The organization's id: `id` in `GET /v1/organizations/{organizationName}` or `GET /v2/organizations`.",
  "0eb771dd-6906-41ee-8553-eaa7715aeaf2",
);
export const databaseIdParam = pathParam(
  "databaseId",
  "The database's id (`DbId`).",
  "3c90c3cc-0d44-4b50-8888-8dd25736052a",
);
export const groupIdParam = pathParam(
  "groupId",
  "The group's id (`uuid`).",
  "0a28102d-6906-41ee-8553-eaa7715aeaf2",
);
export const OrgIdParams = z.object({ organizationId: orgIdParam });
export const DatabaseIdParams = z.object({ organizationId: orgIdParam, databaseId: databaseIdParam });
export const GroupIdParams = z.object({ organizationId: orgIdParam, groupId: groupIdParam });

/**
 * v3's paging: `limit` 1 to 1000 (100 when not given), and `pagination.next` absent on the last
 * page. The turso CLI takes any `next` that is present, even an empty one, as another page to ask for.
 */
export const V3PageQuery = z.object({
  limit: optional(z.coerce.number().int().min(1).max(1000)).openapi({
    description: "Items per page, 1 to 1000 (default 100).",
    example: 100,
  }),
  cursor: optional(z.string()).openapi({ description: "`pagination.next` of the previous page." }),
});
export const V3_DEFAULT_LIMIT = 100;

export const V3PaginationWire = z
  .object({
    next: z.string().optional().openapi({ description: "Cursor of the next page; absent on the last page." }),
  })
  .openapi("PaginationV3");

export function v3Pagination(next: string | null): z.infer<typeof V3PaginationWire> {
  return next === null ? {} : { next };
}
