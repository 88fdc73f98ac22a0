// SPDX-License-Identifier: Apache-2.0
// The official Azure Storage SDK for JavaScript (@azure/storage-blob, pinned
// in package.json) as a W2 system of blobtable-bench (docs/performance.md#the-benchmark-suite):
// the same operations on blobs of the same size, through the same proxy.
//
//   node bench/sdk_peer.mjs CONN CONTAINER OP CONCURRENCY OPS BYTES PREFIX
//
// OP: get (Get Blob, the body read whole), upsert (Put Blob), replace (Put
// Blob If-Match the ETag it last wrote). CONCURRENCY workers run at once, each
// OPS operations on keys of its own (PREFIX<worker>-<i>), written first for
// get and replace (not timed). Prints one JSON line: {"ops", "seconds",
// "cpu_seconds", "latencies_us": [...]}; exits 1 with the error on stderr.
import { BlobServiceClient } from "@azure/storage-blob";

const [conn, container, op, concurrency, opsText, bytesText, prefix] = process.argv.slice(2);
const workers = Number(concurrency), ops = Number(opsText), bytes = Number(bytesText);
const containerClient = BlobServiceClient.fromConnectionString(conn).getContainerClient(container);
const body = Buffer.alloc(bytes);
for (let i = 0; i < bytes; ++i) body[i] = (i * 131 + 7) % 251;

const key = (w, i) => `${prefix}${String(w).padStart(2, "0")}-${String(i).padStart(8, "0")}`;
const etags = new Map();

async function put(name, ifMatch) {
  const r = await containerClient.getBlockBlobClient(name).upload(body, bytes, {
    conditions: ifMatch ? { ifMatch } : undefined,
  });
  etags.set(name, r.etag);
}

async function once(w, i) {
  const name = key(w, op === "get" ? (i * 7919) % ops : i);
  if (op === "get") {
    // download(), one Get Blob (downloadToBuffer() asks for the properties
    // first: two round trips), the body read whole.
    const r = await containerClient.getBlockBlobClient(name).download();
    const chunks = [];
    for await (const chunk of r.readableStreamBody) chunks.push(chunk);
    if (Buffer.concat(chunks).length !== bytes) throw new Error(`short read of ${name}`);
  } else if (op === "upsert") {
    await put(name);
  } else if (op === "replace") {
    await put(name, etags.get(name));
  } else {
    throw new Error(`unknown op ${op}`);
  }
}

async function eachWorker(fn) {
  await Promise.all(Array.from({ length: workers }, async (_, w) => {
    for (let i = 0; i < ops; ++i) await fn(w, i);
  }));
}

try {
  await containerClient.createIfNotExists();
  if (op !== "upsert") await eachWorker((w, i) => put(key(w, i)));
  const latencies = [];
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await eachWorker(async (w, i) => {
    const start = process.hrtime.bigint();
    await once(w, i);
    latencies.push(Number(process.hrtime.bigint() - start) / 1000);
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({
    ops: workers * ops, seconds, cpu_seconds: (cpu.user + cpu.system) / 1e6, latencies_us: latencies,
  }));
} catch (e) {
  console.error(`sdk_peer: ${e.message}`);
  process.exit(1);
}
