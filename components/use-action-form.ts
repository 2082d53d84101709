"use client";

import { startTransition, useActionState, useEffect, useRef, type FormEvent } from "react";
import type { ActionState } from "@/lib/auth/route-support";

/**
 * Submits a server action without React's automatic form reset, so a refused form keeps
 * what was typed; a successful one is cleared when `resetOnOk`.
 */
export function useActionForm(action: (prev: ActionState, form: FormData) => Promise<ActionState>, resetOnOk: boolean) {
  const [state, run, pending] = useActionState(action, {});
  const ref = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (state.ok && resetOnOk) ref.current?.reset();
  }, [state, resetOnOk]);
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    startTransition(() => run(data));
  };
  return { state, pending, ref, onSubmit };
}
