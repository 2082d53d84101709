/**
 * Hand-written Calls API records, each a quirk the platform or a hostile upstream may
 * send: strings for numbers, escapes (in keys too), unicode, unknown and repeated keys,
 * nested values, missing and null fields, and records that must be refused. Used to prove
 * that the byte reader and the JSON path read them alike.
 */
export const HOSTILE_RECORDS: string[] = [
  // Strings for numbers, decimals, exponents, -0, long digits, padded strings.
  `{"sessionId":"n1","initiatedAt":"1700000000","startedAt":1700000005.0,"endedAt":1.700000100e9,"totalAudioMinutes":"12.5","totalVideoMinutes":-0,"totalDurationInMinutes":" 3.25 ","totalDuration":"01:02:03","totalParticipants":"2.9","hasRecording":"yes","participants":[{"uid":"a","totalAudioMinutes":"1e1","totalDuration":"00:05:00","joinedAt":"1700000005","leftAt":1700000100.5,"isJoined":"1"},{"uid":"b","totalDuration":12345678901234567890,"totalVideoMinutes":0.1e-2,"isJoined":0}]}`,
  // Escapes everywhere: in values, in keys (a known key written with an escape), in unknown keys.
  `{"session\\u0049d":"esc\\"aped\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00","initiatedAt":1700000000,"type":"vid\\u0065o","participants":[{"\\u0075id":"say \\"hi\\"","n\\u00f6te":"x","platform":"ios"}]}`,
  // Unicode: emoji, umlauts, CJK in values and keys, a non-ASCII unknown call key.
  `{"sessionId":"jürgen-😀","initiatedAt":1700000000,"initiator":"ß","receiver":"日本","größe":{"ä":["ö"]},"participants":[{"uid":"🦄unicorn","state":"ongoing","größe":"groß","deviceId":"é"}]}`,
  // Unknown keys: nested objects and arrays, at the call and in participants, index-like, __proto__.
  `{"sessionId":"u1","initiatedAt":1700000000,"region":"eu","tags":["a",{"b":[1,2,{"c":null}]}],"participants":[{"uid":"p","extra":{"network":"wifi","x":[true,false,null]},"2":"two","10":"ten","__proto__":{"polluted":1},"platform":"android"}]}`,
  `{"sessionId":"u2","initiatedAt":1700000000,"participants":[{"uid":"p","__proto__":5,"zeta":1,"alpha":2}]}`,
  // Repeated keys: the last value wins (a known one, an unknown one, participants itself).
  `{"sessionId":"r1","status":"ongoing","initiatedAt":1700000000,"status":"ended","participants":[{"uid":"x"}],"participants":[{"uid":"y","platform":"a","state":"s","platform":"b","state":"t"}]}`,
  `{"sessionId":"r2","initiatedAt":1700000000,"participants":[{"uid":"x","platform":"p"}],"participants":null}`,
  // Missing and null optional fields, empty participants, empty strings, whitespace everywhere.
  ` {  "sessionId" : "m1" , "startedAt" : 1700000000 , "mid" : null , "type" : "" , "participants" : [ ] , "endedAt" : null } `,
  `{"sessionId":"m2","initiatedAt":1700000000}`,
  `{\n\t"sessionId": "m3",\r\n\t"initiatedAt": 1700000000,\n\t"participants": [\n\t\t{ "uid": "p1" , "joinedAt" : 0 },\n\t\t{"uid":"p2","leftAt":-5}\n\t]\n}`,
  // Numbers as ids, booleans as numbers.
  `{"sessionId":12345,"initiatedAt":1700000000,"hasRecording":1,"participants":[{"uid":42,"deviceId":9876543210,"mid":7,"isJoined":true}]}`,
  // Invalid records: each must be refused with today's reason.
  `{"initiatedAt":1700000000}`,
  `{"sessionId":"  ","initiatedAt":1700000000}`,
  `{"sessionId":"i1"}`,
  `{"sessionId":"i2","initiatedAt":1700000000,"type":{"value":"audio"}}`,
  `{"sessionId":"i3","initiatedAt":1700000000,"participants":"[{\\"uid\\":"}`,
  `{"sessionId":"i4","initiatedAt":1700000000,"participants":[{"uid":"a"},"b"]}`,
  `{"sessionId":"i5","initiatedAt":1700000000,"participants":[{"uid":null}]}`,
  `{"sessionId":"i6","initiatedAt":"soon"}`,
  `{"sessionId":"i7","initiatedAt":1700000000,"totalDuration":"1:2:3:4"}`,
  `{"sessionId":"i8","initiatedAt":1700000000,"hasRecording":"maybe"}`,
  `{"sessionId":"i9","initiatedAt":1700000000,"participants":[{"uid":"a","totalDuration":[1]}]}`,
  `{"sessionId":"i10","initiatedAt":[1700000000]}`,
  `null`,
  `"a string"`,
  `[{"sessionId":"in-an-array"}]`,
  `42`,
  `{}`,
];
