import { z } from "@hono/zod-openapi";
import { type Route, route } from "../route.js";

export const locationRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/locations",
    summary: "List locations",
    description:
      "The locations this instance offers (set by `SHOAL_LOCATIONS`), as a map of code to description. A token is optional.",
    tags: ["Locations"],
    auth: false,
    response: z.object({
      locations: z
        .record(z.string(), z.string())
        .openapi({ example: { "aws-us-east-1": "AWS US East (Virginia)" } }),
    }),
    handler: ({ c }) => ({
      locations: Object.fromEntries(c.get("deps").catalogue.all.map((l) => [l.code, l.description])),
    }),
  }),
];
