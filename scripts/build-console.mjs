// Bundles the web console (console/src) into static files: dist/console/index.html and
// dist/console/assets/<name>-<hash>.{js,css}. Asset names carry a content hash so Shoal can serve
// them with a year-long cache; index.html names them (with subresource integrity) and is never
// cached. Run by `npm run build`; tests call buildConsole() with a folder of their own.
// Usage: node scripts/build-console.mjs [out dir]
import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const DEFAULT_OUT = path.join(ROOT, "dist", "console");

/** Builds the console into `outDir` (replacing what was there) and answers the asset file names. */
export async function buildConsole(outDir = DEFAULT_OUT) {
  await rm(outDir, { recursive: true, force: true });
  const assets = path.join(outDir, "assets");
  await mkdir(assets, { recursive: true });
  const result = await build({
    entryPoints: [path.join(ROOT, "console", "src", "main.tsx")],
    bundle: true,
    minify: true,
    format: "esm",
    target: ["es2020", "chrome100", "firefox100", "safari15"],
    jsx: "automatic",
    jsxImportSource: "preact",
    outdir: assets,
    entryNames: "[name]-[hash]",
    assetNames: "[name]-[hash]",
    metafile: true,
    legalComments: "eof",
    logLevel: "warning",
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => path.resolve(p));
  const js = outputs.find((p) => p.endsWith(".js"));
  const css = outputs.find((p) => p.endsWith(".css"));
  if (!js || !css) throw new Error("the console build made no script or style sheet");
  /** @param {string} file */
  const tag = async (file) => ({
    href: `/console/assets/${path.basename(file)}`,
    integrity: `sha384-${createHash("sha384")
      .update(await readFile(file))
      .digest("base64")}`,
  });
  const [script, style] = await Promise.all([tag(js), tag(css)]);
  await writeFile(path.join(outDir, "index.html"), indexHtml(script, style));
  return { script: script.href, style: style.href };
}

// Nothing inline: the page's Content-Security-Policy allows scripts and styles from 'self' only.
/**
 * @param {{ href: string, integrity: string }} script
 * @param {{ href: string, integrity: string }} style
 */
const indexHtml = (script, style) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Shoal console</title>
<link rel="stylesheet" href="${style.href}" integrity="${style.integrity}">
<script type="module" src="${script.href}" integrity="${script.integrity}"></script>
</head>
<body>
<div id="app"><noscript>The Shoal console needs JavaScript. The API reference is at <a href="/reference">/reference</a>.</noscript></div>
</body>
</html>
`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const out = process.argv[2] ? path.resolve(process.argv[2]) : DEFAULT_OUT;
  const { script, style } = await buildConsole(out);
  console.log(`console built in ${path.relative(process.cwd(), out) || "."}: ${script}, ${style}`);
}
