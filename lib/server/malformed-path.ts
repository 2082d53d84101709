import type { IncomingMessage, ServerResponse } from "node:http";
import { logger } from "@/lib/log/logger";
import { sendJsonError } from "./json-answer";

/**
 * A path whose percent-encoding does not decode (`%FF`, a lone surrogate `%ED%A0%80`,
 * a stray `%`) is answered 400 in JSON here, in front of the ingest, the lean API path
 * and Next — whose router threw on it and answered a plain-text 500, logging nothing.
 * Only the path counts: a malformed query value is the route's own 400.
 */
export function isMalformedPath(url: string): boolean {
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  if (!path.includes("%")) return false;
  try {
    decodeURIComponent(path);
    return false;
  } catch {
    return true;
  }
}

/** True when the request was answered (its path does not decode). */
export function answerMalformedPath(req: IncomingMessage, res: ServerResponse): boolean {
  const url = req.url ?? "/";
  if (!isMalformedPath(url)) return false;
  const q = url.indexOf("?");
  // The path only (a query may carry anything), cut short: it is the client's text.
  logger.warn({ method: req.method, path: (q === -1 ? url : url.slice(0, q)).slice(0, 300), peer: req.socket.remoteAddress }, "request refused: malformed percent-encoding in the path");
  sendJsonError(req, res, 400, "bad_request", "The request path holds malformed percent-encoding (each % must start a valid UTF-8 escape such as %20).");
  return true;
}
