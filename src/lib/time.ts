/** Source of the current time; tests can pass a fixed clock. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

/** ISO-8601 UTC with milliseconds: fixed width, so it sorts as text in every store dialect. */
export function isoTime(d: Date): string {
  return d.toISOString();
}
