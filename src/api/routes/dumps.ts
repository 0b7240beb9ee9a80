import { z } from "@hono/zod-openapi";
import { MAX_DUMP_BYTES, uploadDump } from "../../domain/databases/dumps.js";
import { multipartField } from "../multipart.js";
import { OrgParams } from "../params.js";
import { type Route, route } from "../route.js";

export const dumpRoutes: Route[] = [
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/databases/dumps",
    summary: "Upload a SQL dump",
    description: `Stores a SQL dump (sqlite3's \`.dump\` format) sent as \`multipart/form-data\` in the field \`file\`, at most ${MAX_DUMP_BYTES} bytes, to seed a new database: create it with \`seed: {"type": "dump", "url": <dump_url>}\`. The dump is kept 24 hours, and deleted once a database is created from it.`,
    tags: ["Databases"],
    params: OrgParams,
    response: z.object({
      dump_url: z.string().openapi({
        description: "Where the dump is, for `seed.url`; only this server's dump URLs are accepted there.",
        example: "https://shoal.example/v1/organizations/acme/databases/dumps/8Jt2sI0xQ0S6o5nC2b1PrQ",
      }),
      expires_at: z.string().openapi({ description: "When the dump is deleted if no database used it." }),
    }),
    errors: {
      400: "Not multipart/form-data, no `file` field, an empty dump, or a dump larger than allowed.",
      429: "The organization has too many bytes of dumps waiting.",
    },
    handler: async ({ ctx, params, c }) => {
      const content = multipartField(c.req.raw.body, c.req.header("content-type"), "file");
      const dump = await uploadDump(ctx, params.organizationName, content);
      const origin = new URL(c.req.url).origin;
      const slug = encodeURIComponent(params.organizationName);
      return {
        dump_url: `${origin}/v1/organizations/${slug}/databases/dumps/${dump.id}`,
        expires_at: dump.expiresAt,
      };
    },
  }),
];
