import { z } from "@hono/zod-openapi";
import { type Route, route } from "../route.js";

/** The oldest version there is: never newer than the caller's. */
const FLOOR = "v0.0.0";
const VERSION = /^v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/;

/**
 * The version to call "latest" for a turso CLI: its own. When the answer is newer, the CLI runs
 * Turso's installer (`brew upgrade turso` or `curl get.tur.so | sh`) after each command, and
 * `turso auth login` prints an update reminder whenever the two strings differ, so echoing the
 * caller's version keeps it quiet. Shoal doesn't ship the CLI and can't know a newer one.
 */
function callerVersion(header: string | undefined, userAgent: string | undefined): string {
  if (header && header.length <= 64 && VERSION.test(header)) return header;
  const m = /^turso-cli\/(\S+)/.exec(userAgent ?? "");
  if (m?.[1] && m[1].length <= 64 && VERSION.test(m[1])) return `v${m[1].replace(/^v/, "")}`;
  return FLOOR;
}

export const releaseRoutes: Route[] = [
  route({
    method: "get",
    path: "/releases/latest",
    summary: "Latest turso CLI release",
    description:
      "The turso CLI's update check. Shoal answers the caller's own version (from its `TursoCliVersion` header or User-Agent), so the CLI never tries to update itself against a Shoal server; without one, `v0.0.0`. No token needed.",
    tags: ["Compatibility"],
    auth: false,
    response: z.object({ latest: z.string().openapi({ example: "v1.0.15" }) }),
    handler: ({ c }) => ({
      latest: callerVersion(c.req.header("tursocliversion"), c.req.header("user-agent")),
    }),
  }),
];
