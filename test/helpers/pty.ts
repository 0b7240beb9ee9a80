import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";

/**
 * A command on a real pseudo-terminal, through util-linux's script(1) (part of every Debian
 * install): the command sees a terminal on its standard input and output, as when a person runs
 * it, while the test types into script's standard input and reads what the terminal shows.
 */
export class PtySession {
  private screen = "";
  private readonly proc: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number>;

  constructor(commandLine: string, env: Record<string, string>) {
    this.proc = spawn("script", ["-q", "-e", "-c", commandLine, "/dev/null"], { env });
    this.proc.stdout.on("data", (d: Buffer) => (this.screen += d.toString()));
    this.proc.stderr.on("data", (d: Buffer) => (this.screen += d.toString()));
    this.exited = new Promise((resolve) => this.proc.once("close", (code) => resolve(code ?? -1)));
  }

  /** Everything shown so far, without the terminal's control sequences. */
  get text(): string {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences
    return this.screen.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r/g, "");
  }

  type(keys: string): void {
    this.proc.stdin.write(keys);
  }

  /** Waits until the screen shows `pattern` after position `from`; answers where it ends. */
  async waitFor(pattern: string | RegExp, from = 0, timeoutMs = 15_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rest = this.text.slice(from);
      if (typeof pattern === "string") {
        const m = rest.indexOf(pattern);
        if (m !== -1) return from + m + pattern.length;
      } else {
        const m = pattern.exec(rest);
        if (m) return from + m.index + m[0].length;
      }
      if (Date.now() > deadline) throw new Error(`the terminal never showed ${pattern}:\n${this.text}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  kill(): void {
    this.proc.kill("SIGKILL");
  }
}
