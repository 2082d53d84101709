/**
 * The one way values reach ClickHouse SQL. ClickHouse 18.16 has no server-side query
 * parameters, so every value of a filter (app pks, uids, enumerations, epoch seconds,
 * page bounds) is written into the statement as a literal by this encoder, and only by
 * it: the `sql` tagged template encodes every interpolated value, and text is inserted
 * verbatim only when it is an `Sql` fragment built by code (`raw`, `ident`, nested `sql`).
 * Tested against every input of the filter model, hostile ones included (sql.test.ts),
 * on the server and on chdb.
 */

/** A piece of SQL text built by code (never from a request's text). */
export class Sql {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type SqlValue = string | number | boolean | null | Sql | ReadonlyArray<string | number>;

/**
 * A ClickHouse string literal of any JavaScript string: backslash and quote escaped,
 * every control character (NUL, CR, LF, tab, …, DEL) as `\xHH`, everything else as its
 * UTF-8 bytes (the HTTP body is UTF-8). A lone surrogate becomes U+FFFD on the wire, as
 * it does everywhere else the string is stored.
 */
export function stringLiteral(s: string): string {
  let out = "'";
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    const code = s.charCodeAt(i);
    if (ch === "\\") out += "\\\\";
    else if (ch === "'") out += "\\'";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return `${out}'`;
}

/** A numeric literal: safe integers only (epoch seconds, pks, counts, page bounds). */
export function integerLiteral(n: number): string {
  if (!Number.isSafeInteger(n)) throw new TypeError(`not a safe integer: ${String(n)}`);
  // Parenthesised when negative: `x - -1` and `x--1` both parse, but `-` next to a comment start would not.
  return n < 0 ? `(${n})` : String(n);
}

/** The literal of one value. */
export function literal(v: Exclude<SqlValue, Sql>): string {
  if (v === null) return "NULL";
  if (typeof v === "string") return stringLiteral(v);
  if (typeof v === "number") return integerLiteral(v);
  if (typeof v === "boolean") return v ? "1" : "0";
  // A list for IN: never empty (`IN ()` is not SQL); callers decide what an empty list means.
  if (v.length === 0) throw new TypeError("empty list");
  return `(${v.map((x) => literal(x)).join(", ")})`;
}

/** SQL with every interpolated value encoded (Sql fragments inserted as they are). */
export function sql(strings: TemplateStringsArray, ...values: SqlValue[]): Sql {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    out += (v instanceof Sql ? v.text : literal(v)) + strings[i + 1];
  }
  return new Sql(out);
}

/** Text written by code (a column, an expression): inserted verbatim. */
export function raw(text: string): Sql {
  return new Sql(text);
}

/** An array literal `[…]` (for has(), arrayJoin()): never empty. */
export function array(values: ReadonlyArray<string | number>): Sql {
  if (values.length === 0) throw new TypeError("empty array");
  return new Sql(`[${values.map((x) => literal(x)).join(", ")}]`);
}

/** Fragments joined by `separator`. */
export function join(parts: ReadonlyArray<Sql>, separator: string): Sql {
  return new Sql(parts.map((p) => p.text).join(separator));
}

/** Conditions joined with AND (`1` when there are none). */
export function and(conds: ReadonlyArray<Sql | undefined>): Sql {
  const list = conds.filter((c): c is Sql => c !== undefined);
  return list.length === 0 ? new Sql("1") : join(list.map((c) => sql`(${c})`), " AND ");
}
