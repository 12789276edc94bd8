import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: new URL("..", import.meta.url).pathname,
    include: ["core/**/*.test.ts", "alerts/**/*.test.ts", "stores/**/*.test.ts", "otlp/**/*.test.ts", "plugins/**/*.test.ts", "pipeline/**/*.test.ts", "web/**/*.test.ts", "gateway/**/*.test.ts", "agents-service/**/*.test.ts", "clients/js/test/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**", "**/.dist-builds/**"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // chDB loads a large engine per process; few forks keep memory and start-up reasonable on 2 cores.
    pool: "forks",
    maxWorkers: 2,
  },
});
