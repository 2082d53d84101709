import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

/**
 * Each analytics engine's folder is its own: from outside it, only its index.ts (the
 * engine's public face) may be imported; the rest are its internals
 * (docs/decisions/0010-analytics-engine-interface.md). Alias and relative paths alike.
 */
const engineInternals = (engine) => ({
  group: [`@/lib/analytics/engines/${engine}/*`, `**/engines/${engine}/*`],
  message: `Use the analytics engine (lib/analytics/engine.ts) or lib/analytics/engines/${engine}/index.ts, not its internals.`,
});
const MEMORY = engineInternals("memory");
const CLICKHOUSE = engineInternals("clickhouse");
const NOT_UI = { group: ["@/app/*", "@/components/*"], message: "lib/ must not import from app/ or components/." };
const NO_DRIZZLE = { group: ["drizzle-orm", "drizzle-orm/*", "better-sqlite3"], message: "Query through lib/, not from app/ or components/." };
const NO_SCHEMA = { group: ["@/db/schema", "@/db/schema/*"], message: "Query through lib/, not from app/ or components/." };
// What a route shares with its page (parameters, rows) lives in lib/ (e.g. lib/ops/), read by both.
const NO_PAGES = { group: ["@/app/*", "!@/app/api", "!@/app/api/*"], message: "API routes import lib/, never a page folder." };

/**
 * Folders of lib/ that sit below others (issue 28): a shared piece lives in the lower
 * folder, and the lower folder never imports the ones above it. Tests and test support
 * may reach up (they assemble whole systems).
 */
const LAYERS = [
  { folder: "time", above: ["analytics", "export", "ui", "platform"] },
  { folder: "platform", above: ["analytics", "export", "ui", "ingest", "sync", "clickhouse", "apps"] },
  { folder: "export", above: ["analytics", "ui"] },
  { folder: "config", above: ["clickhouse", "analytics", "sync", "ingest"] },
  { folder: "locks", above: ["sync", "apps"] },
  { folder: "apps", above: ["sync"] },
  { folder: "ingest", above: ["health"] },
  { folder: "clickhouse", above: ["ingest", "sync", "analytics", "apps", "emulator"] },
];
const layerBlocks = LAYERS.map(({ folder, above }) => ({
  files: [`lib/${folder}/**/*.{ts,tsx}`],
  ignores: ["**/*.test.ts", "**/test-*.ts"],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        patterns: [
          NOT_UI, MEMORY, CLICKHOUSE,
          { group: above.flatMap((a) => [`@/lib/${a}`, `@/lib/${a}/*`, `../${a}/*`]), message: `lib/${folder} sits below lib/${above.join(", lib/")}: move what both need down into lib/${folder} (or lower), never import up.` },
        ],
      },
    ],
  },
}));

const config = [
  ...nextVitals,
  ...nextTs,
  {
    ignores: [".next/**", "node_modules/**", "data/**", ".tmp/**", "bench/out/**", "db/migrations/**", "test-results/**", "playwright-report/**", "next-env.d.ts"],
  },
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // Layering: pages and components never talk SQL or drizzle; they call lib/.
    files: ["app/**/*.{ts,tsx}", "components/**/*.{ts,tsx}"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [NO_DRIZZLE, NO_SCHEMA, MEMORY, CLICKHOUSE],
        },
      ],
    },
  },
  {
    // API routes and pages depend one way: a route never reaches into a page's folder.
    files: ["app/api/**/*.{ts,tsx}"],
    rules: { "no-restricted-imports": ["error", { patterns: [NO_DRIZZLE, NO_SCHEMA, MEMORY, CLICKHOUSE, NO_PAGES] }] },
  },
  {
    // Everywhere else (scripts, the bench, e2e, db): through the engines' public faces.
    files: ["**/*.{ts,tsx,mjs}"],
    ignores: ["app/**", "components/**", "lib/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [MEMORY, CLICKHOUSE] }] },
  },
  {
    // lib/ never reaches up into the UI, nor into an engine's internals.
    files: ["lib/**/*.{ts,tsx}"],
    ignores: ["lib/analytics/engines/memory/**", "lib/analytics/engines/clickhouse/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [NOT_UI, MEMORY, CLICKHOUSE] }] },
  },
  ...layerBlocks,
  {
    // One engine never reaches into the other (relative paths from inside an engine's folder too).
    files: ["lib/analytics/engines/memory/**/*.{ts,tsx}"],
    rules: { "no-restricted-imports": ["error", { patterns: [NOT_UI, { ...CLICKHOUSE, group: [...CLICKHOUSE.group, "**/clickhouse/*"] }] }] },
  },
  {
    files: ["lib/analytics/engines/clickhouse/**/*.{ts,tsx}"],
    rules: { "no-restricted-imports": ["error", { patterns: [NOT_UI, { ...MEMORY, group: [...MEMORY.group, "**/memory/*"] }] }] },
  },
];

export default config;
