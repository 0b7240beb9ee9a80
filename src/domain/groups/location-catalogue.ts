import type { LocationDef } from "../../config.js";
import { groupErrors } from "./errors.js";

/**
 * The platform a location is listed under in the turso CLI's `db locations` (Turso groups its
 * locations as `aws`, `fly`, ...). Shoal's catalogue is one set of locations on the operator's own
 * machines, so a code that names AWS (`aws-*`, Turso's current codes, kept so scripts run
 * unchanged) goes under `aws`, and every other code under `local`, which the CLI shows as "Local".
 */
export function platformOf(code: string): string {
  return code.startsWith("aws-") ? "aws" : "local";
}

function sharedPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** The locations this instance offers, as configured by `SHOAL_LOCATIONS`. */
export class LocationCatalogue {
  private readonly byCode: ReadonlyMap<string, LocationDef>;

  constructor(readonly all: readonly LocationDef[]) {
    this.byCode = new Map(all.map((l) => [l.code, l]));
  }

  has(code: string): boolean {
    return this.byCode.has(code);
  }

  get(code: string): LocationDef | undefined {
    return this.byCode.get(code);
  }

  /** Throws Turso's `invalid location: <code>` for a code the catalogue doesn't hold. */
  require(code: string): LocationDef {
    const l = this.byCode.get(code);
    if (!l) throw groupErrors.invalidLocation(code);
    return l;
  }

  /** The location used when a caller doesn't name one. */
  get default(): LocationDef {
    const first = this.all[0];
    if (!first) throw new Error("the location catalogue is empty");
    return first;
  }

  /** `{platform: {code: description}}`, the shape of Turso's v2 location list. */
  byPlatform(): Record<string, Record<string, string>> {
    const out: Record<string, Record<string, string>> = {};
    for (const l of this.all) {
      const platform = platformOf(l.code);
      out[platform] ??= {};
      out[platform][l.code] = l.description;
    }
    return out;
  }

  /**
   * One location and its alternatives, "closest" first. Shoal knows no distances between the
   * operator's locations, so the order is only a guess from the names: same platform first, then
   * the longest shared code prefix (`aws-us-east-1` is nearer `aws-us-east-2` than `aws-eu-west-1`),
   * then the catalogue's own order. Every other location is listed.
   */
  describe(code: string): { location: LocationDef; closest: LocationDef[] } {
    const location = this.byCode.get(code);
    if (!location) throw groupErrors.locationNotFound(code);
    const platform = platformOf(code);
    const closest = this.all
      .map((l, index) => ({ l, index }))
      .filter(({ l }) => l.code !== code)
      .sort(
        (a, b) =>
          Number(platformOf(b.l.code) === platform) - Number(platformOf(a.l.code) === platform) ||
          sharedPrefix(code, b.l.code) - sharedPrefix(code, a.l.code) ||
          a.index - b.index,
      )
      .map(({ l }) => l);
    return { location, closest };
  }
}
