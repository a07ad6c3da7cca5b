/**
 * face-liveness-detection (task type 7): is the face in the photo a live person or a
 * presentation attack (printed photo, screen replay)? Every face gets its own assessment
 * (liveness.ts); the verdict of the result is that of the largest face, the subject of a
 * selfie-style capture. No face: `inconclusive` with confidence 0.
 *
 * Besides Human's models and the model-free cues, every face is scored by the two presentation-
 * attack models trained here, loaded through the one model-pack loader (an operator pack of the
 * same name replaces either): the patch model (liveness-model.ts, a patch-based CNN after
 * Y. Atoum et al., "Face Anti-Spoofing Using Patch and Depth-Based CNNs", IJCB 2017, §3.1) looks
 * at the medium's texture inside the face, the context model (liveness-context.ts) at the scene
 * around it. Without them the other evidence still answers, with its own thresholds.
 *
 * Parameters: `isSingleFace` (default false) reports only the largest face.
 */
import type { Detector, DetectorInput, DetectorOutput } from '../types.js';
import { MediaError } from '../types.js';
import { verdictResult } from '../result.js';
import { analyseFaces } from './face-analysis.js';
import { loadHuman } from './human-runtime.js';
import { decodeImage } from './image-input.js';
import { assessLiveness, loadLivenessModels } from './liveness.js';
import { booleanParameter, slotFile } from './parameters.js';

const NAME = 'face-liveness';
const VERSION = '2.0.0';

const detector: Detector = {
  name: NAME,
  version: VERSION,
  async load() {
    await loadHuman();
    await loadLivenessModels();
  },
  async analyze(input: DetectorInput, signal: AbortSignal): Promise<DetectorOutput> {
    const isSingleFace = booleanParameter(input.parameters, 'isSingleFace', false);
    const original = slotFile(input.files, 'original');
    if (!original) throw new MediaError('the original image is missing');
    const image = await decodeImage(original.path);
    signal.throwIfAborted();
    const detected = await analyseFaces(image, { emotion: false, spoof: true });
    signal.throwIfAborted();
    const faces = isSingleFace ? detected.slice(0, 1) : detected;
    const meta = { detector: { name: NAME, version: VERSION } };

    if (faces.length === 0) {
      return {
        result: verdictResult({
          flag: 'isSpoof',
          detector: meta.detector,
          score: 0.5,
          inconclusive: true,
          confidence: 0,
          signals: [{ id: 'face-detection', label: 'A face to assess', score: null, weight: 0, evidence: { facesFound: 0 } }],
          details: { faces: [], faceCount: 0, note: 'no face was found in the image, so liveness cannot be assessed' },
        }),
      };
    }

    const models = await loadLivenessModels(input.modelsDir);
    const perFace = [];
    for (const face of faces) {
      perFace.push({ box: face.box, ...(await assessLiveness(image, face, models)) });
      signal.throwIfAborted();
    }
    const primary = perFace[0]!;
    return {
      result: verdictResult({
        flag: 'isSpoof',
        detector: meta.detector,
        score: primary.score,
        inconclusive: primary.verdict === 'inconclusive',
        confidence: primary.confidence,
        threshold: primary.thresholds.spoofFrom,
        signals: primary.signals,
        details: {
          faceCount: perFace.length,
          facesDetected: detected.length,
          primaryFace: 0,
          faces: perFace,
        },
      }),
    };
  },
};

export default detector;
