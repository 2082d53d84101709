/**
 * Webhook deliveries shaped as the seed documents them (Events: envelope, triggers and
 * shared object shapes), for the ingest's tests and benchmark. The emulator's sender
 * (lib/emulator) produces realistic sequences; these are small and exact.
 */
export interface EnvelopeInit {
  appId: string;
  webhook?: string;
  region?: string;
}

export type Delivery = Record<string, unknown>;

export function envelope(init: EnvelopeInit, trigger: string, data: Record<string, unknown>, type?: "call" | "meet"): Delivery {
  return { trigger, data, appId: init.appId, region: init.region ?? "us", webhook: init.webhook ?? "wh-callboard", ...(type ? { type } : {}) };
}

const user = (uid: string) => ({ uid, name: uid.charAt(0).toUpperCase() + uid.slice(1), avatar: "", status: "online", role: "default", lastActiveAt: 1_700_000_000 });

export function messageSent(init: EnvelopeInit, id: string, sentAt = 1_700_000_000, text = "hello"): Delivery {
  return envelope(init, "message_sent", {
    message: {
      id, conversationId: "alice_user_bob", sender: "alice", receiver: "bob", receiverType: "user",
      category: "message", type: "text", sentAt, updatedAt: sentAt,
      data: { text, entities: { sender: { entity: user("alice"), entityType: "user" }, receiver: { entity: user("bob"), entityType: "user" } } },
    },
  });
}

export function reactionAdded(init: EnvelopeInit, id: string, reactedAt = 1_700_000_100): Delivery {
  return envelope(init, "message_reaction_added", { reaction: { id, messageId: "m-1", reaction: "👍", uid: "bob", reactedAt, reactedBy: user("bob") } });
}

export function connectionChanged(init: EnvelopeInit, uid: string, timestampMs: number, action = "disconnected"): Delivery {
  return envelope(init, "user_connection_status_changed", {
    timestamp: timestampMs, user: user(uid), status: action === "connected" ? "online" : "offline", userPresenceChanged: true,
    currentConnection: { action, appInfo: { version: "4.0.0", apiVersion: "v3.0", origin: "web", uts: timestampMs, clientIp: "192.0.2.1" }, platform: "web", userAgent: "test", connectedAt: timestampMs - 60_000 },
  });
}

export function recordingGenerated(init: EnvelopeInit, sessionId: string, startTime: number | string, duration = "61.5"): Delivery {
  return envelope(init, "recording_generated", {
    recordingDate: "2023-11-14", duration, startTime: String(startTime), sessionId,
    recording_url: `https://recordings.example.test/${encodeURIComponent(sessionId)}/${startTime}.mp4`,
  });
}

export interface OccupantInit {
  name: string;
  joined_at: number;
  left_at?: number;
  audio_call?: "true" | "false";
}

const occupant = (o: OccupantInit) => ({ audio_call: "false", ...o });

export function callInitiated(init: EnvelopeInit, sessionId: string, initiatedAt: number, by = "alice", to = "bob"): Delivery {
  return envelope(init, "call_initiated", {
    call: {
      id: `msg-${sessionId}`, conversationId: `${by}_user_${to}`, sender: by, receiver: to, receiverType: "user",
      category: "call", type: "audio", sentAt: initiatedAt, updatedAt: initiatedAt,
      data: {
        action: "initiated",
        entities: {
          by: { entity: user(by), entityType: "user" },
          for: { entity: user(to), entityType: "user" },
          on: { entity: { sessionid: sessionId, status: "initiated", initiatedAt, joinedAt: initiatedAt }, entityType: "call" },
        },
        resource: "web",
      },
    },
  }, "call");
}

const twin = (kind: "call" | "meet", step: string) => (kind === "meet" ? `meeting_${step}` : `call_${step}`);

export function sessionStarted(init: EnvelopeInit, sessionId: string, createdAt: number, kind: "call" | "meet" = "call"): Delivery {
  return envelope(init, twin(kind, "started"), { created_at: createdAt, sessionId }, kind);
}

export function participantJoined(init: EnvelopeInit, sessionId: string, o: OccupantInit, kind: "call" | "meet" = "call"): Delivery {
  return envelope(init, twin(kind, "participant_joined"), {
    occupant: occupant(o), sessionId,
    initial_config: { is_video_muted: "false", start_recording_on_call_start: "false", is_audio_muted: "false", is_audio_only: "false", call_version: "4", sdk: "web", mode: "default", platform: "web" },
  }, kind);
}

export function participantLeft(init: EnvelopeInit, sessionId: string, o: OccupantInit, kind: "call" | "meet" = "call"): Delivery {
  return envelope(init, twin(kind, "participant_left"), { occupant: occupant(o), sessionId }, kind);
}

export function sessionEnded(init: EnvelopeInit, sessionId: string, createdAt: number, destroyedAt: number, occupants: OccupantInit[], kind: "call" | "meet" = "call"): Delivery {
  return envelope(init, twin(kind, "ended"), { all_occupants: occupants.map(occupant), destroyed_at: destroyedAt, created_at: createdAt, sessionId }, kind);
}
