/**
 * Display names of the platform's enumerations (call type, mode, status, receiver type,
 * recording presence) and of the filter dimensions: what the UI and every CSV show.
 */

/** What a missing value shows. */
export const EMPTY = "—";

/** Labels of the API's enumerations. */
const LABELS: Record<string, string> = {
  audio: "Audio", video: "Video", call: "Call", meet: "Meeting", presenter: "Presenter",
  ended: "Ended", ongoing: "Ongoing", rejected: "Rejected", unanswered: "Unanswered",
  user: "User", group: "Group", true: "Recorded", false: "Not recorded", other: "Other",
  type: "Type", mode: "Mode", status: "Status", receiverType: "Receiver type", hasRecording: "Recording",
};

export function label(value: string | null | undefined): string {
  if (value === null || value === undefined || value === "") return EMPTY;
  return LABELS[value] ?? value;
}
