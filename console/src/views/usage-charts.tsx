import { useMemo } from "preact/hooks";
import { api } from "../api.js";
import { bytes, count } from "../format.js";
import { type Loaded, useLoad } from "../hooks.js";
import { DailyChart } from "../ui/chart.js";
import { Busy, ErrorNote, Section, Table } from "../ui/kit.js";

interface Day {
  day: string;
  usage: { rows_read: number; rows_written: number; storage_bytes: number | null; queries: number };
}
interface TopQuery {
  query: string;
  rows_read: number;
  rows_written: number;
  count: number;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Usage of the last 30 days from Shoal's per-day usage route, and the most expensive statements. */
export function UsageCharts({ base }: { base: string }) {
  const history = useLoad(
    () => api.get<{ database: { days: Day[] } }>(`${base}/usage/daily`).then((r) => r.database.days),
    [base],
  );
  const stats = useLoad(() => api.get<{ top_queries: TopQuery[] | null }>(`${base}/stats`), [base]);
  const series = useMemo(() => {
    const days = history.data ?? [];
    const of = (f: (d: Day) => number | null) => ({ days: days.map((d) => d.day), values: days.map(f) });
    return {
      read: of((d) => d.usage.rows_read),
      written: of((d) => d.usage.rows_written),
      queries: of((d) => d.usage.queries),
      storage: of((d) => d.usage.storage_bytes),
    };
  }, [history.data]);
  const total = (s: { values: Array<number | null> }) => count(sum(s.values.map((v) => v ?? 0)));
  const lastStorage = series.storage.values[series.storage.values.length - 1] ?? null;
  return (
    <Section title="Usage, last 30 days">
      {history.loading && !history.data && <Busy label="Loading usage…" />}
      <ErrorNote message={history.error} />
      {history.data && (
        <div class="charts">
          <DailyChart
            title="Rows read"
            summary={`${total(series.read)} in all`}
            series={series.read}
            kind="bars"
            format={count}
            windowDays={30}
            whole
          />
          <DailyChart
            title="Rows written"
            summary={`${total(series.written)} in all`}
            series={series.written}
            kind="bars"
            format={count}
            windowDays={30}
            whole
          />
          <DailyChart
            title="Queries"
            summary={`${total(series.queries)} in all`}
            series={series.queries}
            kind="bars"
            format={count}
            windowDays={30}
            whole
          />
          <DailyChart
            title="Storage"
            summary={`${bytes(lastStorage)} now`}
            series={series.storage}
            kind="line"
            format={bytes}
            windowDays={30}
          />
        </div>
      )}
      <TopQueries stats={stats} />
    </Section>
  );
}

function TopQueries({ stats }: { stats: Loaded<{ top_queries: TopQuery[] | null }> }) {
  return (
    <>
      <h3>Most expensive statements</h3>
      <ErrorNote message={stats.error} />
      {stats.data && (stats.data.top_queries ?? []).length === 0 && (
        <p class="hint">No statements have run yet.</p>
      )}
      {stats.data && (stats.data.top_queries ?? []).length > 0 && (
        <Table
          label="Most expensive statements"
          head={["Statement", "Runs", "Rows read", "Rows written"]}
          numeric={[1, 2, 3]}
        >
          {(stats.data.top_queries ?? []).map((q) => (
            <tr key={q.query}>
              <td class="mono clip">{q.query}</td>
              <td class="num">{count(q.count)}</td>
              <td class="num">{count(q.rows_read)}</td>
              <td class="num">{count(q.rows_written)}</td>
            </tr>
          ))}
        </Table>
      )}
    </>
  );
}
