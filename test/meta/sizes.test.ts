import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
/** house-style.md: files short (never over 400 lines), functions under 80. */
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;
/** The code these rules hold for: the service, the CLI and the web console. */
const ROOTS = ["src", "console/src"];

function* sources(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (/\.(ts|tsx|js)$/.test(p)) yield p;
  }
}

const lineOf = (sf: ts.SourceFile, pos: number) => sf.getLineAndCharacterOfPosition(pos).line;

function nameOf(n: ts.Node): string {
  if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) && n.name) return n.name.getText();
  if (ts.isConstructorDeclaration(n)) return "constructor";
  const p = n.parent;
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p))) return p.name.getText();
  return "(anonymous)";
}

/**
 * Every function, method and arrow function longer than the limit, nested ones included. A table of
 * data is no function, so an object or array literal counts only through the functions inside it.
 */
function longFunctions(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const kind = file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n) && "body" in n && n.body) {
      const lines = lineOf(sf, n.getEnd()) - lineOf(sf, n.getStart()) + 1;
      if (lines > MAX_FUNCTION_LINES) {
        out.push(
          `${path.relative(ROOT, file)}:${lineOf(sf, n.getStart()) + 1} ${nameOf(n)} (${lines} lines)`,
        );
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe("sizes", () => {
  const all = ROOTS.flatMap((d) => [...sources(path.join(ROOT, d))]);

  it("finds the sources it checks", () => {
    expect(all.length).toBeGreaterThan(250);
  });

  it(`keeps every source file at ${MAX_FILE_LINES} lines or fewer`, () => {
    const long = all.filter((f) => readFileSync(f, "utf8").trimEnd().split("\n").length > MAX_FILE_LINES);
    expect(long.map((f) => path.relative(ROOT, f))).toEqual([]);
  });

  it(`keeps every function at ${MAX_FUNCTION_LINES} lines or fewer`, () => {
    expect(all.flatMap(longFunctions)).toEqual([]);
  });
});
