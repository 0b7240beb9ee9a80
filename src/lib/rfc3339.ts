/**
 * RFC 3339 times read the way Turso's server (Go's `time.Parse(time.RFC3339, ...)`) reads them, so
 * a bad `from`/`to` gets the same message a client would see from Turso:
 * `parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`.
 */
const LAYOUT = "2006-01-02T15:04:05Z07:00";

export type Rfc3339 = { ok: true; date: Date } | { ok: false; error: string };

type Step =
  | { lit: string }
  | { num: "2006" | "01" | "02" | "15" | "04" | "05"; range?: [number, number, string] }
  | { zone: true };

// Go reads the layout as literals between elements; an element's error names its layout text.
const STEPS: Step[] = [
  { num: "2006" },
  { lit: "-" },
  { num: "01", range: [1, 12, "month"] },
  { lit: "-" },
  { num: "02", range: [1, 31, "day"] },
  { lit: "T" },
  { num: "15", range: [0, 23, "hour"] },
  { lit: ":" },
  { num: "04", range: [0, 59, "minute"] },
  { lit: ":" },
  { num: "05", range: [0, 59, "second"] },
  { zone: true },
];

const isDigit = (s: string, i: number) => i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57;
const q = (s: string) => JSON.stringify(s);
const leap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);

export function parseRfc3339(text: string): Rfc3339 {
  const cannot = (valueElem: string, layoutElem: string): Rfc3339 => ({
    ok: false,
    error: `parsing time ${q(text)} as ${q(LAYOUT)}: cannot parse ${q(valueElem)} as ${q(layoutElem)}`,
  });
  const outOfRange = (what: string): Rfc3339 => ({
    ok: false,
    error: `parsing time ${q(text)}: ${what} out of range`,
  });
  const f: Record<string, number> = {};
  let rest = text;
  let ms = 0;
  let offsetMin = 0;
  for (const step of STEPS) {
    if ("lit" in step) {
      if (!rest.startsWith(step.lit)) return cannot(rest, step.lit);
      rest = rest.slice(step.lit.length);
    } else if ("num" in step) {
      // The year takes exactly four digits, the hour one or two, every other field two.
      const width = step.num === "2006" ? 4 : step.num === "15" && !isDigit(rest, 1) ? 1 : 2;
      for (let i = 0; i < width; i++) if (!isDigit(rest, i)) return cannot(rest, step.num);
      const n = Number(rest.slice(0, width));
      rest = rest.slice(width);
      if (step.range && (n < step.range[0] || n > step.range[1])) return outOfRange(step.range[2]);
      f[step.num] = n;
      if (step.num === "05" && /^[.,]\d/.test(rest)) {
        const digits = /^[.,](\d+)/.exec(rest)![1]!;
        ms = Number(`0.${digits}`) * 1000;
        rest = rest.slice(digits.length + 1);
      }
    } else if (rest.startsWith("Z")) {
      rest = rest.slice(1);
    } else {
      if (rest.length < 6 || rest[3] !== ":" || !/^[+-]\d\d:\d\d/.test(rest)) return cannot(rest, "Z07:00");
      const h = Number(rest.slice(1, 3));
      const m = Number(rest.slice(4, 6));
      if (h > 24) return outOfRange("time zone offset hour");
      if (m > 60) return outOfRange("time zone offset minute");
      offsetMin = (rest[0] === "-" ? -1 : 1) * (h * 60 + m);
      rest = rest.slice(6);
    }
  }
  if (rest !== "") return { ok: false, error: `parsing time ${q(text)}: extra text: ${q(rest)}` };
  const year = f["2006"]!;
  const month = f["01"]!;
  const day = f["02"]!;
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !leap(year) ? 1 : 0);
  if (day > daysInMonth) return outOfRange("day");
  // setUTCFullYear, unlike Date.UTC, doesn't map years 0-99 onto 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(f["15"]!, f["04"]!, f["05"]!, ms);
  return { ok: true, date: new Date(date.getTime() - offsetMin * 60_000) };
}
