/**
 * `node --import tsx src/eval/image-provenance.ts <folder>`: per-file ai-image-detection
 * results for a folder without labels (e.g. the C2PA conformance samples): verdict, score,
 * basis, generator and the C2PA signal's evidence, one line each (errors included).
 */
import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import detector, { analyzeAiImage } from '../detectors/image/ai-image.js';

async function main() {
  const folder = resolve(process.argv[2] ?? '.');
  await detector.load();
  const files = (await readdir(folder)).filter((file) => /\.(jpe?g|png)$/i.test(file)).sort();
  const skipped = (await readdir(folder)).filter((file) => !/\.(jpe?g|png|csv)$/i.test(file));
  for (const file of files) {
    try {
      const result = await analyzeAiImage(join(folder, file), null, new AbortController().signal);
      const c2pa = result.analysisDetails.signals.find((s) => s.id === 'c2pa')?.evidence as Record<string, unknown>;
      const c2paText = c2pa.validationState
        ? `c2pa ${String(c2pa.validationState)}${(c2pa.failures as string[]).length ? ` failures=${(c2pa.failures as string[]).join('|')}` : ''} sourceTypes=${JSON.stringify(c2pa.digitalSourceTypes)}`
        : `c2pa: ${String(c2pa.note ?? c2pa.error ?? '')}${c2pa.remoteManifestUrl ? ` ${String(c2pa.remoteManifestUrl)}` : ''}`;
      console.log(`${file.padEnd(32)} ${result.verdict.padEnd(12)} score ${result.score.toFixed(3)} conf ${result.confidence.toFixed(2)} generator=${result.generator ?? '-'} | ${String(result.analysisDetails.basis)} | ${c2paText}`);
    } catch (error) {
      console.log(`${file.padEnd(32)} error        ${(error as Error).message}`);
    }
  }
  if (skipped.length) console.log(`not images (not applicable to task type 1): ${skipped.join(', ')}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
