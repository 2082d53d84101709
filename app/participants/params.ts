import { createLoader, parseAsString, parseAsStringLiteral } from "nuqs/server";

/**
 * The Participants page's own query names, beside the dashboard's filters: `view` (one row
 * per app and uid, or per uid across apps) and `person`, the search that finds a person's
 * own row(s) (the API's `person`: the uid contains the text). Not carried to other pages.
 */
export const PARTICIPANT_VIEWS = ["per-app", "across-apps"] as const;
export const participantParsers = {
  view: parseAsStringLiteral(PARTICIPANT_VIEWS).withDefault("per-app"),
  person: parseAsString,
};
export const loadParticipantParams = createLoader(participantParsers);

/** The API query's extra names of this page (none when the search is empty). */
export function personExtra(person: string | null): Record<string, string> {
  const text = person?.trim();
  return text ? { person: text } : {};
}
