/**
 * Links to addresses that came from outside (a webhook's `recording_url`): only http
 * and https, never `javascript:`, `data:` or any other scheme a browser would run or
 * render. Parsed with the WHATWG URL parser, the browser's own, so leading spaces,
 * tabs or upper case cannot make a string read differently here and in the browser.
 * No server imports: safe in the browser.
 */
const LINK_PROTOCOLS = new Set(["http:", "https:"]);

/** The address as a browser would follow it, or null when it is not an absolute http(s) URL. */
export function httpUrlOrNull(value: unknown): string | null {
  if (typeof value !== "string" || value === "") return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  return LINK_PROTOCOLS.has(url.protocol) && url.hostname !== "" ? url.href : null;
}

/** The scheme of a refused address, short and printable, for an error message. */
export function schemeOf(value: string): string {
  const m = /^\s*([a-z][a-z0-9+.-]{0,19}):/i.exec(value);
  return m ? `${m[1].toLowerCase()}:` : "no scheme";
}
