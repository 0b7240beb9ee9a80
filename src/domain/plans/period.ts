/** A calendar month (UTC) up to a day in it: usage is counted per UTC day. */
export interface Period {
  /** `YYYY-MM`. */
  month: string;
  /** The month's first day, `YYYY-MM-01`. */
  fromDay: string;
  /** The day `now` falls on. */
  toDay: string;
}

export function currentPeriod(now: Date): Period {
  const day = now.toISOString().slice(0, 10);
  const month = day.slice(0, 7);
  return { month, fromDay: `${month}-01`, toDay: day };
}
