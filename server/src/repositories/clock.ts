import { randomUUID } from 'node:crypto';

/** Timestamps are ISO 8601 UTC with milliseconds everywhere (DESIGN.md §2). */
export const nowIso = (): string => new Date().toISOString();
export const isoIn = (milliseconds: number): string => new Date(Date.now() + milliseconds).toISOString();
export const newId = (): string => randomUUID();
