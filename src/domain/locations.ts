import type { LocationDef } from "../config.js";
import { InvalidError } from "../errors.js";

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
    if (!l) throw new InvalidError(`invalid location: ${code}`);
    return l;
  }

  /** The location used when a caller doesn't name one. */
  get default(): LocationDef {
    const first = this.all[0];
    if (!first) throw new Error("the location catalogue is empty");
    return first;
  }
}
