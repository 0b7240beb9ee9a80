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
