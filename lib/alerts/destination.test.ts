import type { LookupAddress } from "node:dns";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpError } from "@/lib/http/errors";
import { assertDestinationAllowed, blockedKind, describeDestinationUrl, type Resolver } from "./destination";
import { postJson } from "./outbox";
import { startReceiver, type Receiver } from "./test-receiver";

/**
 * SSRF: a notification never reaches the server's own network unless the admin allowed
 * it for that destination — by literal address, by a name resolving there, or by a name
 * that changes its answer between the check and the connection (DNS rebinding).
 */

const fakeDns = (table: Record<string, string[]>): Resolver => async (hostname) => {
  const answers = table[hostname];
  if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
  return answers.map((address): LookupAddress => ({ address, family: address.includes(":") ? 6 : 4 }));
};

async function refusal(url: string, resolver?: Resolver, allowPrivate = false): Promise<string> {
  try {
    await assertDestinationAllowed(url, allowPrivate, resolver);
  } catch (err) {
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(400);
    expect((err as HttpError).details).toEqual({ parameter: "destination.url" });
    return (err as HttpError).message;
  }
  throw new Error(`${url} was allowed`);
}

describe("address ranges", () => {
  it.each([
    ["127.0.0.1", "loopback"], ["127.255.10.1", "loopback"], ["::1", "loopback"], ["0:0:0:0:0:0:0:1", "loopback"],
    ["0.0.0.0", "unspecified"], ["::", "unspecified"],
    ["10.1.2.3", "private"], ["172.16.0.1", "private"], ["172.31.255.254", "private"], ["192.168.1.1", "private"], ["100.64.0.1", "private"],
    ["fc00::1", "private"], ["fd12:3456::1", "private"],
    ["169.254.169.254", "link-local"], ["fe80::1", "link-local"], ["fe80::abcd:1%eth0".split("%")[0], "link-local"],
    ["224.0.0.1", "multicast"], ["ff02::1", "multicast"], ["255.255.255.255", "reserved"],
    // IPv6 spellings of IPv4 addresses inside the network.
    ["::ffff:127.0.0.1", "loopback"], ["::ffff:7f00:1", "loopback"], ["::ffff:10.0.0.1", "private"], ["::ffff:169.254.169.254", "link-local"],
    ["::127.0.0.1", "reserved"], ["64:ff9b::7f00:1", "reserved"], ["2002:7f00:1::1", "reserved"], ["2001:0:4136:e378::1", "reserved"],
  ])("%s is %s", (address, kind) => {
    expect(blockedKind(address)).toBe(kind);
  });

  it.each(["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "2a00:1450:4001::200e"])("%s is public", (address) => {
    expect(blockedKind(address)).toBeNull();
  });
});

describe("destination check at save time", () => {
  it.each([
    ["ftp://example.com/hook", /http or https, not ftp/],
    ["file:///etc/passwd", /http or https, not file/],
    ["gopher://example.com/", /http or https, not gopher/],
    ["javascript:alert(1)", /http or https/],
    ["data:text/plain,hi", /http or https/],
    ["not a url", /not a valid URL/],
  ])("refuses %s", async (url, message) => {
    expect(await refusal(url)).toMatch(message);
  });

  it.each([
    ["http://127.0.0.1:8080/hook", "loopback"],
    ["http://127.1/", "loopback"],
    ["http://0x7f000001/", "loopback"],
    ["http://2130706433/", "loopback"],
    ["http://[::1]:3000/", "loopback"],
    ["http://[::ffff:127.0.0.1]/", "loopback"],
    ["http://0.0.0.0/", "unspecified"],
    ["https://10.0.0.8/hook", "private"],
    ["https://192.168.0.10/", "private"],
    ["http://169.254.169.254/latest/meta-data/", "link-local"],
    ["http://[fe80::1]/", "link-local"],
    ["http://[fd00::5]/", "private"],
  ])("refuses the literal address in %s (%s)", async (url, kind) => {
    expect(await refusal(url)).toContain(`a ${kind} address`);
  });

  it("refuses names that resolve into the network, by the system resolver and by any answer", async () => {
    expect(await refusal("http://localhost:9/hook")).toMatch(/localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    const dns = fakeDns({
      "internal.example": ["10.20.30.40"],
      "metadata.example": ["169.254.169.254"],
      "v6.example": ["fd00::1"],
      "mixed.example": ["93.184.216.34", "192.168.1.5"],
      "mapped.example": ["::ffff:127.0.0.1"],
    });
    expect(await refusal("https://internal.example/hook", dns)).toContain("internal.example resolves to 10.20.30.40, a private address");
    expect(await refusal("https://metadata.example/", dns)).toContain("link-local");
    expect(await refusal("https://v6.example/", dns)).toContain("fd00::1, a private address");
    expect(await refusal("https://mixed.example/", dns)).toContain("192.168.1.5");
    expect(await refusal("https://mapped.example/", dns)).toContain("loopback");
    expect(await refusal("https://nowhere.example/", dns)).toContain("does not resolve");
  });

  it("allows public destinations, and private ones only when the admin allows them", async () => {
    const dns = fakeDns({ "hooks.example": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"], "internal.example": ["10.20.30.40"] });
    await expect(assertDestinationAllowed("https://hooks.example/services/T000/B000/XXXX", false, dns)).resolves.toBeUndefined();
    await expect(assertDestinationAllowed("https://internal.example/hook", true, dns)).resolves.toBeUndefined();
    await expect(assertDestinationAllowed("http://127.0.0.1:9/", true, dns)).resolves.toBeUndefined();
    // The scheme rule has no exception.
    expect(await refusal("ftp://internal.example/", dns, true)).toMatch(/http or https/);
  });

  it("shows only the origin and the last four characters of a URL", () => {
    expect(describeDestinationUrl("https://hooks.example/services/T000/B000/abcdWXYZ")).toEqual({ origin: "https://hooks.example", hint: "…WXYZ" });
  });
});

describe("the sender connects to the addresses it checked", () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  it("a name that rebinds to loopback after the check never gets a request", async () => {
    let asked = 0;
    // First answer public (the save-time check passes), then loopback: the classic rebinding.
    const rebinding: Resolver = async () => [{ address: asked++ === 0 ? "93.184.216.34" : "127.0.0.1", family: 4 }];
    const url = `http://rebind.example:${receiver.port}/hook`;
    await expect(assertDestinationAllowed(url, false, rebinding)).resolves.toBeUndefined();
    const before = receiver.received.length;
    const result = await postJson(url, {}, "{}", { allowPrivate: false, resolver: rebinding });
    expect(result).toMatchObject({ ok: false, status: null });
    expect(result.error).toContain("destination refused: rebind.example resolves to 127.0.0.1, a loopback address");
    expect(receiver.received.length).toBe(before);
  });

  it("literal loopback addresses are refused by the sender too", async () => {
    const before = receiver.received.length;
    expect((await postJson(receiver.url, {}, "{}", { allowPrivate: false })).error).toContain("loopback");
    expect((await postJson(`http://[::ffff:127.0.0.1]:${receiver.port}/`, {}, "{}", { allowPrivate: false })).error).toContain("loopback");
    expect(receiver.received.length).toBe(before);
  });

  it("with the allowance, the request goes to the address the lookup answered (not to a second lookup)", async () => {
    // `receiver.test` exists in no DNS: the request can only arrive through the guarded lookup's answer.
    const dns = fakeDns({ "receiver.test": ["127.0.0.1"] });
    const result = await postJson(`http://receiver.test:${receiver.port}/via-name`, { "x-probe": "1" }, '{"a":1}', { allowPrivate: true, resolver: dns });
    expect(result).toEqual({ ok: true, status: 200, error: null });
    const last = receiver.received.at(-1)!;
    expect(last.path).toBe("/via-name");
    expect(last.headers.host).toBe(`receiver.test:${receiver.port}`);
    expect(last.body).toBe('{"a":1}');
  });

  it("redirects are not followed: a 3xx is a failed attempt", async () => {
    receiver.answers = [302];
    const before = receiver.received.length;
    const result = await postJson(receiver.url, {}, "{}", { allowPrivate: true });
    expect(result).toEqual({ ok: false, status: 302, error: "the destination answered 302" });
    expect(receiver.received.length).toBe(before + 1);
  });
});
