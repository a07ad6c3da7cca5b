/**
 * The batcher behind GET /jobs/{id}: reads asked for together go out as one statement, one
 * statement at a time; a failed statement fails exactly its own reads and the next ones work.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReadBatcher } from '../../src/repositories/read-batcher.js';

/** A store of squares whose statements the test can inspect and make fail. */
function squares(options: { maxInFlight: number; maxBatch: number }) {
  const statements: number[][] = [];
  let inFlight = 0;
  let maxSeenInFlight = 0;
  let failNext = false;
  const batcher = new ReadBatcher<number, number>(
    async (keys) => {
      statements.push(keys);
      inFlight++;
      maxSeenInFlight = Math.max(maxSeenInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight--;
      if (failNext) {
        failNext = false;
        throw new Error('connection lost');
      }
      return new Map(keys.filter((key) => key >= 0).map((key) => [String(key), key * key]));
    },
    String,
    options,
  );
  return { batcher, statements, maxSeenInFlight: () => maxSeenInFlight, failNextStatement: () => (failNext = true) };
}

describe('ReadBatcher', () => {
  it('sends reads asked for in the same turn as one statement, and each gets its own value', async () => {
    const store = squares({ maxInFlight: 1, maxBatch: 100 });
    const values = await Promise.all([3, 4, -1, 3].map((key) => store.batcher.read(key)));
    assert.deepEqual(values, [9, 16, undefined, 9]);
    assert.deepEqual(store.statements, [[3, 4, -1, 3]]);
  });

  it('keeps to one statement out at a time; what arrives meanwhile goes in the next', async () => {
    const store = squares({ maxInFlight: 1, maxBatch: 100 });
    const first = store.batcher.read(1);
    await new Promise((resolve) => setImmediate(resolve)); // the first statement is out now
    const later = [2, 5, 7].map((key) => store.batcher.read(key));
    assert.deepEqual(await Promise.all([first, ...later]), [1, 4, 25, 49]);
    assert.deepEqual(store.statements, [[1], [2, 5, 7]]);
    assert.equal(store.maxSeenInFlight(), 1);
  });

  it('splits a turn larger than maxBatch into several statements', async () => {
    const store = squares({ maxInFlight: 2, maxBatch: 3 });
    const keys = [0, 1, 2, 3, 4, 5, 6];
    assert.deepEqual(await Promise.all(keys.map((key) => store.batcher.read(key))), keys.map((key) => key * key));
    assert.deepEqual(store.statements, [[0, 1, 2], [3, 4, 5], [6]]);
    assert.equal(store.maxSeenInFlight(), 2);
  });

  it('fails the reads of a failed statement, and only those; later reads work', async () => {
    const store = squares({ maxInFlight: 1, maxBatch: 100 });
    store.failNextStatement();
    const failed = await Promise.allSettled([1, 2].map((key) => store.batcher.read(key)));
    assert.deepEqual(failed.map((outcome) => outcome.status), ['rejected', 'rejected']);
    assert.match(String((failed[0] as PromiseRejectedResult).reason), /connection lost/);
    assert.equal(await store.batcher.read(6), 36);
  });
});
