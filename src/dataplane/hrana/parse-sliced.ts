import { setImmediate as yieldToLoop } from "node:timers/promises";
import { type Batch, batchSteps, parseStep, parseStreamRequest, type StreamRequest } from "./requests.js";

/** How long parsing runs before other requests get a turn. */
const SLICE_MS = 4;

/**
 * Parses a pipeline's requests as `parseStreamRequest` does, but a slice at a time: thousands of
 * statements take tens of milliseconds to check, which other tenants' requests shouldn't wait for.
 * Every request is still checked before any runs: a malformed one fails the whole pipeline.
 */
export function parseRequestsSliced(list: readonly unknown[]): StreamRequest[] | Promise<StreamRequest[]> {
  // What clients send for nearly every statement (an execute and a close, say): parsed at once,
  // without the promise and the turn of the microtask queue an async parse costs.
  if (list.length <= SMALL && list.every((r) => !isBatch(r))) return list.map((r) => parseStreamRequest(r));
  return parseSliced(list);
}

/** Pipelines this long or shorter, with no batch, are parsed in one go. */
const SMALL = 16;

function isBatch(raw: unknown): boolean {
  return typeof raw === "object" && raw !== null && (raw as { type?: unknown }).type === "batch";
}

async function parseSliced(list: readonly unknown[]): Promise<StreamRequest[]> {
  const out: StreamRequest[] = [];
  let slice = performance.now();
  for (const raw of list) {
    const r = raw as { type?: unknown; batch?: unknown } | null;
    if (r && typeof r === "object" && r.type === "batch")
      out.push({ type: "batch", batch: await parseBatchSliced(r.batch) });
    else out.push(parseStreamRequest(raw));
    if (performance.now() - slice > SLICE_MS) {
      await yieldToLoop();
      slice = performance.now();
    }
  }
  return out;
}

/** `parseBatch`, a slice at a time. */
export async function parseBatchSliced(v: unknown): Promise<Batch> {
  const raw = batchSteps(v);
  const steps: Batch["steps"] = [];
  let slice = performance.now();
  for (let i = 0; i < raw.length; i++) {
    steps.push(parseStep(raw[i], i));
    if ((i & 63) === 63 && performance.now() - slice > SLICE_MS) {
      await yieldToLoop();
      slice = performance.now();
    }
  }
  return { steps };
}
