/**
 * The check every shipped-model test starts with: the weights on disk are the ones the
 * descriptor names, byte for byte (so a test fails when they are removed or altered).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BUILT_IN_MODELS_DIR, type LoadedModel } from '../src/detectors/model-pack.js';

/** Asserts the built-in model file matches its descriptor's sha256; returns its size in bytes. */
export async function assertShippedWeights(model: LoadedModel): Promise<number> {
  const bytes = await readFile(join(BUILT_IN_MODELS_DIR, model.descriptor.model));
  assert.equal(createHash('sha256').update(bytes).digest('hex'), model.descriptor.sha256);
  return bytes.length;
}
