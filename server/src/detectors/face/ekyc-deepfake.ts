/**
 * ekyc-deepfake (task type 11), a first version for identity-verification selfie videos:
 * temporal consistency of the subject's identity and landmarks (faceswap), presentation-
 * attack assessment of the subject (liveness.ts), the number of people in view, camera
 * injection signs (capture-signs.ts), the remote pulse (rppg.ts), and with a `reference`
 * photo (e.g. the ID document portrait) `verification` of the subject against it.
 * Parameters: `maxFrames` (3..48, default 12).
 */
import type { Detector } from '../types.js';
import { loadHuman } from './human-runtime.js';
import { analyseVideoDeepfake } from './video-deepfake.js';

const DETECTOR = { name: 'ekyc-deepfake', version: '0.1.0' };

const detector: Detector = {
  ...DETECTOR,
  async load() {
    await loadHuman();
  },
  analyze(input, signal) {
    return analyseVideoDeepfake(input, signal, { detector: DETECTOR, identityFlow: true, defaultFrames: 12 });
  },
};

export default detector;
