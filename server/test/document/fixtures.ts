/**
 * Test helpers: the generated document cases (src/eval/document-cases.ts) and a runner that
 * feeds bytes to the detector the way a worker does.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import detector from '../../src/detectors/document/document-intelligence.js';
import type { DetectorOutput } from '../../src/detectors/types.js';

export * from '../../src/eval/document-cases.js';

/** Writes bytes to a scratch file and runs the detector on it. */
export async function analyzeBytes(
  bytes: Uint8Array,
  fileName: string,
  parameters: Record<string, unknown> = {},
  signal = new AbortController().signal,
): Promise<DetectorOutput> {
  const dir = await mkdtemp(join(tmpdir(), 'mediaproof-doc-test-'));
  try {
    const path = join(dir, fileName);
    await writeFile(path, bytes);
    const contentType = fileName.endsWith('.pdf') ? 'application/pdf' : fileName.endsWith('.png') ? 'image/png' : 'image/jpeg';
    return await detector.analyze(
      {
        jobId: 'test',
        taskTypeSlug: 'document-intelligence',
        files: [{ slotName: 'original', contentType, fileName, sizeBytes: bytes.length, path }],
        parameters,
        workDir: dir,
        modelsDir: null,
      },
      signal,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface ResultFinding {
  type: string;
  severity: string;
  page: number | null;
  box?: { x: number; y: number; width: number; height: number };
  revision?: number;
  evidence: string;
}

export const findingsOf = (output: DetectorOutput) => output.result.findings as ResultFinding[];
