/** Media type is JSON (`application/json` or `application/*+json`) and any charset is UTF-8. */
export function isJsonContentType(header: string | null | undefined): boolean {
  if (!header) return false;
  const [type, ...params] = header.split(";").map((p) => p.trim().toLowerCase());
  if (type !== "application/json" && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) return false;
  const charset = params.find((p) => p.startsWith("charset="));
  return !charset || /^charset="?utf-?8"?$/.test(charset);
}
