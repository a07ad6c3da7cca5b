/**
 * The create body's `parameters` (DESIGN.md §2) as typed options. Clients send booleans as
 * JSON booleans or as the strings "true"/"false"; anything else is a clear error.
 */
import { MediaError } from '../types.js';

export function booleanParameter(parameters: Record<string, unknown>, name: string, fallback: boolean): boolean {
  const value = parameters[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new MediaError(`parameter ${name} must be a boolean, got ${JSON.stringify(value)}`);
}

export function integerParameter(parameters: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const value = parameters[name];
  if (value === undefined || value === null) return fallback;
  const number = typeof value === 'string' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < min || number > max) {
    throw new MediaError(`parameter ${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return number;
}

export function enumParameter<T extends string>(parameters: Record<string, unknown>, name: string, allowed: readonly T[], fallback: T): T {
  const value = parameters[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new MediaError(`parameter ${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
}

/** The file of a slot, or undefined when the client did not send that slot. */
export function slotFile<T extends { slotName: string }>(files: readonly T[], slotName: string): T | undefined {
  return files.find((file) => file.slotName === slotName);
}
