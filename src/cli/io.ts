import type { Readable, Writable } from "node:stream";

/** Environment variables, as the process got them (only cli/main.ts reads them from the process). */
export type Env = Readonly<Record<string, string | undefined>>;

export type Output = Writable & { isTTY?: boolean; columns?: number };
export type Input = Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };

/** Everything a command touches outside itself, so that it runs the same under test. */
export interface Io {
  env: Env;
  stdin: Input;
  stdout: Output;
  stderr: Output;
}

/** Writes text and resolves once it is handed to the stream (so a following exit loses nothing). */
export function write(out: Output, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    out.write(text, (e) => (e ? reject(e) : resolve()));
  });
}
