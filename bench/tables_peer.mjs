// SPDX-License-Identifier: Apache-2.0
// Azurite's own Table service, through the official SDK (@azure/data-tables,
// pinned in package.json), as a system of blobtable-bench's W4 and W5
// (docs/performance.md#the-benchmark-suite). Every entity is PartitionKey "p", a RowKey, and a
// binary property "v" of BYTES bytes, as blobtable's are.
//
//   node bench/tables_peer.mjs CONN TABLE load ROWS BYTES
//       creates TABLE with ROWS entities (in batches, not timed)
//   node bench/tables_peer.mjs CONN TABLE query ROWS BYTES REPS
//       REPS queries of the whole partition, every page read
//   node bench/tables_peer.mjs CONN TABLE egt COMMITS BYTES
//       COMMITS times: the entity read (not timed), then replaced If-Match
//       its ETag by an entity group transaction of one operation
//   node bench/tables_peer.mjs CONN TABLE egt-hot COMMITS BYTES WORKERS
//       WORKERS loops at once, each COMMITS times reading its own two rows
//       of the one partition and replacing both, If-Match, by an entity
//       group transaction; all of it timed ("seconds" is the wall time)
//
// query and egt print one JSON line: {"ops", "seconds", "cpu_seconds",
// "requests", "latencies_us": [...]} with only the timed parts counted;
// every mode exits 1 with the error on stderr.
import { TableClient, odata } from "@azure/data-tables";

const [conn, table, mode, countText, bytesText, repsText] = process.argv.slice(2);
// egt-hot's WORKERS shares the slot of query's REPS.
const count = Number(countText), bytes = Number(bytesText), reps = Number(repsText);
const client = TableClient.fromConnectionString(conn, table, { allowInsecureConnection: true });
const value = new Uint8Array(bytes);
for (let i = 0; i < bytes; ++i) value[i] = (i * 131 + 7) % 251;
const rowKey = (i) => `r${String(i).padStart(8, "0")}`;
const entity = (rk) => ({ partitionKey: "p", rowKey: rk, v: value });

async function load() {
  await client.createTable();
  // A batch holds at most 100 entities and 4 MiB (binary goes as base64).
  const perBatch = Math.max(1, Math.min(100, Math.floor(3e6 / (bytes * 1.34 + 500))));
  const batches = [];
  for (let i = 0; i < count; i += perBatch) {
    const ops = [];
    for (let j = i; j < Math.min(count, i + perBatch); ++j) ops.push(["upsert", entity(rowKey(j)), "Replace"]);
    batches.push(ops);
  }
  // Eight batches at once: loading is not what is measured.
  for (let b = 0; b < batches.length; b += 8)
    await Promise.all(batches.slice(b, b + 8).map((ops) => client.submitTransaction(ops)));
}

// n times, one after another: prepare(i) (not timed), then timed(i, prepared),
// which returns the requests it sent; returns the measurement.
async function measure(n, prepare, timed) {
  const latencies = [];
  let seconds = 0, cpuSeconds = 0, requests = 0;
  for (let i = 0; i < n; ++i) {
    const prepared = await prepare(i);
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    requests += await timed(i, prepared);
    const ns = Number(process.hrtime.bigint() - t0);
    const cpu = process.cpuUsage(cpu0);
    latencies.push(ns / 1000);
    seconds += ns / 1e9;
    cpuSeconds += (cpu.user + cpu.system) / 1e6;
  }
  return { ops: n, seconds, cpu_seconds: cpuSeconds, requests, latencies_us: latencies };
}

function query() {
  return measure(reps, () => null, async () => {
    let rows = 0, pages = 0;
    const listing = client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"p"}` } });
    for await (const page of listing.byPage({ maxPageSize: 1000 })) {
      ++pages;
      for (const e of page) if (e.v.length === bytes) ++rows;
    }
    if (rows !== count) throw new Error(`the query found ${rows} of ${count} rows`);
    return pages;
  });
}

async function egt() {
  await client.createTable();
  await client.upsertEntity(entity("r"), "Replace");
  // The read is outside the timing, as in blobtable's k = 1 commit.
  return measure(count, () => client.getEntity("p", "r"), async (i, read) => {
    await client.submitTransaction([["update", entity("r"), "Replace", { etag: read.etag }]]);
    return 1;
  });
}

async function egtHot() {
  const workers = reps;
  await client.createTable();
  for (let w = 0; w < workers; ++w)
    for (const side of ["a", "b"]) await client.upsertEntity(entity(`w${w}${side}`), "Replace");
  const latencies = [];
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let requests = 0;
  await Promise.all(Array.from({ length: workers }, async (_, w) => {
    for (let i = 0; i < count; ++i) {
      const s0 = process.hrtime.bigint();
      const [a, b] = await Promise.all(["a", "b"].map((side) => client.getEntity("p", `w${w}${side}`)));
      await client.submitTransaction([a, b].map((e) => ["update", entity(e.rowKey), "Replace", { etag: e.etag }]));
      requests += 3;
      latencies.push(Number(process.hrtime.bigint() - s0) / 1000);
    }
  }));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return { ops: workers * count, seconds, cpu_seconds: (cpu.user + cpu.system) / 1e6, requests, latencies_us: latencies };
}

try {
  if (mode === "egt-hot") {
    console.log(JSON.stringify(await egtHot()));
  } else if (mode === "load") {
    await load();
    console.log("{}");
  } else if (mode === "query") {
    console.log(JSON.stringify(await query()));
  } else if (mode === "egt") {
    console.log(JSON.stringify(await egt()));
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
} catch (e) {
  console.error(`tables_peer: ${e.message}`);
  process.exit(1);
}
