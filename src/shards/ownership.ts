/**
 * Which shard owns a database: a fixed function of its id and the number of shards, so every
 * process of the node computes the same answer with no table to keep in step. A database is
 * owned by exactly one shard for the life of the node's processes: its connections, write lock
 * and frame log live there, and every request for it is served there. Changing `SHOAL_WORKERS`
 * between two starts moves databases between shards; nothing about a database is kept per shard
 * on disk, so that is safe.
 */
export function ownerOf(key: string, shards: number): number {
  // FNV-1a: cheap, and spreads uuids (and names) evenly over a handful of buckets.
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}
