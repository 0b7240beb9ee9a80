import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const bin = (name: string) => path.join(ROOT, "node_modules", ".bin", name);

async function outcome(cmd: string, args: string[]): Promise<{ code: number; output: string }> {
  try {
    const r = await run(cmd, args, { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, output: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? 1, output: `${err.stdout ?? ""}${err.stderr ?? ""}` };
  }
}

describe("static checks", () => {
  it("type-checks in strict mode", { timeout: 120_000 }, async () => {
    const r = await outcome(bin("tsc"), ["-p", "tsconfig.json", "--noEmit"]);
    expect(r.output).toBe("");
    expect(r.code).toBe(0);
  });

  it("passes the linter and formatter", { timeout: 60_000 }, async () => {
    const r = await outcome(bin("biome"), ["check", "."]);
    expect(r.code, r.output).toBe(0);
  });
});
