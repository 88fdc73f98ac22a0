// SPDX-License-Identifier: Apache-2.0
// An independent Azure client for interoperability tests: the official Azure
// Storage SDK for JavaScript, pinned in package.json.
//   node azure_client.mjs get CONN CONTAINER BLOB
//       -> {"etag": ..., "length": ..., "metadata": {...}}
//   node azure_client.mjs lease CONN CONTAINER BLOB SECONDS LEASE_ID
//       (creates the blob if missing) -> {"leaseId": ...}
//   node azure_client.mjs release CONN CONTAINER BLOB LEASE_ID
//   node azure_client.mjs sas CONN - - [expired]
//       -> an account SAS token (all blob rights, for the next hour, or, with
//          "expired", for an hour that ended an hour ago)
//   node azure_client.mjs upload CONN CONTAINER BLOB FILE [keep-metadata]
//       replaces the blob's content with FILE's bytes (one Put Blob); with
//       keep-metadata, its metadata as it was (a client that copies metadata
//       over) -> {"etag": ...}
//   node azure_client.mjs delete CONN CONTAINER BLOB
import { readFileSync } from "node:fs";
import {
  AccountSASPermissions, AccountSASResourceTypes, AccountSASServices, BlobServiceClient,
  StorageSharedKeyCredential, generateAccountSASQueryParameters,
} from "@azure/storage-blob";

const [command, conn, container, blob, ...rest] = process.argv.slice(2);
const client = BlobServiceClient.fromConnectionString(conn)
  .getContainerClient(container)
  .getBlockBlobClient(blob);

try {
  if (command === "get") {
    const props = await client.getProperties();
    console.log(JSON.stringify({ etag: props.etag, length: props.contentLength, metadata: props.metadata }));
  } else if (command === "lease") {
    const [seconds, leaseId] = rest;
    if (!(await client.exists())) await client.upload("", 0);
    const lease = client.getBlobLeaseClient(leaseId);
    const r = await lease.acquireLease(Number(seconds));
    console.log(JSON.stringify({ leaseId: r.leaseId }));
  } else if (command === "sas") {
    const fields = Object.fromEntries(conn.split(";").filter(Boolean).map((kv) => {
      const i = kv.indexOf("=");
      return [kv.slice(0, i), kv.slice(i + 1)];
    }));
    const credential = new StorageSharedKeyCredential(fields.AccountName, fields.AccountKey);
    const expired = rest[0] === "expired";
    const sas = generateAccountSASQueryParameters({
      startsOn: expired ? new Date(Date.now() - 7200 * 1000) : undefined,
      expiresOn: new Date(Date.now() + (expired ? -3600 : 3600) * 1000),
      permissions: AccountSASPermissions.parse("rwdlac"),
      resourceTypes: AccountSASResourceTypes.parse("sco").toString(),
      services: AccountSASServices.parse("b").toString(),
    }, credential).toString();
    console.log(sas);
  } else if (command === "upload") {
    const [file, keep] = rest;
    const data = readFileSync(file);
    const metadata = keep === "keep-metadata" ? (await client.getProperties()).metadata : {};
    const r = await client.upload(data, data.length, { metadata });
    console.log(JSON.stringify({ etag: r.etag }));
  } else if (command === "delete") {
    await client.delete();
    console.log(JSON.stringify({ deleted: true }));
  } else if (command === "release") {
    await client.getBlobLeaseClient(rest[0]).releaseLease();
    console.log(JSON.stringify({ released: true }));
  } else {
    throw new Error(`unknown command ${command}`);
  }
} catch (e) {
  console.error(`azure_client: ${e.statusCode ?? ""} ${e.code ?? ""} ${e.message}`);
  process.exit(1);
}
