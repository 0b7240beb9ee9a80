import { Zstd } from "@hpcc-js/wasm-zstd";

/**
 * zstd for pulls that ask for it. Node 20's zlib has no zstd, and the native bindings on npm fetch
 * their binaries from elsewhere at install time, so this is zstd's own C library compiled to
 * WebAssembly (shipped inside the npm package). Loaded on the first pull that asks for it.
 */
let loading: Promise<Zstd> | undefined;

export function loadZstd(): Promise<Zstd> {
  loading ??= Zstd.load();
  return loading;
}
