import { AsyncLocalStorage } from "node:async_hooks";
import { REQUEST_CONTEXT_KEY, type RequestContext } from "@/lib/http/request-id";

/** The one store of the process (lib/http/request-id.ts reads it through the global symbol). */
function store(): AsyncLocalStorage<RequestContext> {
  const holder = globalThis as { [REQUEST_CONTEXT_KEY]?: AsyncLocalStorage<RequestContext> };
  holder[REQUEST_CONTEXT_KEY] ??= new AsyncLocalStorage<RequestContext>();
  return holder[REQUEST_CONTEXT_KEY];
}

/** Runs `answer` (and everything it starts) as the request `requestId`. */
export function runWithRequestId<T>(requestId: string, answer: () => T): T {
  return store().run({ requestId }, answer);
}
