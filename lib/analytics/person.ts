/**
 * The participants reports' `person` search: a uid matches when it contains the text,
 * ASCII letters compared without case. Only ASCII is folded because ClickHouse's
 * `positionCaseInsensitive` folds only ASCII: both engines then find the same rows
 * (a uid is an id, seldom anything but ASCII).
 */
const foldAscii = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** A test of uids for `person` (undefined: every uid matches). */
export function personMatcher(person: string | undefined): ((uid: string) => boolean) | undefined {
  if (person === undefined || person === "") return undefined;
  const needle = foldAscii(person);
  return (uid) => foldAscii(uid).includes(needle);
}
