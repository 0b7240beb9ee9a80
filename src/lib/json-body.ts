/**
 * Request bodies as real clients send them: the TS client posts JSON labelled text/plain, the CLI
 * sends an empty body with a JSON content type and capitalised keys (Go matches keys without case).
 * So the body is parsed as JSON whatever its content type, an empty body means `{}`, and keys are
 * lower-cased so one schema matches every spelling.
 */
export type LenientJson = { ok: true; value: unknown } | { ok: false; error: string };

export function parseLenientJson(text: string): LenientJson {
  if (text.trim() === "") return { ok: true, value: {} };
  try {
    return { ok: true, value: lowerCaseKeys(JSON.parse(text)) };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** Lower-cases object keys recursively. When two spellings collide, the exact lower-case one wins. */
export function lowerCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(lowerCaseKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const lower = key.toLowerCase();
    if (lower in out && key !== lower) continue;
    out[lower] = lowerCaseKeys(v);
  }
  return out;
}
