import { coreErrors } from "./errors.js";

/** Longest DNS label; a database's hostname label is `<db>-<org>`. */
const DNS_LABEL_MAX = 63;
const RESOURCE_NAME = /^[a-z0-9-]+$/;
const ACCOUNT_NAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
const TOKEN_NAME = /^[A-Za-z0-9._-]+$/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

function resourceName(kind: string, name: string, max: number): void {
  if (name === "") throw coreErrors.nameRequired(kind);
  if (name.length > max) throw coreErrors.nameTooLong(kind, max);
  if (!RESOURCE_NAME.test(name)) {
    throw coreErrors.nameCharacters(kind);
  }
  if (name.startsWith("-") || name.endsWith("-")) {
    throw coreErrors.nameDash(kind);
  }
}

/** Turso's rule (lowercase letters, digits, dashes, at most 64) plus: `<db>-<org>` must be a DNS label. */
export function checkDatabaseName(name: string, orgSlug: string): void {
  resourceName("database", name, 64);
  const label = `${name}-${orgSlug}`;
  if (label.length > DNS_LABEL_MAX) {
    throw coreErrors.hostnameLabelTooLong(label, label.length, DNS_LABEL_MAX);
  }
}

export function checkGroupName(name: string): void {
  resourceName("group", name, 64);
}

/** Usernames double as personal organization slugs, so they follow the same rule as slugs. */
export function checkAccountName(kind: "username" | "organization slug", name: string): void {
  if (name.length < 1 || name.length > 40 || !ACCOUNT_NAME.test(name)) {
    throw coreErrors.invalidAccountName(kind, name);
  }
}

export function checkEmail(email: string): void {
  if (email.length > 254 || !EMAIL.test(email)) throw coreErrors.invalidEmail(email);
}

export function checkTokenName(name: string): void {
  if (name.length < 1 || name.length > 64 || !TOKEN_NAME.test(name)) {
    throw coreErrors.invalidTokenName();
  }
}

/** Slug of a team organization from its display name: `Acme Corp` becomes `acme-corp`. */
export function slugify(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
}

/** Parses a size such as `1024`, `10kb`, `256mb` or `1gb` (powers of 1024) into bytes. */
export function parseSizeLimit(text: string): number {
  const m = /^\s*(\d+)\s*(b|kb|k|mb|m|gb|g|tb|t)?\s*$/i.exec(text);
  if (!m) throw coreErrors.invalidSizeLimit(text);
  const unit = (m[2] ?? "b").toLowerCase()[0] as "b" | "k" | "m" | "g" | "t";
  const scale = { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[unit];
  const bytes = Number(m[1]) * scale;
  if (!Number.isSafeInteger(bytes) || bytes <= 0) throw coreErrors.sizeLimitOutOfRange(text);
  return bytes;
}
