import { randomUUID } from 'node:crypto';

/**
 * Where services get the time and new ids. Injected, so a service test can hold time still or
 * move it on (upload URLs, sessions and key caches expire) and predict the ids it will see.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}
export type IdSource = () => string;
export interface Sources {
  clock: Clock;
  ids: IdSource;
}

export const systemClock: Clock = { now: () => Date.now() };
export const SYSTEM_SOURCES: Sources = { clock: systemClock, ids: () => randomUUID() };

/** Timestamps are ISO 8601 UTC with milliseconds everywhere (DESIGN.md §2). */
export const isoAt = (milliseconds: number): string => new Date(milliseconds).toISOString();
export const nowIso = (clock: Clock = systemClock): string => isoAt(clock.now());
export const isoIn = (milliseconds: number, clock: Clock = systemClock): string => isoAt(clock.now() + milliseconds);
export const newId = (): string => randomUUID();
