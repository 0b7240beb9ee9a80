import type { SqlArgs, SqlValue } from "./sql-value.js";
import { SqlInputError } from "./sqlite-errors.js";

/** `?` (null) and `?NNN` parameters take positional arguments; `:x`, `@x` and `$x` named ones. */
function isPositional(name: string | null): boolean {
  return name === null || name.charCodeAt(0) === 63; // "?"
}

/**
 * Checks arguments against the statement's parameters and shapes them for the driver, with sqld's
 * rules: `?` and `?NNN` take positional arguments, `:x`/`@x`/`$x` take the named argument of that
 * exact name or else `x`; too many or missing arguments are refused, at the first parameter (in
 * SQLite's order) that has no value. (The driver itself would pad missing ones with NULL and
 * ignore extra ones, hiding client bugs.)
 */
export function bindArguments(
  p: { params: Array<string | null> },
  args: SqlArgs,
): SqlValue[] | Record<string, SqlValue> {
  const invalid = (detail: string) =>
    new SqlInputError("ARGS_INVALID", `Arguments do not match SQL parameters: ${detail}`);
  const positional = Array.isArray(args) ? (args as readonly SqlValue[]) : undefined;
  const named = positional ? undefined : (args as Readonly<Record<string, SqlValue>>);
  const supplied = positional ? positional.length : Object.keys(named!).length;
  if (supplied > p.params.length) {
    throw invalid(`too many parameters, expected ${p.params.length} found ${supplied}`);
  }
  const out: Record<string, SqlValue> = {};
  p.params.forEach((name, i) => {
    if (isPositional(name)) {
      const at = name === null ? i : Number(name.slice(1)) - 1;
      if (positional?.[at] === undefined) throw invalid(`value for parameter ${name ?? i + 1} not found`);
      return;
    }
    const value = named && (name! in named ? named[name!] : named[name!.slice(1)]);
    if (value === undefined) throw invalid(`value for parameter ${name} not found`);
    // The driver matches an unprefixed key against :x, @x and $x alike.
    out[name!.slice(1)] = value;
  });
  // Every parameter found its value, so they are all positional or all named.
  return positional ? [...positional] : out;
}
