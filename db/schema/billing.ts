import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { apps } from "./apps";

/**
 * Usage statements (lib/billing). Money and minutes are decimal TEXT ("0.0040", "12.50"):
 * exact, never a binary float (docs/decisions/0012-usage-statements.md).
 */

/**
 * What a tenant app pays, from a month on: `app_pk` NULL is the account default, used
 * for an app without a sheet of its own in force. The sheet in force for a month is the
 * one with the latest `effective_month` at or before it, so a change never rewrites an
 * earlier month.
 */
export const priceSheets = sqliteTable(
  "price_sheets",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    appPk: integer("app_pk").references(() => apps.pk, { onDelete: "cascade" }),
    /** `YYYY-MM`: the first month this sheet prices. */
    effectiveMonth: text("effective_month").notNull(),
    /** ISO 4217 code. */
    currency: text("currency").notNull(),
    audioPerMinute: text("audio_per_minute").notNull(),
    videoPerMinute: text("video_per_minute").notNull(),
    perRecording: text("per_recording").notNull(),
    /** Participant-minutes (audio and video together) free each month. */
    includedMinutes: text("included_minutes").notNull().default("0"),
    /** The least a month costs (0: none). */
    monthlyMinimum: text("monthly_minimum").notNull().default("0"),
    updatedMs: integer("updated_ms").notNull(),
    updatedBy: text("updated_by").notNull(),
  },
  (t) => [
    // One sheet per app (or the default) and month; the lookup of the sheet in force reads it too.
    uniqueIndex("price_sheets_scope_month_uq").on(sql`coalesce(${t.appPk}, 0)`, t.effectiveMonth),
  ],
);

/**
 * An issued (frozen) statement: what was billed for one app and month. `body` holds the
 * whole statement as issued (usage, price sheet, lines, totals); later syncs never touch
 * it. App id and name are copied so that the record reads the same if the app goes.
 */
export const statements = sqliteTable(
  "statements",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    /** Gapless, account-wide: printed as ST-000001. */
    number: integer("number").notNull().unique(),
    appPk: integer("app_pk").references(() => apps.pk, { onDelete: "set null" }),
    appId: text("app_id").notNull(),
    appName: text("app_name").notNull(),
    month: text("month").notNull(),
    timeZone: text("time_zone").notNull(),
    currency: text("currency").notNull(),
    total: text("total").notNull(),
    body: text("body", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    issuedMs: integer("issued_ms").notNull(),
    issuedByUserPk: integer("issued_by_user_pk"),
    issuedBy: text("issued_by").notNull(),
  },
  (t) => [
    // One statement per app and month; also the page's lookup of a month's issued statements.
    uniqueIndex("statements_app_month_uq").on(t.appId, t.month),
  ],
);

/**
 * A difference found after issue (usage of an issued month changed), carried by a later
 * statement: `statement_pk` carries it, `adjusts_pk` is the issued statement it corrects.
 */
export const statementAdjustments = sqliteTable(
  "statement_adjustments",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    statementPk: integer("statement_pk")
      .notNull()
      .references(() => statements.pk, { onDelete: "cascade" }),
    adjustsPk: integer("adjusts_pk")
      .notNull()
      .references(() => statements.pk, { onDelete: "cascade" }),
    amount: text("amount").notNull(),
    details: text("details", { mode: "json" }).$type<Record<string, unknown>>(),
  },
  (t) => [
    // What has been carried of an issued statement already (its pending adjustment).
    index("statement_adjustments_adjusts_idx").on(t.adjustsPk),
    // A statement's carried lines.
    index("statement_adjustments_statement_idx").on(t.statementPk),
  ],
);

export type PriceSheetRow = typeof priceSheets.$inferSelect;
export type StatementRow = typeof statements.$inferSelect;
export type StatementAdjustmentRow = typeof statementAdjustments.$inferSelect;
