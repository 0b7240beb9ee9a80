import { z } from "@hono/zod-openapi";
import { listLocationsByPlatform } from "../../domain/groups/locations.js";
import { OrgParams, pathParam } from "../params.js";
import { type Route, route } from "../route.js";

const tags = ["Locations"];
const LocationWire = z
  .object({
    code: z.string().openapi({ example: "aws-us-east-2" }),
    description: z.string().openapi({ example: "AWS US East (Ohio)" }),
  })
  .openapi("Location");

export const locationRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/locations",
    summary: "List locations",
    description:
      "The locations this instance offers (set by `SHOAL_LOCATIONS`), as a map of code to description. A token is optional.",
    tags,
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
  route({
    method: "get",
    path: "/v1/locations/{location}",
    summary: "Retrieve a location",
    description:
      "One location and its alternatives in `closest` (what `turso db replicate` offers when a location fails). Shoal knows no distances between the operator's locations: `closest` lists every other location, those of the same platform and with the longest shared code prefix first. A token is optional.",
    tags,
    auth: false,
    params: z.object({ location: pathParam("location", "Location code.", "aws-us-east-1") }),
    response: z.object({ location: LocationWire.extend({ closest: z.array(LocationWire) }) }),
    errors: { 404: "location <code> not found" },
    handler: ({ c, params }) => {
      const { location, closest } = c.get("deps").catalogue.describe(params.location);
      return { location: { ...location, closest } };
    },
  }),
  route({
    method: "get",
    path: "/v2/organizations/{organizationName}/locations",
    summary: "List locations by platform",
    description:
      "The locations this instance offers, grouped by platform as the turso CLI reads them: `aws` for `aws-*` codes, `local` for any other.",
    tags,
    params: OrgParams,
    response: z.object({
      locations: z.record(z.string(), z.record(z.string(), z.string())).openapi({
        example: { aws: { "aws-us-east-1": "AWS US East (Virginia)" } },
      }),
    }),
    handler: async ({ ctx, params }) => ({
      locations: await listLocationsByPlatform(ctx, params.organizationName),
    }),
  }),
];
