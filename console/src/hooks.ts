import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { describe } from "./api.js";

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change; a slower earlier answer never overwrites a newer one. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const seq = useRef(0);
  // The caller's deps decide when to load again (as with useEffect itself).
  useEffect(() => {
    const mine = ++seq.current;
    setState((s) => ({ data: s.data, loading: true }));
    load().then(
      (data) => mine === seq.current && setState({ data, loading: false }),
      (e) => mine === seq.current && setState({ error: describe(e), loading: false }),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export interface Action {
  busy: boolean;
  error: string | undefined;
  /** Runs `fn`, showing progress meanwhile and its error in words afterwards; answers its result. */
  run: <T>(fn: () => Promise<T>) => Promise<T | undefined>;
  clear: () => void;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const run = useCallback(async <T>(fn: () => Promise<T>) => {
    setBusy(true);
    setError(undefined);
    try {
      return await fn();
    } catch (e) {
      setError(describe(e));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: useCallback(() => setError(undefined), []) };
}
