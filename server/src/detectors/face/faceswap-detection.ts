/**
 * faceswap-detection (task type 4), a first version built on the face models: per person,
 * temporal consistency of identity and landmarks across sampled frames (video-deepfake.ts).
 * `participants` lists every tracked person with `fake`. Parameters: `maxFrames` (3..48,
 * default 16).
 */
import type { Detector } from '../types.js';
import { loadHuman } from './human-runtime.js';
import { analyseVideoDeepfake } from './video-deepfake.js';

const DETECTOR = { name: 'faceswap-temporal', version: '0.1.0' };

const detector: Detector = {
  ...DETECTOR,
  async load() {
    await loadHuman();
  },
  analyze(input, signal) {
    return analyseVideoDeepfake(input, signal, { detector: DETECTOR, identityFlow: false, defaultFrames: 16 });
  },
};

export default detector;
