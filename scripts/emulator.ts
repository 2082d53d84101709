// Runs the platform emulator in the foreground. Prints ONE JSON line on stdout once it
// listens (apps, keys, URLs) so that scripts and spawnEmulator() can parse it.
import { CLI_USAGE, CliError, parseCli } from "../lib/emulator/cli-args";
import { startEmulator } from "../lib/emulator/server";

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseCli(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n${CLI_USAGE}\n`);
    process.exit(2);
  }
  if (parsed.help) {
    process.stdout.write(`${CLI_USAGE}\n`);
    return;
  }
  const emu = await startEmulator(parsed.options);
  process.stdout.write(
    `${JSON.stringify({
      url: emu.url,
      apps: emu.apps.map((a) => ({ appId: a.appId, apiKey: a.apiKey, region: a.region, calls: a.calls, callsUrl: a.callsUrl })),
      management: emu.management,
    })}\n`,
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`emulator: ${signal}, closing\n`);
    // A hung close must not keep the process alive.
    setTimeout(() => process.exit(0), 3000).unref();
    void emu.close().then(() => process.exit(0));
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((e: unknown) => {
  process.stderr.write(`emulator failed: ${e instanceof CliError || e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
