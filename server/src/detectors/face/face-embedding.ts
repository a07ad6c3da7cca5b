/**
 * face-embedding (task type 9): for every face of an image, its box, five landmarks and an
 * L2-normalised identity embedding (Human's faceres model, 1024 dimensions), largest face
 * first. Two embeddings whose cosine similarity (their dot product) reaches
 * VERIFICATION_THRESHOLD are taken for one person, under NOT_SIMILAR_BELOW for two, and between
 * them nothing is decided; see verification.ts.
 *
 * Parameters:
 * - `isSingleFace` (default false): report only the largest face.
 * - `multipleFaces` ("largest" | "reject", default "largest"): with `isSingleFace`, whether
 *   an image that shows more than one face fails the job instead of using the largest.
 * - `maxFaces` (1..20, default 20): report at most this many faces.
 * - `detectSmallFaces` (default false): also search 2×2 tiles of the image for faces under
 *   ~1/12 of its longer side (crowds, group photos); about five times slower.
 */
import type { Detector, DetectorInput, DetectorOutput } from '../types.js';
import { MediaError } from '../types.js';
import { EMBEDDING_MODEL, analyseFaces, type AnalysedFace } from './face-analysis.js';
import { loadHuman, MAX_FACES } from './human-runtime.js';
import { decodeImage } from './image-input.js';
import { booleanParameter, enumParameter, integerParameter, slotFile } from './parameters.js';
import { NOT_SIMILAR_BELOW, VERIFICATION_THRESHOLD } from './verification.js';

const NAME = 'face-embedding';
const VERSION = '1.0.0';
/** Below this width (pixels of the upload) identity detail is thin and embeddings drift. */
export const MIN_RELIABLE_FACE_WIDTH = 64;

export function embeddingRecord(face: AnalysedFace) {
  return {
    box: face.box,
    detectionScore: face.detectionScore,
    landmarks: face.landmarks,
    pose: face.pose,
    embedding: face.embedding,
    dimensions: face.embedding?.length ?? 0,
    model: EMBEDDING_MODEL,
    quality: face.box[2] >= MIN_RELIABLE_FACE_WIDTH ? 'good' : 'low',
  };
}

const detector: Detector = {
  name: NAME,
  version: VERSION,
  async load() {
    await loadHuman();
  },
  async analyze(input: DetectorInput, signal: AbortSignal): Promise<DetectorOutput> {
    const isSingleFace = booleanParameter(input.parameters, 'isSingleFace', false);
    const multipleFaces = enumParameter(input.parameters, 'multipleFaces', ['largest', 'reject'] as const, 'largest');
    const maxFaces = integerParameter(input.parameters, 'maxFaces', MAX_FACES, 1, MAX_FACES);
    const smallFaces = booleanParameter(input.parameters, 'detectSmallFaces', false);
    const original = slotFile(input.files, 'original');
    if (!original) throw new MediaError('the original image is missing');

    const image = await decodeImage(original.path);
    signal.throwIfAborted();
    // Emotion and anti-spoof models are not needed for embeddings: skipping them halves the time.
    const detected = (await analyseFaces(image, { emotion: false, spoof: false }, smallFaces)).filter((face) => face.embedding);
    signal.throwIfAborted();
    if (isSingleFace && multipleFaces === 'reject' && detected.length > 1) {
      throw new MediaError(`expected a single face (isSingleFace, multipleFaces=reject) but found ${detected.length}`);
    }
    const kept = detected.slice(0, isSingleFace ? 1 : maxFaces);
    return {
      result: {
        faces: kept.map(embeddingRecord),
        faceCount: kept.length,
        facesDetected: detected.length,
        model: EMBEDDING_MODEL,
        dimensions: kept[0]?.embedding?.length ?? null,
        similarity: { metric: 'cosine', threshold: VERIFICATION_THRESHOLD, notSimilarBelow: NOT_SIMILAR_BELOW },
        analysisDetails: {
          detector: { name: NAME, version: VERSION },
          signals: [],
          image: { width: image.originalWidth, height: image.originalHeight, format: image.format },
          selection: isSingleFace ? 'largest' : 'all',
          ...(detected.length === 0 ? { note: 'no face was found in the image' } : {}),
        },
      },
    };
  },
};

export default detector;
