// Creates a PGlite data directory (initdb) and exits: run as a child process by pglite.ts on a first start, so the
// memory that initdb grows PGlite's WASM heap to (far more than a server needs, docs/BENCHMARKS.md, "Parts loaded on
// demand"; a WASM heap never shrinks) leaves with the process.
import { PGlite } from "@electric-sql/pglite";

const db = await PGlite.create(process.argv[2]);
await db.close();
