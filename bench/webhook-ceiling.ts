/**
 * The ceiling for bench/webhooks.ts: the least a durable webhook receiver can do — a
 * bare node:http server that parses the JSON and stores the body in SQLite with the
 * same durability mechanism as Callboard's ingest (WAL; deliveries arriving together
 * grouped into one commit; 200 after an fsync of the WAL off the event loop), with
 * none of its checks, keys or effects. `--full` commits with synchronous = FULL instead.
 *
 *   tsx bench/webhook-ceiling.ts <port> <sqlite file>
 */
import { createServer } from "node:http";
import Database from "better-sqlite3";
import { WalSyncer } from "../lib/ingest/wal-sync";

const port = Number(process.argv[2]);
const file = process.argv[3];
if (!port || !file) {
  console.error("usage: webhook-ceiling <port> <sqlite file>");
  process.exit(2);
}

const sqlite = new Database(file);
sqlite.pragma("journal_mode = WAL");
const full = process.argv.includes("--full");
sqlite.pragma(full ? "synchronous = FULL" : "synchronous = NORMAL");
const syncer = full ? undefined : new WalSyncer(file);
sqlite.exec("CREATE TABLE IF NOT EXISTS deliveries (pk INTEGER PRIMARY KEY, body TEXT NOT NULL, received_ms INTEGER NOT NULL)");
const insert = sqlite.prepare("INSERT INTO deliveries (body, received_ms) VALUES (?, ?)");

let queue: Array<{ body: string; done: (ok: boolean) => void }> = [];
let scheduled = false;
const commit = sqlite.transaction((jobs: typeof queue) => {
  const now = Date.now();
  for (const j of jobs) insert.run(j.body, now);
});
function flush(): void {
  scheduled = false;
  const jobs = queue;
  queue = [];
  try {
    commit(jobs);
  } catch {
    for (const j of jobs) j.done(false);
    return;
  }
  if (!syncer) for (const j of jobs) j.done(true);
  else syncer.sync((error) => jobs.forEach((j) => j.done(!error)));
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    try {
      JSON.parse(body);
    } catch {
      res.writeHead(400).end();
      return;
    }
    queue.push({
      body,
      done: (ok) => {
        res.writeHead(ok ? 200 : 503, { "Content-Type": "application/json" });
        res.end(ok ? '{"status":"stored"}' : "{}");
      },
    });
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, "127.0.0.1", () => console.log(`ceiling listening on ${port}`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
