/**
 * ekyc-deepfake (task type 11), for identity-verification selfie videos: temporal
 * consistency of the subject's identity and landmarks (faceswap), the face-forgery model's
 * blending score of each face crop over frames (Self-Blended Images, Shiohara & Yamasaki,
 * CVPR 2022; face-forgery.ts), presentation-attack assessment of the subject (liveness.ts),
 * the number of people in view, camera injection signs (capture-signs.ts), the sensor noise
 * of consecutive frames (frame-pairs.ts: a replayed or rendered stream loses it), the remote
 * pulse (rppg.ts), and with a `reference` photo (e.g. the ID document portrait) `verification` of
 * the subject against it.
 * Parameters: `maxFrames` (3..48, default 12).
 */
import { videoDeepfakeDetector } from './video-deepfake.js';

export default videoDeepfakeDetector({
  detector: { name: 'ekyc-deepfake', version: '0.3.0' },
  identityFlow: true,
  defaultFrames: 12,
});
