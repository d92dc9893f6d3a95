import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "jsdom",
    include: ["tests/**/*.test.ts"],
    restoreMocks: true,
    // These are correctness tests, not timing tests. scripts/test runs vitest niced beside three pytest
    // processes on a 2-core CI machine, where a jsdom test that takes 0.4 s alone took 6.3 s (stop 30's CI).
    // Speed is measured by benchmarks/, so a slow test here fails only when it is stuck.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
