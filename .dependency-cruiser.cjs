/**
 * The layer rule of docs/ARCHITECTURE.md, checked by `npm test` (test/check-structure.mjs):
 *
 *   deploy → {web, pipeline, gateway, agents-service} → {plugins, otlp} → features (FEATURES) → stores → core
 *
 * Imports point down only; a feature folder is entered through its index.ts only; features do not import each
 * other; no cycles. Tests (*.test.ts, test/,
 * testing/ folders) may reach across layers to wire a real stack, but not into a cycle.
 */
const TESTS = "(\\.test\\.ts$|^test/|/testing/|^agents-service/test/|^clients/js/test/)";
/** Feature folders: each one capability, entered through its index.ts (docs/ARCHITECTURE.md, Features). */
const FEATURES = ["alerts", "evaluation", "human-input", "accounts", "dead-letters", "query", "prompts"];
const SERVICES = "^(web|pipeline|gateway|agents-service)/";

/** A rule forbidding imports from `from` (source files, not tests) to `to`. */
const forbid = (name, comment, from, to) => ({
  name,
  comment,
  severity: "error",
  from: { path: from, pathNot: TESTS },
  to: { path: to },
});

module.exports = {
  forbidden: [
    { name: "no-cycles", comment: "modules that import each other cannot be read or changed alone", severity: "error", from: {}, to: { circular: true } },
    forbid("core-is-the-bottom", "core imports nothing outside core", "^core/", `^(${FEATURES.join("|")}|stores|otlp|plugins|pipeline|web|gateway|agents-service|deploy|clients)/`),
    forbid("stores-over-core", "stores/ (all data access, Postgres and ClickHouse) imports core only", "^stores/", `^(${FEATURES.join("|")}|otlp|plugins|pipeline|web|gateway|agents-service|deploy)/`),
    ...FEATURES.map((f) =>
      forbid(`${f}-over-stores`, `${f}/ (a feature) imports stores and core only`, `^${f}/`, `^(${FEATURES.filter((g) => g !== f).join("|")}|otlp|plugins|pipeline|web|gateway|agents-service|deploy)/`)),
    forbid("otlp-over-stores", "otlp/ (OpenTelemetry traces → events, for the receivers and the pipeline) imports stores and core only", "^otlp/", `^(${FEATURES.join("|")}|plugins|pipeline|web|gateway|agents-service|deploy)/`),
    forbid("plugins-below-services", "plugins import features, stores and core only", "^plugins/", "^(otlp|pipeline|web|gateway|agents-service|deploy)/"),
    forbid("web-not-sideways", "web imports no other service, plugin or deploy code", "^web/", "^(pipeline|plugins|gateway|agents-service|deploy)/"),
    forbid("pipeline-not-sideways", "pipeline imports no other service or deploy code", "^pipeline/", "^(web|gateway|agents-service|deploy)/"),
    forbid("gateway-not-sideways", "gateway imports no other service, plugin or deploy code", "^gateway/", "^(web|pipeline|plugins|otlp|agents-service|deploy)/"),
    forbid("agents-service-apart", "agents-service imports core and the JS SDK (clients/js) only", "^agents-service/", `^(web|pipeline|plugins|otlp|gateway|deploy|${FEATURES.join("|")}|stores)/`),
    ...FEATURES.map((f) => ({
      name: `${f}-through-its-index`,
      comment: `outside ${f}/, import ${f}/index.ts only`,
      severity: "error",
      from: { path: `^(?!${f}/)`, pathNot: TESTS },
      to: { path: `^${f}/`, pathNot: `^${f}/index\\.ts$` },
    })),
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist|\\.dist-builds|\\.cache)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
