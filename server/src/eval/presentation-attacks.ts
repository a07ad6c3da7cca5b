/**
 * `npm run -s --workspace server eval:attacks -- --faces <folder of real face photos> --out <folder> [--limit 200]`
 *
 * Builds labelled presentation-attack sets for face-liveness-detection where no public attack
 * data can be had: each real photo is kept as a live sample (label 0) and re-captured twice
 * (label 1), as ISO/IEC 30107-3 names the two commonest artefact species:
 * - print: the photo on paper (reduced gamut and contrast, a warm paper tint, an amplitude-
 *   modulated halftone screen), held at a slight angle and photographed (blur, sensor noise,
 *   JPEG), after the print-attack model of Wen, Han and Jain, TIFS 2015, §III;
 * - screen replay: the photo shown on an RGB-stripe display and photographed, so the subpixel
 *   grid aliases into moiré on resampling (Patel, Han and Jain, ICB 2015), with the display's
 *   gamma, a glare gradient and sensor noise.
 * With `--held` a third attack of each identity: the print or the replay held up in front of the
 * camera inside a scene (another identity's photo, defocused, as the room behind it), with the
 * medium's own frame (a paper margin or a dark bezel), a tilt and sometimes a thumb over its
 * edge, then photographed once more: what a person holding up a photo or a tablet shows.
 * It draws from its own random stream, so the print and replay files do not change with it.
 * With `--webcam` every file, live or attack, is then photographed again by a cheap webcam: the
 * whole image scaled to 200-300 px (a face of a 640x480 frame), sensor noise, the camera's
 * sharpening and JPEG at quality 35-85; also from its own random stream, so the same identities,
 * media and splits come out as the studio set's, only captured differently.
 * Identities are split by a hash of the file name's person part into `validation/` (thresholds
 * are chosen there) and `test/` (figures are reported there), each with a labels.csv.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import sharp from 'sharp';
import { seededRandom } from '../detectors/signal/seeded-random.js';

const SIDE = 480;

interface Raw {
  data: Buffer;
  width: number;
  height: number;
}

export async function readRaw(path: string): Promise<Raw> {
  const { data, info } = await sharp(path).rotate().resize({ width: SIDE, height: SIDE, fit: 'inside' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

const clamp = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : Math.round(v));

/** Sensor noise, in place: per value `scale` × (a sum of three uniforms − 1.5), near-Gaussian with σ = scale / 2. */
function addSensorNoise(data: Buffer, scale: number, random: () => number): Buffer {
  for (let i = 0; i < data.length; i++) data[i] = clamp(data[i]! + scale * (random() + random() + random() - 1.5));
  return data;
}

/** Photographing a print or screen: a small tilt, defocus, sensor noise and the camera's JPEG. */
async function recapture(raw: Raw, random: () => number, background: [number, number, number]): Promise<Buffer> {
  const noisy = addSensorNoise(Buffer.from(raw.data), 2 + 3 * random(), random);
  return sharp(noisy, { raw: { width: raw.width, height: raw.height, channels: 3 } })
    .rotate((random() - 0.5) * 8, { background: { r: background[0], g: background[1], b: background[2] } })
    .blur(0.4 + 0.8 * random())
    .jpeg({ quality: 80 + Math.floor(10 * random()) })
    .toBuffer();
}

export async function printAttack(raw: Raw, random: () => number): Promise<Buffer> {
  return recapture(printMedium(raw, random), random, [235, 232, 220]);
}

/** The photo as the paper holds it, before the camera. */
function printMedium(raw: Raw, random: () => number): Raw {
  const out = Buffer.alloc(raw.data.length);
  const period = 3 + 2 * random(); // halftone screen, pixels per cell at this scale
  const angle = Math.PI / 4;
  const [cos, sin] = [Math.cos(angle), Math.sin(angle)];
  for (let y = 0; y < raw.height; y++) {
    for (let x = 0; x < raw.width; x++) {
      const i = (y * raw.width + x) * 3;
      const screen = Math.cos((2 * Math.PI * (x * cos + y * sin)) / period) * Math.cos((2 * Math.PI * (-x * sin + y * cos)) / period);
      const grey = (raw.data[i]! + raw.data[i + 1]! + raw.data[i + 2]!) / 3;
      for (let c = 0; c < 3; c++) {
        // Paper holds less saturation and contrast than a sensor; ink dots modulate it.
        const desaturated = grey + 0.75 * (raw.data[i + c]! - grey);
        const contrast = 30 + 0.78 * desaturated;
        const tint = [1.03, 1.0, 0.93][c]!;
        out[i + c] = clamp(contrast * tint * (1 + 0.12 * screen));
      }
    }
  }
  return { ...raw, data: out };
}

export async function screenReplay(raw: Raw, random: () => number): Promise<Buffer> {
  return recapture(await screenMedium(raw, random), random, [10, 10, 12]);
}

/** The photo as the display shows it, before the camera. */
async function screenMedium(raw: Raw, random: () => number): Promise<Raw> {
  // The display: every pixel becomes an R, G and B stripe (3x wider), then the camera samples it
  // at a scale that is not a whole number of stripes, which aliases the grid into moiré.
  const wide = Buffer.alloc(raw.data.length * 3);
  for (let y = 0; y < raw.height; y++) {
    for (let x = 0; x < raw.width; x++) {
      const i = (y * raw.width + x) * 3;
      for (let s = 0; s < 3; s++) {
        const o = (y * raw.width * 3 + x * 3 + s) * 3;
        for (let c = 0; c < 3; c++) wide[o + c] = c === s ? raw.data[i + c]! : Math.round(raw.data[i + c]! * 0.15);
      }
    }
  }
  const scale = 0.93 + 0.1 * random();
  const width = Math.round(raw.width * scale), height = Math.round(raw.height * scale);
  const { data } = await sharp(wide, { raw: { width: raw.width * 3, height: raw.height, channels: 3 } })
    .resize({ width, height, fit: 'fill', kernel: 'linear' })
    .gamma(1.0, 1.0 + 0.3 * random())
    .raw()
    .toBuffer({ resolveWithObject: true });
  // Stripes lose two thirds of the light: the display's backlight and the camera's exposure restore it.
  const glareX = random() * width, glareY = random() * height;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const glare = 40 * Math.exp(-((x - glareX) ** 2 + (y - glareY) ** 2) / (2 * (0.3 * width) ** 2));
      for (let c = 0; c < 3; c++) data[(y * width + x) * 3 + c] = clamp(data[(y * width + x) * 3 + c]! * 2.0 + glare);
    }
  }
  return { data, width, height };
}

/**
 * A print or a screen held up in a room: the medium (with a paper margin or a dark bezel) at
 * 55-85 % of the frame, tilted up to ±12°, over `room` (a corner of another photo, enlarged and
 * defocused), sometimes
 * with a thumb over its lower edge, photographed once.
 */
export async function heldUpAttack(raw: Raw, room: Raw, random: () => number): Promise<Buffer> {
  const isPrint = random() < 0.5;
  const medium = isPrint ? printMedium(raw, random) : await screenMedium(raw, random);
  const frameColour = isPrint ? { r: 238, g: 236, b: 228 } : { r: 14, g: 14, b: 16 };
  const border = Math.round(medium.width * (isPrint ? 0.03 + 0.08 * random() : 0.04 + 0.05 * random()));
  let framed = await sharp(medium.data, { raw: { width: medium.width, height: medium.height, channels: 3 } })
    .extend({ top: border, bottom: border, left: border, right: border, background: frameColour })
    .png()
    .toBuffer();
  if (random() < 0.4) {
    // A thumb over the lower edge: a skin-toned ellipse with a soft shade.
    const side = medium.width + 2 * border;
    const thumbX = Math.round(side * (0.2 + 0.6 * random()));
    const thumb = Buffer.from(
      `<svg width="${side}" height="${side}"><defs><radialGradient id="g"><stop offset="0" stop-color="rgb(224,172,140)"/><stop offset="1" stop-color="rgb(176,124,98)"/></radialGradient></defs>` +
        `<ellipse cx="${thumbX}" cy="${side}" rx="${Math.round(side * 0.07)}" ry="${Math.round(side * 0.13)}" fill="url(#g)"/></svg>`,
    );
    framed = await sharp(framed).composite([{ input: thumb }]).png().toBuffer();
  }
  const share = 0.55 + 0.3 * random();
  const target = Math.round(SIDE * share);
  const tilted = await sharp(framed)
    .resize(target, target, { fit: 'fill' })
    .ensureAlpha()
    .rotate((random() - 0.5) * 24, { background: { r: 0, g: 0, b: 0, alpha: 0 } })
    .png()
    .toBuffer({ resolveWithObject: true });
  // A corner of the other photo, enlarged and defocused: a room, not a second face.
  const quarter = { width: Math.floor(room.width / 2), height: Math.floor(room.height / 2) };
  const roomImage = await sharp(room.data, { raw: { width: room.width, height: room.height, channels: 3 } })
    .extract({ left: random() < 0.5 ? 0 : room.width - quarter.width, top: 0, ...quarter })
    .resize(SIDE, SIDE, { fit: 'cover' })
    .blur(4 + 6 * random())
    .png()
    .toBuffer();
  const left = Math.round((SIDE - tilted.info.width) * random());
  const top = Math.round((SIDE - tilted.info.height) * random());
  const { data, info } = await sharp(roomImage)
    .composite([{ input: tilted.data, left: Math.max(0, left), top: Math.max(0, top) }])
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return recapture({ data, width: info.width, height: info.height }, random, [110, 110, 110]);
}

/** A cheap webcam's capture of an image (live or medium): small, noisy, sharpened, compressed. */
export async function webcamCapture(image: Buffer, random: () => number): Promise<Buffer> {
  const side = Math.round(200 + 100 * random());
  const { data, info } = await sharp(image).resize(side, side, { fit: 'inside' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  addSensorNoise(data, 2 * (2 + 6 * random()), random); // σ 2-8
  return sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
    .sharpen({ sigma: 0.8 + 1.2 * random(), m1: 0, m2: 0.4 + 1.4 * random() })
    .jpeg({ quality: 35 + Math.floor(51 * random()) })
    .toBuffer();
}

/** The person part of an LFW-style name (`George_W_Bush_0012.jpg` → `George_W_Bush`). */
export function identityOf(file: string): string {
  return file.replace(/\.[^.]+$/, '').replace(/_\d+$/, '').toLowerCase();
}

async function main() {
  const options = new Command()
    .requiredOption('--faces <folder>', 'folder of real face photos (JPEG or PNG)')
    .requiredOption('--out <folder>', 'where validation/ and test/ are written')
    .option('--limit <n>', 'identities to use at most (one photo each)', '200')
    .option('--seed <n>', 'random seed', '1')
    .option('--held', 'also a held-up attack per identity (print or screen in a scene)')
    .option('--webcam', 'photograph every file again with a cheap webcam (small, noisy, sharpened, JPEG 35-85)')
    .parse()
    .opts<{ faces: string; out: string; limit: string; seed: string; held?: boolean; webcam?: boolean }>();
  const base = process.env.INIT_CWD ?? process.cwd();
  const facesDir = resolve(base, options.faces), outDir = resolve(base, options.out);
  const random = seededRandom(Number(options.seed));
  const heldRandom = seededRandom(Number(options.seed) + 7919);
  const webcamRandom = seededRandom(Number(options.seed) + 104729);
  const save = async (path: string, image: Buffer) => writeFile(path, options.webcam ? await webcamCapture(image, webcamRandom) : image);
  const byIdentity = new Map<string, string>();
  for (const file of (await readdir(facesDir)).filter((f) => /\.(jpe?g|png)$/i.test(f)).sort()) {
    if (!byIdentity.has(identityOf(file))) byIdentity.set(identityOf(file), file);
  }
  const chosen = [...byIdentity.entries()]
    .sort(([a], [b]) => createHash('sha1').update(a).digest('hex').localeCompare(createHash('sha1').update(b).digest('hex')))
    .slice(0, Number(options.limit));
  const labels: Record<'validation' | 'test', string[]> = { validation: ['file,label'], test: ['file,label'] };
  for (const split of ['validation', 'test'] as const) await mkdir(join(outDir, split), { recursive: true });
  for (const [identity, file] of chosen) {
    const split = createHash('sha1').update(identity).digest()[0]! % 2 === 0 ? 'validation' : 'test';
    const raw = await readRaw(join(facesDir, file));
    const stem = identity.replace(/[^a-z0-9_-]/g, '');
    const live = await sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
    await save(join(outDir, split, `live-${stem}.jpg`), live);
    await save(join(outDir, split, `print-${stem}.jpg`), await printAttack(raw, random));
    await save(join(outDir, split, `replay-${stem}.jpg`), await screenReplay(raw, random));
    labels[split].push(`live-${stem}.jpg,0`, `print-${stem}.jpg,1`, `replay-${stem}.jpg,1`);
    if (options.held) {
      // The room behind the medium: the next chosen identity's photo (never this person).
      const roomFile = chosen[(chosen.findIndex(([name]) => name === identity) + 1) % chosen.length]![1];
      await save(join(outDir, split, `held-${stem}.jpg`), await heldUpAttack(raw, await readRaw(join(facesDir, roomFile)), heldRandom));
      labels[split].push(`held-${stem}.jpg,1`);
    }
  }
  for (const split of ['validation', 'test'] as const) await writeFile(join(outDir, split, 'labels.csv'), labels[split].join('\n') + '\n');
  const perIdentity = options.held ? 4 : 3;
  console.log(
    `${chosen.length} identities: validation ${(labels.validation.length - 1) / perIdentity}, test ${(labels.test.length - 1) / perIdentity} (one live, one print, one replay${options.held ? ', one held-up' : ''} each${options.webcam ? ', webcam captures' : ''}) in ${outDir}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
