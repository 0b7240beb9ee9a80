import { createInterface } from "node:readline";
import { CliError } from "./errors.js";
import { type Io, write } from "./io.js";

/** Reads one line from a pipe (for `echo $TOKEN | shoal login <url>`). */
async function readLine(io: Io): Promise<string> {
  const rl = createInterface({ input: io.stdin, terminal: false });
  try {
    for await (const line of rl) return line;
    return "";
  } finally {
    rl.close();
  }
}

/** Asks for a secret on the terminal without echoing it, or reads it from a pipe. */
export async function readSecret(io: Io, question: string): Promise<string> {
  const stdin = io.stdin;
  if (!stdin.isTTY || !stdin.setRawMode) return (await readLine(io)).trim();
  await write(io.stderr, question);
  stdin.setRawMode(true);
  stdin.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let text = "";
      const onData = (chunk: Buffer) => {
        for (const ch of chunk.toString("utf8")) {
          if (ch === "\r" || ch === "\n") {
            stdin.off("data", onData);
            resolve(text.trim());
            return;
          }
          if (ch === "\u0003") {
            stdin.off("data", onData);
            reject(new CliError("cancelled"));
            return;
          }
          if (ch === "\u007f" || ch === "\b") text = text.slice(0, -1);
          else text += ch;
        }
      };
      stdin.on("data", onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    await write(io.stderr, "\n");
  }
}
