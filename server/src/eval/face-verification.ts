/**
 * `node --import tsx src/eval/face-verification.ts [--data ../../shared/data] [--json]`
 *
 * Measures the face-verification score distribution that sets the threshold of
 * face-intelligence (`verification.threshold`).
 *
 * Identities: every face found in the listed source images, each cropped with a margin into
 * its own identity image. Images from one group (e.g. the three anti-spoof captures, whose
 * subjects may be one person) are never paired as impostors.
 * - Genuine pairs: an identity image against a re-encoded, resized, cropped, rotated or
 *   relit copy of itself (the same photo, processed).
 * - Impostor pairs: every identity image against every variant of every other identity.
 * Reports the genuine/impostor similarity statistics, TAR at FAR 1 % and 0.1 %, the EER and
 * the threshold each implies. Note what this measures: robustness of the embedding to image
 * processing and separation between different people, not ageing or different photos of one
 * person (no such labelled data is available here), so real-world TAR will be lower.
 */
import { readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { Command } from 'commander';
import { analyseFaces, cosine } from '../detectors/face/face-analysis.js';
import { decodeImage } from '../detectors/face/image-input.js';
import { similarityFromCosine, VERIFICATION_THRESHOLD } from '../detectors/face/verification.js';
import { equalErrorRate, tarAtFar, type Scored } from './metrics.js';

interface Source {
  group: string;
  path: string;
}

/** Processing a genuine user's photo may go through between enrolment and verification. */
const VARIANTS: Record<string, (image: Sharp, width: number, height: number) => Sharp> = {
  'jpeg-q35': (image) => image.jpeg({ quality: 35 }),
  'resize-50': (image, width) => image.resize({ width: Math.round(width / 2) }),
  'resize-35-upscaled': (image, width) => image.resize({ width: Math.round(width * 0.35) }).resize({ width }),
  'crop-tight': (image, width, height) =>
    image.extract({
      left: Math.round(width * 0.12),
      top: Math.round(height * 0.1),
      width: Math.round(width * 0.76),
      height: Math.round(height * 0.8),
    }),
  'crop-shifted': (image, width, height) =>
    image.extract({ left: 0, top: Math.round(height * 0.08), width: Math.round(width * 0.85), height: Math.round(height * 0.92) }),
  'rotate+10': (image) => image.rotate(10, { background: '#808080' }),
  'rotate-8': (image) => image.rotate(-8, { background: '#808080' }),
  darker: (image) => image.modulate({ brightness: 0.6 }),
  brighter: (image) => image.modulate({ brightness: 1.35 }).linear(1.1, 0),
  'warm-light': (image) =>
    image.recomb([
      [1.1, 0, 0],
      [0, 1, 0],
      [0, 0, 0.8],
    ]),
};

async function listSources(dataDir: string, humanAssets: string): Promise<Source[]> {
  const sources: Source[] = [];
  const photos = join(dataDir, 'ai-image', 'photos');
  if (existsSync(photos)) {
    for (const file of (await readdir(photos)).filter((name) => name.endsWith('.jpg')).sort()) {
      sources.push({ group: `photo-${file}`, path: join(photos, file) });
    }
  }
  const antispoof = join(dataDir, 'faces', 'antispoof');
  if (existsSync(antispoof)) {
    for (const file of (await readdir(antispoof)).filter((name) => name.endsWith('.jpg')).sort()) {
      sources.push({ group: 'antispoof', path: join(antispoof, file) });
    }
  }
  // Five different people, shipped inside @vladmandic/human.
  sources.push({ group: 'human-facedetect', path: join(humanAssets, 'screenshot-facedetect.jpg') });
  return sources;
}

interface Identity {
  id: string;
  group: string;
  crop: Buffer;
  embedding: number[];
  variants: Array<{ name: string; embedding: number[] | null }>;
}

/** The face nearest the centre of an identity image (crops of group photos hold neighbours). */
async function embedCentralFace(bytes: Buffer): Promise<number[] | null> {
  const image = await decodeImage(bytes);
  const faces = await analyseFaces(image, { emotion: false, spoof: false });
  const offCentre = (box: [number, number, number, number]) =>
    Math.hypot(box[0] + box[2] / 2 - image.originalWidth / 2, box[1] + box[3] / 2 - image.originalHeight / 2);
  const central = [...faces].sort((a, b) => offCentre(a.box) - offCentre(b.box))[0];
  return central?.embedding ?? null;
}

async function main() {
  const options = new Command()
    .option('--data <folder>', 'the shared data folder', '../../shared/data')
    .option('--json', 'print one JSON object')
    .parse()
    .opts<{ data: string; json?: boolean }>();
  const { createRequire } = await import('node:module');
  const humanAssets = join(createRequire(import.meta.url).resolve('@vladmandic/human'), '..', '..', 'assets');
  const sources = await listSources(resolve(options.data), humanAssets);

  const identities: Identity[] = [];
  let facesSkipped = 0;
  for (const source of sources) {
    const image = await decodeImage(source.path);
    const faces = await analyseFaces(image, { emotion: false, spoof: false });
    for (const [index, face] of faces.entries()) {
      const [x, y, w, h] = face.box;
      if (w < 64) {
        facesSkipped++;
        continue;
      }
      // The face with a margin of 60 % of its size, so crops and rotations keep it whole.
      const left = Math.max(0, Math.round(x - 0.6 * w));
      const top = Math.max(0, Math.round(y - 0.6 * h));
      const width = Math.min(image.originalWidth - left, Math.round(2.2 * w));
      const height = Math.min(image.originalHeight - top, Math.round(2.2 * h));
      const crop = await sharp(source.path).rotate().extract({ left, top, width, height }).png().toBuffer();
      const embedding = await embedCentralFace(crop);
      if (!embedding) {
        facesSkipped++;
        continue;
      }
      const variants: Identity['variants'] = [];
      for (const [name, transform] of Object.entries(VARIANTS)) {
        const variant = await transform(sharp(crop), width, height).toBuffer();
        variants.push({ name, embedding: await embedCentralFace(variant) });
      }
      identities.push({ id: `${source.path.split('/').pop()}#${index}`, group: source.group, crop, embedding, variants });
    }
  }

  const genuine: number[] = [];
  const impostor: number[] = [];
  let variantsWithoutFace = 0;
  for (const identity of identities) {
    for (const variant of identity.variants) {
      if (!variant.embedding) {
        variantsWithoutFace++;
        continue;
      }
      genuine.push(cosine(identity.embedding, variant.embedding));
    }
    for (const other of identities) {
      if (other === identity || other.group === identity.group) continue;
      impostor.push(cosine(identity.embedding, other.embedding));
      for (const variant of other.variants) if (variant.embedding) impostor.push(cosine(identity.embedding, variant.embedding));
    }
  }

  const samples: Scored[] = [
    ...genuine.map((value) => ({ score: similarityFromCosine(value), label: 1 as const })),
    ...impostor.map((value) => ({ score: similarityFromCosine(value), label: 0 as const })),
  ];
  const stats = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
    return {
      n: values.length,
      min: sorted[0],
      p01: at(0.01),
      p05: at(0.05),
      median: at(0.5),
      p95: at(0.95),
      p99: at(0.99),
      max: sorted.at(-1),
    };
  };
  const threshold = VERIFICATION_THRESHOLD;
  // The one pair of different photos of one person shipped with Human: the man of the
  // face-ID screenshot and the leftmost portrait of the face-detection screenshot. Reported
  // on its own because one pair is an example, not a rate.
  const manAlone = (await analyseFaces(await decodeImage(join(humanAssets, 'screenshot-faceid.jpg')), { emotion: false, spoof: false }))[0];
  const manInRow = await analyseFaces(await decodeImage(join(humanAssets, 'screenshot-facedetect.jpg')), { emotion: false, spoof: false });
  const leftmost = [...manInRow].sort((a, b) => a.box[0] - b.box[0])[0];
  const crossPhotoExample =
    manAlone?.embedding && leftmost?.embedding ? similarityFromCosine(cosine(manAlone.embedding, leftmost.embedding)) : null;
  const report = {
    crossPhotoExample,
    identities: identities.length,
    groups: new Set(identities.map((identity) => identity.group)).size,
    facesSkipped,
    variantsWithoutFace,
    cosineGenuine: stats(genuine),
    cosineImpostor: stats(impostor),
    similarityGenuine: stats(genuine.map(similarityFromCosine)),
    similarityImpostor: stats(impostor.map(similarityFromCosine)),
    tarAtFar1: tarAtFar(samples, 0.01),
    tarAtFar01: tarAtFar(samples, 0.001),
    eer: equalErrorRate(samples),
    atShippedThreshold: {
      threshold,
      tar: genuine.filter((value) => similarityFromCosine(value) >= threshold).length / (genuine.length || 1),
      far: impostor.filter((value) => similarityFromCosine(value) >= threshold).length / (impostor.length || 1),
    },
    perVariantTar: Object.keys(VARIANTS).map((name) => {
      const similarities = identities.flatMap((identity) =>
        identity.variants
          .filter((variant) => variant.name === name && variant.embedding)
          .map((variant) => similarityFromCosine(cosine(identity.embedding, variant.embedding!))),
      );
      const accepted = similarities.filter((value) => value >= threshold).length;
      return { variant: name, pairs: similarities.length, tar: similarities.length ? accepted / similarities.length : null };
    }),
  };
  console.log(JSON.stringify(report, null, options.json ? 0 : 2));
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
