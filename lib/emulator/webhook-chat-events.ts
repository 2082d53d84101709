// Chat webhook builders, one per chat trigger of the seed's trigger table, with the
// payload shapes the seed gives (message, reaction, users/by, group/members, receipts,
// user_connection_status_changed).
import { hashString, int, mix, mulberry32, pick, type Rng } from "./prng";
import type { JsonObject } from "./types";
import { conversationIdOf, envelope, userObject, type Delivery, type EnvelopeContext } from "./webhook-types";

export const CHAT_TRIGGERS = [
  "message_sent", "message_edited", "message_deleted", "message_reaction_added", "message_reaction_removed",
  "user_blocked", "user_unblocked", "user_mentioned",
  "group_created", "group_updated", "group_deleted", "group_member_joined", "group_member_left",
  "group_member_added", "group_member_kicked", "group_member_banned", "group_member_unbanned",
  "group_member_scope_changed", "group_owner_transferred",
  "user_connection_status_changed", "message_delivery_receipt", "message_read_receipt",
] as const;
export type ChatTrigger = (typeof CHAT_TRIGGERS)[number];

export interface ChatEventOptions {
  ctx: EnvelopeContext;
  /** Event time, epoch seconds. */
  at: number;
  /** At least three uids to draw senders, receivers and members from. */
  users: readonly string[];
  group?: string;
  seed?: number;
}

const TEXTS = ["hi there", "can we move the call to 3pm?", "👍", "Grüße aus Köln", "see attached", "=SUM(A1:A2)", "ok, \"quoted\", done"];
const REACTIONS = ["👍", "❤️", "😂", "🎉", "😮"];

function user(uid: string, at: number): JsonObject {
  return userObject(uid, uid, at);
}

function groupObject(guid: string, owner: string, at: number, extra: JsonObject = {}): JsonObject {
  return { guid, name: guid, type: "public", scope: "admin", membersCount: 3, joinedAt: at - 86_400, hasJoined: true, conversationId: `group_${guid}`, createdAt: at - 864_000, owner, onlineMembersCount: 1, ...extra };
}

function members(uids: readonly string[], at: number, extra: (uid: string) => JsonObject = () => ({})): JsonObject {
  return Object.fromEntries(uids.map((u) => [u, { ...user(u, at), ...extra(u) }]));
}

function message(rng: Rng, o: ChatEventOptions, sender: string, receiver: string, receiverType: "user" | "group", text: string): JsonObject {
  return {
    id: String(int(rng, 100_000, 9_999_999)),
    conversationId: conversationIdOf(sender, receiver, receiverType),
    sender,
    receiverType,
    receiver,
    category: "message",
    type: "text",
    data: {
      text,
      entities: { sender: { entity: user(sender, o.at), entityType: "user" }, receiver: receiverType === "user" ? { entity: user(receiver, o.at), entityType: "user" } : { entity: groupObject(receiver, sender, o.at), entityType: "group" } },
    },
    sentAt: o.at,
    updatedAt: o.at,
  };
}

function actionOn(o: ChatEventOptions, action: "edited" | "deleted", by: string, msg: JsonObject): JsonObject {
  const receiver = String(msg.receiver);
  const forEntity = msg.receiverType === "group" ? { entity: groupObject(receiver, by, o.at), entityType: "group" } : { entity: user(receiver, o.at), entityType: "user" };
  return {
    id: String(Number(msg.id) + 1),
    conversationId: msg.conversationId,
    sender: by,
    receiverType: msg.receiverType,
    receiver,
    category: "action",
    type: "message",
    data: { action, entities: { by: { entity: user(by, o.at), entityType: "user" }, for: forEntity, on: { entity: msg, entityType: "message" } } },
    sentAt: o.at,
    updatedAt: o.at,
  };
}

function receipt(o: ChatEventOptions, action: "delivered" | "read", reader: string, sender: string, messageId: string): JsonObject {
  return {
    receiver: sender,
    receiverType: "user",
    type: "receipts",
    sender: reader,
    messageSender: sender,
    body: {
      action,
      messageId,
      user: { hasBlockedMe: false, blockedByMe: false, deactivatedAt: 0, uid: reader, name: reader, avatar: "", lastActiveAt: o.at, role: "default", status: "online" },
      timestamp: o.at,
    },
  };
}

export function chatEvent(trigger: ChatTrigger, o: ChatEventOptions): Delivery {
  const rng = mulberry32(mix(o.seed ?? 1, hashString(trigger), o.at));
  const [a, b, c] = [pick(rng, o.users), pick(rng, o.users), pick(rng, o.users)];
  const other = b === a ? o.users.find((u) => u !== a) ?? b : b;
  const guid = o.group ?? "sales-1";
  const at = o.at;
  let data: JsonObject;
  switch (trigger) {
    case "message_sent":
      data = { message: message(rng, o, a, other, "user", pick(rng, TEXTS)) };
      break;
    case "message_edited": {
      const m = message(rng, o, a, other, "user", pick(rng, TEXTS));
      data = { message: actionOn(o, "edited", a, { ...m, editedAt: at, editedBy: a, deliveredAt: at - 30, readAt: at - 10, sentAt: at - 60 }) };
      break;
    }
    case "message_deleted": {
      const m = message(rng, o, a, guid, "group", pick(rng, TEXTS));
      data = { message: actionOn(o, "deleted", a, { ...m, deletedAt: at, deletedBy: a, sentAt: at - 120 }) };
      break;
    }
    case "message_reaction_added":
    case "message_reaction_removed":
      data = { reaction: { id: String(int(rng, 1, 99_999)), messageId: String(int(rng, 100_000, 9_999_999)), reaction: pick(rng, REACTIONS), uid: a, reactedAt: at, reactedBy: user(a, at) } };
      break;
    case "user_blocked":
    case "user_unblocked":
      data = { users: members([other], at), by: user(a, at) };
      break;
    case "user_mentioned": {
      const m = message(rng, o, a, guid, "group", `hey <@uid:${other}> and <@uid:${c}>, see this`);
      (m.data as JsonObject).mentions = members([...new Set([other, c])], at);
      data = { message: m };
      break;
    }
    case "group_created":
      data = { group: groupObject(guid, a, at, { createdAt: at }), members: members([a, other], at) };
      break;
    case "group_updated":
      data = { group: groupObject(guid, a, at, { updatedAt: at, updatedBy: a }) };
      break;
    case "group_deleted":
      data = { group: groupObject(guid, a, at) };
      break;
    case "group_member_joined":
    case "group_member_left":
      data = { group: groupObject(guid, a, at), members: members([other], at) };
      break;
    case "group_member_added":
    case "group_member_kicked":
    case "group_member_banned":
    case "group_member_unbanned":
      data = { group: groupObject(guid, a, at), members: members([other, c].filter((u) => u !== a), at), by: user(a, at) };
      break;
    case "group_member_scope_changed":
      data = { group: groupObject(guid, a, at), members: members([other], at, () => ({ scope: "admin", oldScope: "participant" })), by: user(a, at) };
      break;
    case "group_owner_transferred":
      data = { group: groupObject(guid, other, at, { owner: other, oldOwner: a }) };
      break;
    case "user_connection_status_changed":
      // The platform sends this timestamp in epoch MILLISECONDS (seed).
      data = {
        timestamp: at * 1000 + int(rng, 0, 999),
        user: user(a, at),
        status: "offline",
        userPresenceChanged: true,
        currentConnection: {
          action: "disconnected",
          appInfo: { version: "4.0.10", apiVersion: "v3.0", origin: "https://app.example.com", uts: at * 1000, clientIp: "203.0.113.7" },
          platform: "javascript",
          userAgent: "Mozilla/5.0 (X11; Linux x86_64)",
          connectedAt: at - int(rng, 60, 7200),
        },
      };
      break;
    case "message_delivery_receipt":
      data = receipt(o, "delivered", other, a, String(int(rng, 100_000, 9_999_999)));
      break;
    case "message_read_receipt":
      data = receipt(o, "read", other, a, String(int(rng, 100_000, 9_999_999)));
      break;
  }
  return envelope(o.ctx, trigger, data, at);
}
