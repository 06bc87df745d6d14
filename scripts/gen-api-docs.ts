// Writes docs/openapi.json (the HTTP surface, OpenAPI 3.1) and docs/asyncapi.json (the WebSocket
// methods and events, AsyncAPI 3) from the zod schemas the edge validates with.
//   npm run docs            (tsx scripts/gen-api-docs.ts [outdir], outdir defaults to docs)
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildAsyncApi } from "../services/edge/src/api-docs/asyncapi.js";
import { buildOpenApi } from "../services/edge/src/api-docs/openapi.js";

const API_DOCS = { "openapi.json": buildOpenApi, "asyncapi.json": buildAsyncApi };

const outdir = process.argv[2] ?? "docs";
mkdirSync(outdir, { recursive: true });
for (const [file, build] of Object.entries(API_DOCS)) writeFileSync(join(outdir, file), `${JSON.stringify(build(), null, 2)}\n`);
console.log(`wrote ${Object.keys(API_DOCS).map((file) => join(outdir, file)).join(", ")}`);
