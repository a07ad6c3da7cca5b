/**
 * `node --import tsx src/eval/face-verification-lfw.ts --images <folder> [--json]`
 *
 * Face verification over many people, the measurement that chose verification.ts's two
 * thresholds. `<folder>` holds Labeled Faces in the Wild photos named `<Person>_<NNNN>.jpg`, as
 * the `images/` folder of muxspace/facial_expressions (commit 5fb9c13; Apache-2.0, the photos
 * under LFW's research terms) holds them: `git archive HEAD images | tar -x`.
 *
 * Every person with at least two photos gives a genuine pair (the first two photos by name,
 * A and B); every person's A against every other person's B is an impostor pair. People are
 * split by their index in name order: the even half chose the thresholds (the lowest similarity
 * at which at most 0.1 % of impostors pass; the highest under which at most 5 % of the same
 * person's pairs fall), the odd half measures them. Both halves are reported, with the rule's
 * thresholds recomputed from the even half, and the single threshold of 0.55 used before.
 */
import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { analyseFaces, cosine } from '../detectors/face/face-analysis.js';
import { decodeImage } from '../detectors/face/image-input.js';
import { NOT_SIMILAR_BELOW, similarityFromCosine, VERIFICATION_THRESHOLD } from '../detectors/face/verification.js';

/** Impostors passing at most this share set the "same person" threshold. */
const MAX_FALSE_ACCEPT = 0.001;
/** The same person's pairs falling under at most this share set the "someone else" threshold. */
const MAX_FALSE_REJECT = 0.05;
const PREVIOUS_THRESHOLD = 0.55;

interface Person {
  name: string;
  index: number;
  a: number[];
  b: number[];
}

interface Half {
  genuine: number[];
  impostor: Float64Array;
}

function pairs(people: Person[]): Half {
  const genuine = people.map((p) => similarityFromCosine(cosine(p.a, p.b)));
  const impostor = new Float64Array(people.length * (people.length - 1));
  let k = 0;
  for (const p of people) for (const q of people) if (q !== p) impostor[k++] = similarityFromCosine(cosine(p.a, q.b));
  return { genuine, impostor };
}

const shareAtLeast = (values: ArrayLike<number>, t: number) => {
  let n = 0;
  for (let i = 0; i < values.length; i++) if (values[i]! >= t) n++;
  return n / values.length;
};

/** Shares answered true, undecided and false at the two thresholds. */
function outcomes(values: ArrayLike<number>, same: number, different: number) {
  const same_ = shareAtLeast(values, same), different_ = 1 - shareAtLeast(values, different);
  const round = (v: number) => Math.round(v * 10_000) / 10_000;
  return { true: round(same_), undecided: round(1 - same_ - different_), false: round(different_) };
}

/** The rule's thresholds on a 0.01 grid, from one half. */
function chooseThresholds(half: Half) {
  const grid = Array.from({ length: 61 }, (_, i) => Math.round((0.3 + i * 0.01) * 100) / 100);
  const same = grid.find((t) => shareAtLeast(half.impostor, t) <= MAX_FALSE_ACCEPT) ?? null;
  const different = grid.filter((t) => 1 - shareAtLeast(half.genuine, t) <= MAX_FALSE_REJECT).at(-1) ?? null;
  return { same, different };
}

async function main() {
  const options = new Command()
    .requiredOption('--images <folder>', 'LFW photos named <Person>_<NNNN>.jpg')
    .option('--json', 'print one JSON object')
    .parse()
    .opts<{ images: string; json?: boolean }>();
  const folder = resolve(options.images);
  const photos = new Map<string, string[]>();
  for (const file of (await readdir(folder)).filter((f) => /_\d+\.jpg$/i.test(f)).sort()) {
    const name = file.replace(/_\d+\.jpg$/i, '');
    photos.set(name, [...(photos.get(name) ?? []), file]);
  }
  const names = [...photos].filter(([, files]) => files.length >= 2).map(([name]) => name).sort();
  const embed = async (file: string) => (await analyseFaces(await decodeImage(join(folder, file)), { emotion: false, spoof: false }))[0]?.embedding ?? null;
  const people: Person[] = [];
  let withoutFace = 0;
  for (const [index, name] of names.entries()) {
    const [first, second] = photos.get(name)!;
    const a = await embed(first!), b = await embed(second!);
    if (a && b) people.push({ name, index, a, b });
    else withoutFace++;
    if (!options.json && (index + 1) % 200 === 0) console.error(`${index + 1} / ${names.length} people`);
  }
  const choose = pairs(people.filter((p) => p.index % 2 === 0)), measure = pairs(people.filter((p) => p.index % 2 === 1));
  const report = (half: Half) => ({
    genuinePairs: half.genuine.length,
    impostorPairs: half.impostor.length,
    shipped: { genuine: outcomes(half.genuine, VERIFICATION_THRESHOLD, NOT_SIMILAR_BELOW), impostor: outcomes(half.impostor, VERIFICATION_THRESHOLD, NOT_SIMILAR_BELOW) },
    previousSingleThreshold: { threshold: PREVIOUS_THRESHOLD, tar: shareAtLeast(half.genuine, PREVIOUS_THRESHOLD), far: shareAtLeast(half.impostor, PREVIOUS_THRESHOLD) },
  });
  const result = {
    people: names.length,
    withoutFace,
    thresholds: { shipped: { same: VERIFICATION_THRESHOLD, different: NOT_SIMILAR_BELOW }, ruleOnChoosingHalf: chooseThresholds(choose) },
    choosingHalf: report(choose),
    measuringHalf: report(measure),
  };
  console.log(JSON.stringify(result, null, options.json ? 0 : 2));
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
