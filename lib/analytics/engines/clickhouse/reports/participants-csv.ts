import type { ClickHouse } from "@/lib/clickhouse";
import type { CsvBytes } from "@/lib/export/csv-bytes";
import { RowBinaryCsv, rowBinaryCsv } from "./row-binary-csv";

/**
 * The participants CSV from ClickHouse's RowBinary (row-binary-csv.ts), in
 * PARTICIPANT_COLUMNS' order, each cell as the rows writer (`csvCell` + csv-stringify)
 * writes the JSON row's value: texts neutralised and quoted as `rawCell` does, counts and
 * times as `String(n)`, minutes `toFixed(3)` (which is `fixed3` for thousandths / 1000),
 * then the ISO times of firstCallAt and lastCallAt.
 */

/**
 * The outer SELECT over participantsQuery's rows (`inner`), in PARTICIPANT_COLUMNS' order,
 * each cast to the type `ParticipantsCsvDecoder` reads. Its aliases differ from the inner
 * names, which the report's ORDER BY (participantsOrder) then reads.
 */
export function participantsCsvSelect(inner: string): string {
  return `SELECT CAST(appPk AS UInt32) AS csvApp, CAST(uid AS String) AS csvUid, CAST(calls AS Int64) AS csvCalls, CAST(joined AS Int64) AS csvJoined,
    CAST(unanswered AS Int64) AS csvUnanswered, CAST(audioX1000 AS Int64) AS csvAudio, CAST(videoX1000 AS Int64) AS csvVideo, CAST(totalX1000 AS Int64) AS csvTotal,
    CAST(firstCallAt AS Int64) AS csvFirst, CAST(lastCallAt AS Int64) AS csvLast FROM (${inner})`;
}

export class ParticipantsCsvDecoder extends RowBinaryCsv {
  protected row(w: CsvBytes): void {
    this.app(w);
    w.comma();
    this.text(w, false);
    w.comma();
    w.number(this.i64());
    w.comma();
    w.number(this.i64());
    w.comma();
    w.number(this.i64());
    w.comma();
    w.decimal(this.i64() / 1000);
    w.comma();
    w.decimal(this.i64() / 1000);
    w.comma();
    w.decimal(this.i64() / 1000);
    w.comma();
    const first = this.i64();
    w.number(first);
    w.comma();
    const last = this.i64();
    w.number(last);
    w.comma();
    w.iso(first, this.iso);
    w.comma();
    w.iso(last, this.iso);
    w.crlf();
  }
}

/** The participants CSV's lines of `query` (a `participantsCsvSelect`, ordered) in the download's zone `tz`. */
export function participantsCsvBytes(
  ch: ClickHouse,
  query: string,
  apps: { pks: readonly number[]; appId: (pk: number) => string },
  tz: string | undefined,
  signal?: AbortSignal,
): AsyncGenerator<Uint8Array> {
  return rowBinaryCsv(ch, query, new ParticipantsCsvDecoder(apps.appId, new Set(apps.pks), tz), signal);
}
