import { z } from "@hono/zod-openapi";
import {
  createPlan,
  deletePlan,
  getSubscription,
  listAllPlans,
  listPlans,
  setOrganizationPlan,
  updatePlan,
} from "../../domain/plans/plans.js";
import type { Plan, Quotas, Subscription } from "../../domain/plans/views.js";
import { OrgParams, optional, pathParam } from "../params.js";
import { type Route, route } from "../route.js";

const tags = ["Plans"];
const adminTags = ["Instance administration"];

/** Turso's plan shape: camelCase quotas, null for unlimited. */
const OrganizationPlanWire = z
  .object({
    name: z.string().openapi({ example: "scaler" }),
    price: z.string().openapi({ description: "Monthly price.", example: "29" }),
    prices: z.array(z.object({ value: z.string(), timeline: z.string().openapi({ example: "monthly" }) })),
    quotas: z.object({
      rowsRead: z.number().nullable(),
      rowsWritten: z.number().nullable(),
      databases: z.number().nullable(),
      locations: z.number().nullable(),
      storage: z.number().nullable().openapi({ description: "Bytes." }),
      groups: z.number().nullable(),
      bytesSynced: z.number().nullable(),
    }),
  })
  .openapi("OrganizationPlan", { description: "A plan and its monthly quotas; null is unlimited." });

const organizationPlanWire = (p: Plan): z.infer<typeof OrganizationPlanWire> => ({
  name: p.name,
  price: p.price,
  prices: [{ value: p.price, timeline: "monthly" }],
  quotas: {
    rowsRead: p.quotas.rowsRead,
    rowsWritten: p.quotas.rowsWritten,
    databases: p.quotas.databases,
    locations: p.quotas.locations,
    storage: p.quotas.storageBytes,
    groups: p.quotas.groups,
    bytesSynced: p.quotas.bytesSynced,
  },
});

const quota = () => z.number().int().min(0).nullable().optional();
/** Quotas as the administrator sends them: absent = unchanged (unlimited on create), null = unlimited. */
const QuotasInput = z
  .object({
    rows_read: quota().openapi({ description: "Rows read per calendar month.", example: 1_000_000 }),
    rows_written: quota().openapi({ description: "Rows written per calendar month.", example: 10_000 }),
    storage_bytes: quota().openapi({ description: "Bytes of storage.", example: 1_073_741_824 }),
    databases: quota(),
    groups: quota(),
    locations: quota(),
    bytes_synced: quota(),
  })
  .optional();
const quotasOf = (q: z.infer<typeof QuotasInput>): Partial<Quotas> | undefined =>
  q && {
    rowsRead: q.rows_read,
    rowsWritten: q.rows_written,
    storageBytes: q.storage_bytes,
    databases: q.databases,
    groups: q.groups,
    locations: q.locations,
    bytesSynced: q.bytes_synced,
  };
const price = optional(z.union([z.string(), z.number()]))
  .transform((v) => (v === undefined ? undefined : String(v)))
  .openapi({ description: "Monthly price, a decimal amount (no payments are taken).", example: "29" });

const AdminPlanWire = z
  .object({
    name: z.string(),
    price: z.string(),
    quotas: z.object({
      rows_read: z.number().nullable(),
      rows_written: z.number().nullable(),
      storage_bytes: z.number().nullable(),
      databases: z.number().nullable(),
      groups: z.number().nullable(),
      locations: z.number().nullable(),
      bytes_synced: z.number().nullable(),
    }),
    organizations: z.number().optional().openapi({ description: "Organizations on the plan." }),
    created_at: z.string(),
  })
  .openapi("AdminPlan");

const adminPlanWire = (p: Plan & { organizations?: number }): z.infer<typeof AdminPlanWire> => ({
  name: p.name,
  price: p.price,
  quotas: {
    rows_read: p.quotas.rowsRead,
    rows_written: p.quotas.rowsWritten,
    storage_bytes: p.quotas.storageBytes,
    databases: p.quotas.databases,
    groups: p.quotas.groups,
    locations: p.quotas.locations,
    bytes_synced: p.quotas.bytesSynced,
  },
  ...(p.organizations !== undefined ? { organizations: p.organizations } : {}),
  created_at: p.createdAt,
});

const SubscriptionWire = z
  .object({
    subscription: z.object({
      name: z.string().openapi({ description: "The plan's name.", example: "scaler" }),
      overages: z.boolean(),
      plan: z.string().openapi({ description: "The plan's name again.", example: "scaler" }),
      timeline: z.string().openapi({ example: "monthly" }),
    }),
  })
  .openapi("Subscription");
const subscriptionWire = (s: Subscription) => ({
  subscription: { name: s.plan, overages: s.overages, plan: s.plan, timeline: s.timeline },
});

const PlanParams = z.object({ plan: pathParam("plan", "Plan name.", "scaler") });
const PlanChoice = z.object({ plan: z.string().min(1).openapi({ example: "scaler" }) });
const adminOnly = { 403: "Only the instance administrator manages plans." };

export const planRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/plans",
    summary: "List plans",
    description:
      "The plans the instance administrator has defined, with their monthly quotas (null = unlimited). Also answers at `/v1/plans` (the turso CLI's `plan` commands).",
    tags,
    params: OrgParams,
    response: z.object({ plans: z.array(OrganizationPlanWire) }),
    errors: { 403: "Not a member." },
    handler: async ({ ctx, params }) => ({
      plans: (await listPlans(ctx, params.organizationName)).map(organizationPlanWire),
    }),
  }),
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/subscription",
    summary: "Retrieve the subscription",
    description: "The organization's plan and whether overages are on. Plans are monthly.",
    tags,
    params: OrgParams,
    response: SubscriptionWire,
    errors: { 403: "Not a member." },
    handler: async ({ ctx, params }) => subscriptionWire(await getSubscription(ctx, params.organizationName)),
  }),
  route({
    method: "post",
    path: "/v1/organizations/{organizationName}/subscription",
    summary: "Change the plan",
    description:
      "Instance administrators only (what the turso CLI's `plan select` calls); anyone else gets a 403 saying so. The organization is judged against the new plan at once: a larger plan lifts a quota block in the same request. `timeline` and `overages` in the body are ignored (plans are monthly; overages are changed with `PATCH /v1/organizations/{org}`).",
    tags,
    params: OrgParams,
    body: PlanChoice,
    response: SubscriptionWire,
    errors: {
      400: "Unknown plan.",
      403: "Not an instance administrator.",
      404: "organization not found",
    },
    handler: async ({ ctx, params, body }) =>
      subscriptionWire(await setOrganizationPlan(ctx, params.organizationName, body.plan)),
  }),
  route({
    method: "get",
    path: "/v1/admin/plans",
    summary: "List plans (administration)",
    description: "Every plan with its quotas and how many organizations are on it.",
    tags: adminTags,
    response: z.object({ plans: z.array(AdminPlanWire) }),
    errors: adminOnly,
    handler: async ({ ctx }) => ({ plans: (await listAllPlans(ctx)).map(adminPlanWire) }),
  }),
  route({
    method: "post",
    path: "/v1/admin/plans",
    summary: "Create a plan",
    description:
      "Instance administrators only (Turso has no equivalent). Quotas left out are unlimited. Rows read and written and storage are monthly usage quotas (see overages); databases, groups and locations cap what an organization may create.",
    tags: adminTags,
    body: z.object({
      name: z.string().openapi({ example: "scaler" }),
      price,
      quotas: QuotasInput,
    }),
    response: z.object({ plan: AdminPlanWire }),
    errors: { 400: "Invalid name, price or quota.", ...adminOnly, 409: "plan <name> already exists" },
    idempotent: true,
    handler: async ({ ctx, body }) => ({
      plan: adminPlanWire(
        await createPlan(ctx, { name: body.name, price: body.price, quotas: quotasOf(body.quotas) }),
      ),
    }),
  }),
  route({
    method: "patch",
    path: "/v1/admin/plans/{plan}",
    summary: "Update a plan",
    description:
      "Changes the price or quotas (absent = unchanged, null = unlimited). Every organization on the plan is judged again at once: a raised quota lifts a block in the same request.",
    tags: adminTags,
    params: PlanParams,
    body: z.object({ price, quotas: QuotasInput }),
    response: z.object({ plan: AdminPlanWire }),
    errors: { 400: "Invalid price or quota.", ...adminOnly, 404: "plan <name> not found" },
    handler: async ({ ctx, params, body }) => ({
      plan: adminPlanWire(
        await updatePlan(ctx, params.plan, { price: body.price, quotas: quotasOf(body.quotas) }),
      ),
    }),
  }),
  route({
    method: "delete",
    path: "/v1/admin/plans/{plan}",
    summary: "Delete a plan",
    description:
      "Refused while any organization is on the plan, and for `self-hosted`, the plan of new organizations.",
    tags: adminTags,
    params: PlanParams,
    response: z.object({ plan: z.string() }),
    errors: { ...adminOnly, 404: "plan <name> not found", 409: "The plan is in use or is the default." },
    handler: async ({ ctx, params }) => {
      await deletePlan(ctx, params.plan);
      return { plan: params.plan };
    },
  }),
  route({
    method: "post",
    path: "/v1/admin/organizations/{organizationName}/plan",
    summary: "Set an organization's plan",
    description: "The same as `POST /v1/organizations/{org}/subscription`, under the administration routes.",
    tags: adminTags,
    params: OrgParams,
    body: PlanChoice,
    response: SubscriptionWire,
    errors: { 400: "Unknown plan.", ...adminOnly, 404: "organization not found" },
    handler: async ({ ctx, params, body }) =>
      subscriptionWire(await setOrganizationPlan(ctx, params.organizationName, body.plan)),
  }),
];
