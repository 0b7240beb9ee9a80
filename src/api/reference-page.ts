/**
 * The API reference as one HTML page, rendered on the server from the OpenAPI document: no
 * JavaScript and nothing fetched from a CDN, so it works on an air-gapped machine and can't drift
 * from the routes (the document is generated from the same zod schemas the handlers use).
 */

type Json = Record<string, unknown>;
type Schema = Json & { $ref?: string };

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
const MAX_DEPTH = 6;

const esc = (s: unknown) =>
  String(s ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );

/** Inline code spans and paragraphs of the descriptions (they use a small part of Markdown). */
function prose(text: unknown): string {
  if (!text) return "";
  return String(text)
    .split(/\n{2,}/)
    .map((p) => `<p>${esc(p).replace(/`([^`]+)`/g, "<code>$1</code>")}</p>`)
    .join("");
}

interface Operation {
  method: string;
  path: string;
  op: Json;
}

function operationsByTag(doc: Json): Map<string, Operation[]> {
  const byTag = new Map<string, Operation[]>();
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const tag = ((op.tags as string[] | undefined) ?? ["Other"])[0] ?? "Other";
      const list = byTag.get(tag) ?? [];
      list.push({ method, path, op });
      byTag.set(tag, list);
    }
  }
  return byTag;
}

const anchor = (o: Operation) => `${o.method}-${o.path.replace(/[^a-zA-Z0-9]+/g, "-")}`;

class SchemaRenderer {
  constructor(private readonly components: Record<string, Schema>) {}

  private resolve(s: Schema): { schema: Schema; name?: string } {
    if (!s.$ref) return { schema: s };
    const name = s.$ref.split("/").pop() ?? "";
    return { schema: this.components[name] ?? {}, name };
  }

  /** A one-line type: `string`, `array of Group`, `"a" | "b"`. */
  typeOf(raw: Schema): string {
    const { schema: s, name } = this.resolve(raw);
    if (name) return name;
    if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
    for (const key of ["anyOf", "oneOf"]) {
      const parts = s[key] as Schema[] | undefined;
      if (parts) return parts.map((p) => this.typeOf(p)).join(" | ");
    }
    const t = Array.isArray(s.type) ? s.type.join(" | ") : (s.type as string | undefined);
    if (t === "array") return `array of ${this.typeOf((s.items as Schema) ?? {})}`;
    if (t === "object" && s.additionalProperties && !s.properties) return "object (map)";
    return t ?? "any";
  }

  /** The fields of an object schema as a nested list. */
  fields(raw: Schema, depth = 0, seen: ReadonlySet<string> = new Set()): string {
    const { schema: s, name } = this.resolve(raw);
    if (name && seen.has(name)) return "";
    const seenHere = name ? new Set([...seen, name]) : seen;
    const inner = s.type === "array" ? this.resolve((s.items as Schema) ?? {}).schema : s;
    const props = inner.properties as Record<string, Schema> | undefined;
    if (!props || depth > MAX_DEPTH) return "";
    const required = new Set((inner.required as string[] | undefined) ?? []);
    const rows = Object.entries(props).map(([key, p]) => {
      const { schema: resolved } = this.resolve(p);
      const note = prose(resolved.description ?? p.description);
      const ex = resolved.example ?? p.example;
      const example =
        ex === undefined ? "" : ` <span class="ex">e.g. <code>${esc(JSON.stringify(ex))}</code></span>`;
      const opt = required.has(key) ? "" : ' <span class="opt">optional</span>';
      const nested = this.fields(p, depth + 1, seenHere);
      return `<li><code>${esc(key)}</code> <span class="type">${esc(this.typeOf(p))}</span>${opt}${example}${note}${nested}</li>`;
    });
    return `<ul class="fields">${rows.join("")}</ul>`;
  }
}

function parameters(op: Json): string {
  const params = (op.parameters as Json[] | undefined) ?? [];
  if (params.length === 0) return "";
  const rows = params.map((p) => {
    const schema = (p.schema as Json | undefined) ?? {};
    return `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? "yes" : "no"}</td><td>${prose(p.description ?? schema.description)}</td></tr>`;
  });
  return `<h4>Parameters</h4><table><tr><th>Name</th><th>In</th><th>Required</th><th>Meaning</th></tr>${rows.join("")}</table>`;
}

function jsonSchemaOf(content: unknown): Schema | undefined {
  return ((content as Json | undefined)?.["application/json"] as Json | undefined)?.schema as
    | Schema
    | undefined;
}

function operation(o: Operation, r: SchemaRenderer): string {
  const { op } = o;
  const body = jsonSchemaOf((op.requestBody as Json | undefined)?.content);
  const responses = Object.entries((op.responses ?? {}) as Record<string, Json>).map(([status, res]) => {
    const schema = jsonSchemaOf(res.content);
    const shape = status === "200" && schema ? r.fields(schema) : "";
    return `<li><strong>${esc(status)}</strong> ${esc(res.description)}${shape}</li>`;
  });
  const secured = Array.isArray(op.security) && op.security.length > 0;
  return `<section class="op" id="${anchor(o)}">
<h3><span class="method ${o.method}">${o.method.toUpperCase()}</span> <code>${esc(o.path)}</code></h3>
<p class="summary">${esc(op.summary)}${secured ? "" : ' <span class="opt">no token needed</span>'}</p>
${prose(op.description)}${parameters(op)}
${body ? `<h4>Body (JSON)</h4>${r.fields(body) || `<p>${esc(r.typeOf(body))}</p>`}` : ""}
<h4>Answers</h4><ul>${responses.join("")}</ul>
</section>`;
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0;display:flex;color:#1d2330}
nav{width:300px;height:100vh;overflow:auto;position:sticky;top:0;background:#f4f6fa;padding:1rem;box-sizing:border-box;font-size:13px}
nav a{display:block;color:#1d2330;text-decoration:none;padding:2px 0}nav .method{font-size:10px;padding:1px 4px}main{padding:1rem 2rem;max-width:60rem}
.method{font:bold 12px monospace;padding:2px 6px;border-radius:4px;color:#fff;background:#607080}
.get{background:#2f7d4f}.post{background:#2f5f9f}.patch{background:#9f7a2f}.delete{background:#9f3f3f}.put{background:#6f4f9f}
.op{border-top:1px solid #dde2ea;padding:.5rem 0}.type{color:#5a6477;font-family:monospace;font-size:13px}
.opt,.ex{color:#5a6477;font-size:12px}code{background:#eef1f6;padding:0 3px;border-radius:3px}
table{border-collapse:collapse}td,th{border:1px solid #dde2ea;padding:2px 8px;text-align:left;vertical-align:top}
ul.fields{margin:.2rem 0;padding-left:1.2rem}ul.fields p{margin:0}.summary{font-weight:600}`;

/** Renders the whole reference page from an OpenAPI 3.1 document. */
export function renderReferencePage(doc: Json): string {
  const info = (doc.info ?? {}) as Json;
  const components = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Schema>;
  const r = new SchemaRenderer(components);
  const byTag = operationsByTag(doc);
  const tags = [...byTag.keys()].sort();
  const nav = tags
    .map((t) => {
      const links = (byTag.get(t) ?? [])
        .map(
          (o) =>
            `<a href="#${anchor(o)}" title="${o.method.toUpperCase()} ${esc(o.path)}"><span class="method ${o.method}">${o.method.toUpperCase()}</span> ${esc(o.op.summary)}</a>`,
        )
        .join("");
      return `<h4>${esc(t)}</h4>${links}`;
    })
    .join("");
  const sections = tags
    .map((t) => `<h2>${esc(t)}</h2>${(byTag.get(t) ?? []).map((o) => operation(o, r)).join("")}`)
    .join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(info.title)} reference</title>
<style>${STYLE}</style></head><body><nav><strong>${esc(info.title)}</strong> ${esc(info.version)}
<p><a href="/openapi.json">openapi.json</a></p>${nav}</nav><main><h1>${esc(info.title)}</h1>${prose(info.description)}
<p>Every request carries <code>Authorization: Bearer &lt;API token&gt;</code> unless marked otherwise. Errors are <code>{"error": "..."}</code>.</p>
${sections}</main></body></html>`;
}
