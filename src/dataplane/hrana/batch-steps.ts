import { setImmediate as yieldToLoop } from "node:timers/promises";
import type { ExecResult } from "../../engine/connection.js";
import { type HranaError, toHranaError } from "./errors.js";
import type { Batch, Condition, Stmt } from "./requests.js";

/** How long a batch or a sequence runs before giving other requests a turn. */
export const SLICE_MS = 4;

export interface BatchOutcome {
  results: Array<ExecResult | null>;
  errors: Array<HranaError | null>;
}

/** What a batch's steps run on: a stream, seen from the batch. */
export interface StepRunner {
  execute(stmt: Stmt): ExecResult | Promise<ExecResult>;
  isAutocommit(): boolean;
}

/** The outcome of a batch none of whose steps ran: each failed with `error()`. */
export function everyStepFailed(batch: Batch, error: () => HranaError): BatchOutcome {
  return { results: batch.steps.map(() => null), errors: batch.steps.map(() => error()) };
}

/**
 * Runs a batch's steps in order, each when its condition holds. A long batch gives other requests
 * a turn every few milliseconds (it keeps its connection and lock meanwhile), so a 4,000-step
 * batch on one database doesn't hold the event loop for the others.
 */
export async function runSteps(batch: Batch, on: StepRunner): Promise<BatchOutcome> {
  const results: Array<ExecResult | null> = [];
  const errors: Array<HranaError | null> = [];
  let slice = performance.now();
  for (const step of batch.steps) {
    if (performance.now() - slice > SLICE_MS) {
      await yieldToLoop();
      slice = performance.now();
    }
    if (step.condition && !holds(step.condition, results, errors, on)) {
      results.push(null);
      errors.push(null);
      continue;
    }
    try {
      const r = on.execute(step.stmt);
      results.push(r instanceof Promise ? await r : r);
      errors.push(null);
    } catch (e) {
      results.push(null);
      errors.push(toHranaError(e));
    }
  }
  return { results, errors };
}

function holds(
  c: Condition,
  results: Array<ExecResult | null>,
  errors: Array<HranaError | null>,
  on: StepRunner,
): boolean {
  switch (c.type) {
    case "ok":
      return results[c.step] != null;
    case "error":
      return errors[c.step] != null;
    case "not":
      return !holds(c.cond, results, errors, on);
    case "and":
      return c.conds.every((x) => holds(x, results, errors, on));
    case "or":
      return c.conds.some((x) => holds(x, results, errors, on));
    case "is_autocommit":
      return on.isAutocommit();
  }
}
