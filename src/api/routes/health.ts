import { z } from "@hono/zod-openapi";
import { type Route, route } from "../route.js";

export const healthRoutes: Route[] = [
  route({
    method: "get",
    path: "/health",
    summary: "Readiness probe",
    description: "Answers 200 once the service has opened its store and is serving requests.",
    tags: ["Service"],
    auth: false,
    response: z.object({ status: z.literal("ok"), version: z.string() }),
    handler: ({ c }) => ({ status: "ok" as const, version: c.get("deps").version }),
  }),
];
