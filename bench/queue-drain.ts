/**
 * One drain process of bench/queue.ts: claims jobs with the real JobQueue (one UPDATE … FOR
 * UPDATE SKIP LOCKED statement) and ends each one as the worker does (fenced finish +
 * credit capture + ledger row, in one transaction), with no detector, until the queue is
 * empty. Starts at GO_AT (epoch ms) so that all drain processes begin together, and prints
 * one JSON line: {claimed, startedAt, endedAt}.
 */
import { openDatabase } from '../server/src/db/database.js';
import { JobQueue } from '../server/src/queue/job-queue.js';
import { transactionRunner } from '../server/src/repositories/index.js';
import { captureCredits } from '../server/src/services/credit.service.js';

const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL!, dataDir: '/tmp', poolSize: 2 });
const queue = new JobQueue(db.kysely, db.dialect);
const transaction = transactionRunner(db);
const workerId = `drain:${process.pid}`;
await new Promise((r) => setTimeout(r, Math.max(0, Number(process.env.GO_AT) - Date.now())));
const startedAt = Date.now();
let claimed = 0;
for (;;) {
  const job = await queue.claim(workerId, 30_000);
  if (!job) break;
  claimed++;
  const now = new Date().toISOString();
  await transaction(async (repos) => {
    if (await repos.jobs.finish(job.id, workerId, 'complete', { result: '{}', completed_at: now, updated_at: now })) await captureCredits(repos, job);
  });
}
console.log(JSON.stringify({ claimed, startedAt, endedAt: Date.now() }));
await db.close();
