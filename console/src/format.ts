const UNITS = ["B", "KB", "MB", "GB", "TB"];

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "–";
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${UNITS[u]}`;
}

export const count = (n: number | null | undefined) =>
  n === null || n === undefined ? "–" : n.toLocaleString("en");

export function when(iso: string): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  return t.toLocaleString("en", { dateStyle: "medium", timeStyle: "short" });
}

/** A quota as a sentence part: "12 of 100" or "12 (no limit)". */
export function against(used: number, quota: number | null, fmt: (n: number) => string = count): string {
  return quota === null ? `${fmt(used)} (no limit)` : `${fmt(used)} of ${fmt(quota)}`;
}
