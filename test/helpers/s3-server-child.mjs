// A real S3-compatible server (s3rver) in a process of its own, for the backup tests. Run with
// --openssl-legacy-provider: s3rver makes its listing continuation tokens with DES, which Node 20's
// OpenSSL 3 only has in its legacy provider. Prints {"port": N} once it listens.
// @ts-expect-error s3rver ships no type declarations
import S3rver from "s3rver";

const [directory, port, bucket] = process.argv.slice(2);
const server = new S3rver({
  address: "127.0.0.1",
  port: Number(port),
  silent: true,
  directory,
  configureBuckets: [{ name: bucket }],
});
const address = await server.run();
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
process.on("SIGTERM", () => {
  server.close().finally(() => process.exit(0));
});
