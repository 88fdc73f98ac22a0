// SPDX-License-Identifier: Apache-2.0
// The bytes of XML a listing with metadata answers a row (issue 32, goal 6):
// List Blobs of CONTAINER under PREFIX, every page, through the official
// SDK (@azure/storage-blob, pinned in package.json), which keeps each
// response's body. Prints {"rows", "xml_bytes_a_row", "copy_bytes_a_row"}
// (copy: the btbody metadata values).
//
//   node bench/listing_bytes.mjs CONN CONTAINER PREFIX
import { BlobServiceClient } from "@azure/storage-blob";

const [conn, container, prefix] = process.argv.slice(2);
const client = BlobServiceClient.fromConnectionString(conn).getContainerClient(container);
let rows = 0, xml = 0, copies = 0;
for await (const page of client.listBlobsFlat({ prefix, includeMetadata: true }).byPage({ maxPageSize: 5000 })) {
  xml += Buffer.byteLength(page._response.bodyAsText ?? "");
  for (const b of page.segment.blobItems) {
    rows += 1;
    copies += (b.metadata?.btbody ?? "").length;
  }
}
console.log(JSON.stringify({ rows, xml_bytes_a_row: xml / rows, copy_bytes_a_row: copies / rows }));
