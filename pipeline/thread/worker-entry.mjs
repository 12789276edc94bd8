// Entry of the pipeline thread. tsx's loader, registered on the main thread, does not reach worker threads:
// register it here, then load the TypeScript worker.
import { register } from "tsx/esm/api";

register();
await import("./worker.ts");
