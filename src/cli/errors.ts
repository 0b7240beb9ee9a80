/**
 * A failure the user can act on: `message` says what went wrong, `hint` what to do about it. The
 * command prints both on stderr and exits with `exitCode`.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** The text of an unknown thrown value. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The server's messages name the turso CLI's commands (what most API callers have); printed by
 * this CLI they name its own. Only command names are changed, never the rest of a message.
 */
const TURSO_COMMANDS: ReadonlyArray<[RegExp, string]> = [
  [/\bturso auth api-tokens mint\b/g, "shoal tokens create"],
  [/\bturso auth api-tokens (list|revoke)\b/g, "shoal tokens $1"],
  [/\bturso auth login\b/g, "shoal login"],
  [/\bturso (db|group|org) /g, "shoal $1 "],
];

export function inShoalTerms(text: string): string {
  let out = text;
  for (const [pattern, shoal] of TURSO_COMMANDS) out = out.replace(pattern, shoal);
  return out;
}
