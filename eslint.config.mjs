import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

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
          patterns: [
            { group: ["drizzle-orm", "drizzle-orm/*", "better-sqlite3"], message: "Query through lib/, not from app/ or components/." },
            { group: ["@/db/schema", "@/db/schema/*"], message: "Query through lib/, not from app/ or components/." },
          ],
        },
      ],
    },
  },
  {
    // lib/ never reaches up into the UI.
    files: ["lib/**/*.{ts,tsx}"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ group: ["@/app/*", "@/components/*"], message: "lib/ must not import from app/ or components/." }] }],
    },
  },
];

export default config;
