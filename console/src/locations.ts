import { api } from "./api.js";

let catalogue: Promise<Record<string, string>> | undefined;

/** The instance's location catalogue (code → description); public, so fetched once per page. */
export function locations(): Promise<Record<string, string>> {
  catalogue ??= api.get<{ locations: Record<string, string> }>("/v1/locations").then(
    (r) => r.locations,
    (e) => {
      catalogue = undefined;
      throw e;
    },
  );
  return catalogue;
}
