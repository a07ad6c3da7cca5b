/**
 * faceswap-detection (task type 4), built on the face models: per person, temporal
 * consistency of identity and landmarks across sampled frames, and the face-forgery model's
 * blending score of each face crop (Self-Blended Images, Shiohara & Yamasaki, CVPR 2022)
 * aggregated over frames (video-deepfake.ts, face-forgery.ts). `participants` lists every
 * tracked person with `fake` and `faceForgery`. Parameters: `maxFrames` (3..48, default 16).
 */
import { videoDeepfakeDetector } from './video-deepfake.js';

export default videoDeepfakeDetector({
  detector: { name: 'faceswap-temporal', version: '0.2.0' },
  identityFlow: false,
  defaultFrames: 16,
});
