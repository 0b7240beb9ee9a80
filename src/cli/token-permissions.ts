import type { Command } from "commander";
import { CliError } from "./errors.js";

/** A rule of Turso's `fine_grained_permissions`: tables (null: every table) and their actions. */
export interface TokenRule {
  t: string[] | null;
  a: string[];
}

/**
 * `-p <table|all>:<action>,...` as the turso CLI reads it: `all` is every table, the actions are
 * checked by the server (which names the valid ones when one isn't). Repeatable; rules add up.
 */
export function parsePermission(text: string): TokenRule {
  const colon = text.indexOf(":");
  const table = text.slice(0, colon).trim();
  const actions = text
    .slice(colon + 1)
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
  if (colon <= 0 || table === "" || actions.length === 0)
    throw new CliError(
      `invalid permission ${JSON.stringify(text)}`,
      "write <table|all>:<action>,<action>, such as -p all:data_read -p comments:data_add,data_update",
    );
  return { t: table === "all" ? null : [table], a: actions };
}

/** Adds the repeatable `-p, --permissions` option of the token commands. */
export function permissionsOption(command: Command): Command {
  return command.option(
    "-p, --permissions <table:actions>",
    "limit the token to tables and actions, such as all:data_read or comments:data_add,data_update (repeatable; actions: data_read, data_add, data_update, data_delete, schema_add, schema_update, schema_delete)",
    (value: string, previous: TokenRule[] = []) => [...previous, parsePermission(value)],
  );
}

/** The request body carrying the rules, as the API takes them; undefined when none were given. */
export function permissionsBody(
  rules: TokenRule[] | undefined,
): { fine_grained_permissions: TokenRule[] } | undefined {
  return rules && rules.length > 0 ? { fine_grained_permissions: rules } : undefined;
}

/** The options every token command takes, as the turso CLI's do: `--read-only`, `--expiration`, `-p`. */
export function tokenOptions(command: Command): Command {
  return permissionsOption(
    command
      .option("--read-only", "a token that reads but cannot write")
      .option("--expiration <duration>", "`never` (default) or a duration such as 2w, 1d, 12h, 30m"),
  );
}

/** What `tokenOptions` parse into. */
export interface TokenOptions {
  readOnly?: boolean;
  expiration?: string;
  permissions?: TokenRule[];
}

/** What those options ask of `POST .../auth/tokens`: its query, and its body when rules were given. */
export function tokenRequest(opts: TokenOptions) {
  const body = permissionsBody(opts.permissions);
  return {
    query: { expiration: opts.expiration, authorization: opts.readOnly ? "read-only" : undefined },
    ...(body ? { body } : {}),
  };
}
