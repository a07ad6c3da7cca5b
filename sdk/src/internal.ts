/**
 * Helpers shared by the client and its resources. They live here, not in client.ts, so that a
 * resource never imports the module that imports it (no import cycle).
 */
import { APIUserAbortError } from './errors.js';

/** Sleeps, waking early (with APIUserAbortError) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError());
    const onAbort = () => {
      clearTimeout(id);
      reject(new APIUserAbortError());
    };
    const id = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
