/**
 * faceswap-detection (task type 4), built on the face models: per person, temporal
 * consistency of identity and landmarks across sampled frames, and the face-forgery model's
 * blending score of each face crop (Self-Blended Images, Shiohara & Yamasaki, CVPR 2022)
 * aggregated over frames (video-deepfake.ts, face-forgery.ts). `participants` lists every
 * tracked person with `fake` and `faceForgery`. Parameters: `maxFrames` (3..48, default 16).
 */
import type { Detector } from '../types.js';
import { loadFaceForgeryModel } from './face-forgery.js';
import { loadHuman } from './human-runtime.js';
import { analyseVideoDeepfake } from './video-deepfake.js';

const DETECTOR = { name: 'faceswap-temporal', version: '0.2.0' };

const detector: Detector = {
  ...DETECTOR,
  async load() {
    await loadHuman();
    // Warms the model catalogue; a missing or altered model is reported per job, never fatal.
    await loadFaceForgeryModel(null);
  },
  analyze(input, signal) {
    return analyseVideoDeepfake(input, signal, { detector: DETECTOR, identityFlow: false, defaultFrames: 16 });
  },
};

export default detector;
