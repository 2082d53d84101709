/**
 * Test support: a fresh warehouse file per suite, registered apps, and the lean ingest
 * handler on a real node:http server on a free loopback port.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type Database from "better-sqlite3";
import { openDatabase, type Db } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { resetEnvForTests } from "@/lib/config/env";
import { basicAuthHeader } from "./auth";
import { createIngestHttpHandler } from "./webhook-handler";
import { createIngestor, type IngestorOptions, type SqliteIngestor } from "./ingest";
import { openIngestConnection } from "./runtime";
import { WalSyncer } from "./wal-sync";

export const TEST_SECRET = "test-secret-for-ingest-suites-0123456789abcdef";
export const HOOK_USER = "platform-hook";
export const HOOK_PASSWORD = "pa55:word-with-colon";
export const AUTH = basicAuthHeader(HOOK_USER, HOOK_PASSWORD);

export interface Harness {
  dir: string;
  file: string;
  db: Db;
  ingestSqlite: Database.Database;
  ingestor: SqliteIngestor;
  server: Server;
  baseUrl: string;
  appPk: Record<string, number>;
  close(): Promise<void>;
}

export interface HarnessOptions extends IngestorOptions {
  /** `wal-fsync` (the default, as in production): NORMAL commits + WAL fsync off the loop; `full`: every commit fsyncs. */
  durability?: "wal-fsync" | "full";
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  process.env.AUTH_SECRET = TEST_SECRET;
  resetEnvForTests();
  const dir = mkdtempSync(path.join(tmpdir(), "callboard-ingest-"));
  const file = path.join(dir, "warehouse.db");
  const db = openDatabase(file);
  const appPk: Record<string, number> = {};
  appPk.acme = (await addApp(db, {
    appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001",
    webhookId: "wh-callboard", webhookName: "Callboard", webhookUseBasicAuth: true, webhookUsername: HOOK_USER, webhookPassword: HOOK_PASSWORD,
  })).pk;
  appPk.open = (await addApp(db, { appId: "open-app", name: "Open", region: "eu", apiKey: "key-open-0002", webhookUseBasicAuth: false })).pk;
  appPk.off = (await addApp(db, {
    appId: "off-app", name: "Off", region: "in", apiKey: "key-off-0003", webhookEnabled: false,
    webhookUseBasicAuth: true, webhookUsername: HOOK_USER, webhookPassword: HOOK_PASSWORD,
  })).pk;
  const ingestSqlite = openIngestConnection(file);
  const { durability = "wal-fsync", ...ingestOptions } = options;
  if (durability === "full") ingestSqlite.pragma("synchronous = FULL");
  const ingestor = createIngestor(ingestSqlite, { ...ingestOptions, syncer: durability === "wal-fsync" ? new WalSyncer(file) : undefined });
  const handle = createIngestHttpHandler(() => ingestor);
  const server = createServer((req, res) => {
    if (!handle(req, res)) {
      res.writeHead(418).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    dir, file, db, ingestSqlite, ingestor, server, baseUrl: `http://127.0.0.1:${port}`, appPk,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      ingestor.close();
      ingestSqlite.close();
      db.$client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: { error?: { code: string; message: string; field?: string }; status?: string } | null;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Send the body chunked (no Content-Length). */
  chunked?: boolean;
}

/** One HTTP request with full control over bytes and headers (fetch would add its own). */
export function send(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const url = new URL(req.path, baseUrl);
  const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, "utf8");
  const headers: Record<string, string | number> = { ...req.headers };
  if (body && !req.chunked) headers["Content-Length"] = body.length;
  return new Promise((resolve, reject) => {
    const r = httpRequest(url, { method: req.method ?? "POST", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: RawResponse["json"] = null;
        try {
          json = JSON.parse(text) as RawResponse["json"];
        } catch {
          json = null;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    r.on("error", reject);
    if (body) r.write(body);
    r.end();
  });
}

export const jsonHeaders = (auth: string | null = AUTH): Record<string, string> => ({
  "Content-Type": "application/json",
  ...(auth ? { Authorization: auth } : {}),
});

export function postJson(baseUrl: string, appId: string, payload: unknown, auth: string | null = AUTH): Promise<RawResponse> {
  return send(baseUrl, { path: `/api/webhooks/${appId}`, headers: jsonHeaders(auth), body: JSON.stringify(payload) });
}
