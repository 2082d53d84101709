/**
 * The dashboard's two kinds of time, said the same way on every page: participant
 * minutes (every participant's time in the calls, summed; written "70h 13m") and a
 * call's duration (how long it lasted; written "17m 21s").
 */
export const UNITS_HINT = "Participant minutes add up every participant's time in the calls, always written in hours and minutes (70h 13m); a duration is how long a call lasted (17m 21s).";
