/**
 * ekyc-deepfake (task type 11), for identity-verification selfie videos: temporal
 * consistency of the subject's identity and landmarks (faceswap), the face-forgery model's
 * blending score of each face crop over frames (Self-Blended Images, Shiohara & Yamasaki,
 * CVPR 2022; face-forgery.ts), presentation-attack assessment of the subject (liveness.ts),
 * the number of people in view, camera injection signs (capture-signs.ts), the remote pulse
 * (rppg.ts), and with a `reference` photo (e.g. the ID document portrait) `verification` of
 * the subject against it.
 * Parameters: `maxFrames` (3..48, default 12).
 */
import type { Detector } from '../types.js';
import { loadFaceForgeryModel } from './face-forgery.js';
import { loadHuman } from './human-runtime.js';
import { analyseVideoDeepfake } from './video-deepfake.js';

const DETECTOR = { name: 'ekyc-deepfake', version: '0.2.0' };

const detector: Detector = {
  ...DETECTOR,
  async load() {
    await loadHuman();
    // Warms the model catalogue; a missing or altered model is reported per job, never fatal.
    await loadFaceForgeryModel(null);
  },
  analyze(input, signal) {
    return analyseVideoDeepfake(input, signal, { detector: DETECTOR, identityFlow: true, defaultFrames: 12 });
  },
};

export default detector;
