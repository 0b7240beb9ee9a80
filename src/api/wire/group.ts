import { z } from "@hono/zod-openapi";
import type { Group } from "../../domain/groups/views.js";

export const GroupWire = z
  .object({
    name: z.string().openapi({ example: "default" }),
    uuid: z.string().openapi({ example: "0a28102d-6906-11ee-8553-eaa7715aeaf2" }),
    version: z.string().openapi({ description: "Shoal version serving the group." }),
    primary: z
      .string()
      .openapi({ description: "Location of every database's primary instance.", example: "aws-us-east-1" }),
    locations: z
      .array(z.string())
      .openapi({ description: "Every location of the group, the primary first." }),
    archived: z.boolean(),
    delete_protection: z.boolean(),
    status: z.object({
      locations: z.array(z.object({ name: z.string(), status: z.enum(["up", "down"]) })),
    }),
  })
  .openapi("Group");

export function groupWire(g: Group, version: string): z.infer<typeof GroupWire> {
  return {
    name: g.name,
    uuid: g.id,
    version,
    primary: g.primary,
    locations: g.locations,
    archived: g.archived,
    delete_protection: g.deleteProtection,
    status: { locations: g.locations.map((name) => ({ name, status: g.status[name] ?? "up" })) },
  };
}
