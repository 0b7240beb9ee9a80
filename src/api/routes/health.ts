import { z } from "@hono/zod-openapi";
import { checkReadiness } from "../../domain/cluster/readiness.js";
import { type Route, route } from "../route.js";

export const healthRoutes: Route[] = [
  route({
    method: "get",
    path: "/health",
    summary: "Liveness probe",
    description:
      "Answers 200 while the process serves requests, whatever the state of its store: a failing answer means the process should be restarted. `/health/ready` says whether it can do its work.",
    tags: ["Service"],
    auth: false,
    response: z.object({ status: z.literal("ok"), version: z.string() }),
    handler: ({ c }) => ({ status: "ok" as const, version: c.get("deps").version }),
  }),
  route({
    method: "get",
    path: "/health/ready",
    summary: "Readiness probe",
    description:
      "Answers 200 when the control-plane store (the embedded SQLite file, or PostgreSQL) and the data folder can be used, and 503 naming each that can't (with an error code) while they can't. It checks them at every call, so it turns back to 200 by itself once they recover; route traffic by it, and leave restarts to `/health`.",
    tags: ["Service"],
    auth: false,
    response: z.object({ status: z.literal("ready"), version: z.string() }),
    errors: {
      503: 'Not ready: `{"error": "not ready: control-plane store can\'t be used (ECONNREFUSED)"}`.',
    },
    handler: async ({ c }) => {
      const deps = c.get("deps");
      await checkReadiness(deps);
      return { status: "ready" as const, version: deps.version };
    },
  }),
];
