/**
 * What a CSV column is, as data: the report table (lib/analytics/report-registry.ts)
 * names each report's columns with these, and the browser reads that table too, so this
 * file imports nothing. The writers that turn rows into CSV text are csv.ts's.
 */

/**
 * A column computed from another of the same row, for people reading the file: `iso`,
 * epoch seconds as ISO 8601 in the download's zone (`isoMs`: from milliseconds);
 * `label`, a code as the dashboard names it ("meet" → "Meeting"). Derived columns come
 * after the data columns, so scripts reading columns by position keep working.
 */
export type Derivation = "iso" | "isoMs" | "label";

export type CsvColumn<T> =
  | {
      key: keyof T & string;
      header?: string;
      /** `decimal`: fixed to 3 places. */
      kind?: "decimal";
      /** Exact decimal text kept as is ("-4.50" is an amount, not a formula); anything else in the column is still neutralised. */
      exact?: boolean;
    }
  | { header: string; derived: { of: keyof T & string; as: Derivation } };

/**
 * Columns of a raw-row CSV: rows are arrays in column order (better-sqlite3 `.raw()`),
 * so no object is built per row. `boolean` cells hold 0/1.
 */
export interface RawCsvColumn {
  header: string;
  kind?: "decimal" | "boolean";
  /** Computed from the row's field at index `of` (see Derivation); derived columns come last. */
  derived?: { of: number; as: Derivation };
}

/** An `iso` column beside epoch-seconds column `of`: header `<of>Iso`. */
export function isoColumn<T>(of: keyof T & string, header = `${of}Iso`): CsvColumn<T> {
  return { header, derived: { of, as: "iso" } };
}

/** A `label` column beside code column `of`: header `<of>Label`. */
export function labelColumn<T>(of: keyof T & string): CsvColumn<T> {
  return { header: `${of}Label`, derived: { of, as: "label" } };
}
