/**
 * `node --import tsx src/eval/face-verification.ts [--data ../../shared/data] [--json]`
 *
 * Measures the face-verification score distribution that sets the threshold of
 * face-intelligence (`verification.threshold`).
 *
 * Identities: every face found in the listed source images, each cropped with a margin into
 * its own identity image, plus face tiles cut from a screenshot shipped with Human (below).
 * Faces of one group (e.g. the three anti-spoof captures, whose subjects may be one person)
 * are never paired as impostors.
 * - Processed-copy genuine pairs: an identity image against a re-encoded, resized, cropped,
 *   rotated or relit copy of itself (the same photo, processed).
 * - Cross-photo genuine pairs: two different photos of one person. The only such photos
 *   available offline ship inside @vladmandic/human: its author appears in the face-ID
 *   screenshot (webcam), as the leftmost portrait of the face-detection screenshot, and in 18
 *   thumbnails of the face-match screenshot (other occasions and years; ~100 px tiles with
 *   text overlays). Identity labels are ours, by eye. Caveat: the face-match demo ranked
 *   those thumbnails by similarity with Human's own faceres descriptor, so thumbnails of him
 *   that it scored low may sit in lower rows we left unlabelled: the cross-photo TAR is
 *   optimistic about selection while the small tiles make it pessimistic about quality.
 * - Impostor pairs: every identity image against every variant of every identity of another
 *   group; the face-match screenshot's women (by eye) are impostors for its author.
 * Reports the genuine/impostor similarity statistics, TAR at FAR 1 % and 0.1 % and the EER
 * for all genuine pairs and for each kind, and the threshold each implies.
 */
import { readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { Command } from 'commander';
import { analyseFaces, cosine, type AnalysedFace } from '../detectors/face/face-analysis.js';
import { decodeImage } from '../detectors/face/image-input.js';
import { NOT_SIMILAR_BELOW, similarityFromCosine, VERIFICATION_THRESHOLD } from '../detectors/face/verification.js';
import { equalErrorRate, tarAtFar, type Scored } from './metrics.js';

/** Who a face is: its group (never paired as impostors within it) and, when known, the person. */
interface FaceLabel {
  group: string;
  person?: string;
}

interface Source {
  path: string;
  /** Labels each face found; group photos can hold people of different groups. */
  label: (face: AnalysedFace, faces: AnalysedFace[]) => FaceLabel;
}

/** A face thumbnail cut from a screenshot: already an identity image, no processed variants. */
interface Tile {
  id: string;
  image: Buffer;
  label: FaceLabel;
}

/** Human's author, seen in several different photos shipped with the package. */
const AUTHOR: FaceLabel = { group: 'human-author', person: 'human-author' };
/** Other people of Human's samples: the same woman can recur, so never paired with each other. */
const HUMAN_SAMPLES: FaceLabel = { group: 'human-samples' };

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
      sources.push({ path: join(photos, file), label: () => ({ group: `photo-${file}` }) });
    }
  }
  const antispoof = join(dataDir, 'faces', 'antispoof');
  if (existsSync(antispoof)) {
    for (const file of (await readdir(antispoof)).filter((name) => name.endsWith('.jpg')).sort()) {
      sources.push({ path: join(antispoof, file), label: () => ({ group: 'antispoof' }) });
    }
  }
  // Five portraits shipped inside @vladmandic/human: the leftmost is its author, then four women.
  const leftmost = (face: AnalysedFace, faces: AnalysedFace[]) => faces.every((other) => other.box[0] >= face.box[0]);
  sources.push({
    path: join(humanAssets, 'screenshot-facedetect.jpg'),
    label: (face, faces) => (leftmost(face, faces) ? AUTHOR : HUMAN_SAMPLES),
  });
  // The author alone, on a webcam.
  sources.push({ path: join(humanAssets, 'screenshot-faceid.jpg'), label: () => AUTHOR });
  return sources;
}

/**
 * The face-match screenshot: a grid of 6 rows × 18 face thumbnails taken from many photos,
 * sorted by similarity to its top-left face. Row 0 is all the author (by eye); of rows 1-5
 * only the women are used (the men there may be him, in sunglasses or blurred).
 */
const FACEMATCH_ROW_TOPS = [283, 395, 507, 620, 732, 845];
const FACEMATCH_ROW_HEIGHT = 106;
const FACEMATCH_COLUMNS = 18;
const FACEMATCH_WOMEN: Record<number, number[]> = {
  1: [6, 7, 9, 11, 12, 14, 17],
  2: [1, 2, 3, 7, 8, 9, 10, 11, 14, 15, 16, 17],
  3: [0, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17],
  4: [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 13, 14, 15, 16, 17],
  5: [0, 1, 2, 3, 4, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17],
};

async function faceMatchTiles(humanAssets: string): Promise<Tile[]> {
  const path = join(humanAssets, 'screenshot-facematch.jpg');
  const { width, height } = await sharp(path).metadata();
  // The grid positions and labels are those of the screenshot in @vladmandic/human 3.3.6.
  if (width !== 1920 || height !== 954) throw new Error(`${path} is ${width}x${height}, expected the 1920x954 face-match screenshot`);
  const pitch = width / FACEMATCH_COLUMNS;
  const cut = async (row: number, column: number) => {
    const left = Math.round(column * pitch);
    const tileWidth = Math.round((column + 1) * pitch) - left;
    const margin = Math.round(tileWidth / 2); // the face fills the thumbnail: the detector needs context
    return sharp(path)
      .extract({ left, top: FACEMATCH_ROW_TOPS[row]!, width: tileWidth, height: FACEMATCH_ROW_HEIGHT })
      .extend({ top: margin, bottom: margin, left: margin, right: margin, extendWith: 'copy' })
      .png()
      .toBuffer();
  };
  const tiles: Tile[] = [];
  for (let column = 0; column < FACEMATCH_COLUMNS; column++) {
    tiles.push({ id: `facematch-r0c${column}`, image: await cut(0, column), label: AUTHOR });
  }
  for (const [row, columns] of Object.entries(FACEMATCH_WOMEN)) {
    for (const column of columns) tiles.push({ id: `facematch-r${row}c${column}`, image: await cut(Number(row), column), label: HUMAN_SAMPLES });
  }
  return tiles;
}

interface Identity extends FaceLabel {
  id: string;
  /** The photo the face comes from: two faces of one photo are not a cross-photo pair. */
  photo: string;
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
      const photo = source.path.split('/').pop()!;
      identities.push({ id: `${photo}#${index}`, photo, ...source.label(face, faces), embedding, variants });
    }
  }
  for (const tile of await faceMatchTiles(humanAssets)) {
    const embedding = await embedCentralFace(tile.image);
    if (!embedding) {
      facesSkipped++;
      continue;
    }
    identities.push({ id: tile.id, photo: tile.id, ...tile.label, embedding, variants: [] });
  }

  const processedCopies: number[] = [];
  const crossPhoto: number[] = [];
  const impostor: number[] = [];
  /** The hardest impostors, named, so a mislabelled face or a look-alike can be checked by eye. */
  let hardestImpostors: Array<{ cosine: number; pair: string }> = [];
  let variantsWithoutFace = 0;
  for (const [i, identity] of identities.entries()) {
    for (const variant of identity.variants) {
      if (!variant.embedding) {
        variantsWithoutFace++;
        continue;
      }
      processedCopies.push(cosine(identity.embedding, variant.embedding));
    }
    for (const [j, other] of identities.entries()) {
      // Each unordered pair of different photos of one person once.
      if (j > i && identity.person && identity.person === other.person && identity.photo !== other.photo) {
        crossPhoto.push(cosine(identity.embedding, other.embedding));
      }
      if (other === identity || other.group === identity.group) continue;
      impostor.push(cosine(identity.embedding, other.embedding));
      if (j > i) hardestImpostors.push({ cosine: cosine(identity.embedding, other.embedding), pair: `${identity.id} / ${other.id}` });
      for (const variant of other.variants) if (variant.embedding) impostor.push(cosine(identity.embedding, variant.embedding));
    }
  }

  hardestImpostors = hardestImpostors.sort((a, b) => b.cosine - a.cosine).slice(0, 5);
  const scored = (genuine: number[]): Scored[] => [
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
  const accepted = (values: number[]) => values.filter((value) => similarityFromCosine(value) >= threshold).length / (values.length || 1);
  const rejected = (values: number[]) => values.filter((value) => similarityFromCosine(value) < NOT_SIMILAR_BELOW).length / (values.length || 1);
  const rates = (genuine: number[]) => ({
    pairs: genuine.length,
    cosine: stats(genuine),
    tarAtFar1: tarAtFar(scored(genuine), 0.01),
    tarAtFar01: tarAtFar(scored(genuine), 0.001),
    eer: equalErrorRate(scored(genuine)),
    tarAtShippedThreshold: accepted(genuine),
  });
  const all = [...processedCopies, ...crossPhoto];
  const report = {
    identities: identities.length,
    groups: new Set(identities.map((identity) => identity.group)).size,
    facesSkipped,
    variantsWithoutFace,
    cosineGenuine: stats(all),
    cosineImpostor: stats(impostor),
    similarityGenuine: stats(all.map(similarityFromCosine)),
    similarityImpostor: stats(impostor.map(similarityFromCosine)),
    tarAtFar1: tarAtFar(scored(all), 0.01),
    tarAtFar01: tarAtFar(scored(all), 0.001),
    eer: equalErrorRate(scored(all)),
    atShippedThreshold: { threshold, tar: accepted(all), far: accepted(impostor) },
    // Under NOT_SIMILAR_BELOW the answer is "someone else"; between the two, undecided.
    belowNotSimilar: { notSimilarBelow: NOT_SIMILAR_BELOW, genuine: rejected(all), impostor: rejected(impostor) },
    hardestImpostors,
    byGenuineKind: { processedCopies: rates(processedCopies), crossPhoto: rates(crossPhoto) },
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
