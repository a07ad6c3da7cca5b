/**
 * The SDK's task-type and result types are generated from the catalogue and the result
 * schemas: the committed sdk/src/generated.ts must be what they say now.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { renderSdkTypes, SDK_GENERATED_FILE } from '../../src/schemas/sdk-types.js';
import { TASK_TYPES } from '../../src/detectors/catalogue.js';

test('sdk/src/generated.ts is up to date with the catalogue and result schemas (npm run generate:sdk)', async () => {
  const committed = await readFile(SDK_GENERATED_FILE, 'utf8');
  assert.equal(committed, await renderSdkTypes(), 'run `npm run generate:sdk` and commit sdk/src/generated.ts');
  for (const taskType of TASK_TYPES) assert.ok(committed.includes(`'${taskType.slug}': ${taskType.result};`), taskType.slug);
});
