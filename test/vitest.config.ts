import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: new URL("..", import.meta.url).pathname,
    include: ["core/**/*.test.ts", "stores/**/*.test.ts", "alerts/**/*.test.ts", "evaluation/**/*.test.ts", "human-input/**/*.test.ts", "accounts/**/*.test.ts", "dead-letters/**/*.test.ts", "query/**/*.test.ts", "prompts/**/*.test.ts", "otlp/**/*.test.ts", "plugins/**/*.test.ts", "pipeline/**/*.test.ts", "web/**/*.test.ts", "gateway/**/*.test.ts", "agents-service/**/*.test.ts", "clients/js/test/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**", "**/.dist-builds/**"],
    // A test's timeout guards against a hang, not against a slow machine (speed is measured in test/bench): the
    // harness's waits (`until`) give up after 60 s, so a test that waits on the pipeline must outlast them.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // chDB loads a large engine per process; few forks keep memory and start-up reasonable on 2 cores.
    pool: "forks",
    maxWorkers: 2,
  },
});
