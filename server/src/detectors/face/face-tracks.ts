/**
 * Links the faces found in sampled video frames into tracks, one per person: a face joins
 * the track whose identity (mean embedding) it resembles, or whose last box it overlaps
 * strongly; otherwise it starts a new track.
 */
import { cosine, l2Normalise, type AnalysedFace } from './face-analysis.js';

export interface Observation<T> {
  frame: number;
  timeSeconds: number;
  face: AnalysedFace;
  extra: T;
}

export interface FaceTrack<T> {
  id: number;
  observations: Array<Observation<T>>;
  /** L2-normalised mean embedding of the track. */
  centroid: number[];
}

/** Same person in two frames of one video: looser than verification (same light, same day). */
const SAME_TRACK_COSINE = 0.45;
/**
 * A strongly overlapping box continues the track whatever the identity says, so a face
 * whose recognised identity flickers in place (a frame-by-frame swap) stays one track and
 * the faceswap check can see the flicker.
 */
const SAME_PLACE_IOU = 0.5;

export function iou(a: readonly number[], b: readonly number[]): number {
  const x1 = Math.max(a[0]!, b[0]!);
  const y1 = Math.max(a[1]!, b[1]!);
  const x2 = Math.min(a[0]! + a[2]!, b[0]! + b[2]!);
  const y2 = Math.min(a[1]! + a[3]!, b[1]! + b[3]!);
  const intersection = Math.max(0, x2 - x1) * Math.max(0, y2 - y1);
  const union = a[2]! * a[3]! + b[2]! * b[3]! - intersection;
  return union > 0 ? intersection / union : 0;
}

function meanEmbedding(vectors: number[][]): number[] {
  const sum = new Array<number>(vectors[0]!.length).fill(0);
  for (const vector of vectors) for (let i = 0; i < vector.length; i++) sum[i]! += vector[i]!;
  return l2Normalise(sum);
}

export function buildTracks<T>(
  frames: Array<{ timeSeconds: number; faces: Array<{ face: AnalysedFace; extra: T }> }>,
): Array<FaceTrack<T>> {
  const tracks: Array<FaceTrack<T>> = [];
  frames.forEach(({ timeSeconds, faces }, frame) => {
    const taken = new Set<number>();
    for (const { face, extra } of faces) {
      if (!face.embedding) continue;
      let best: { track: FaceTrack<T>; score: number } | null = null;
      for (const track of tracks) {
        if (taken.has(track.id)) continue;
        const similarity = cosine(track.centroid, face.embedding);
        const overlap = iou(track.observations.at(-1)!.face.box, face.box);
        const matches = similarity >= SAME_TRACK_COSINE || overlap >= SAME_PLACE_IOU;
        const score = similarity + 0.25 * overlap;
        if (matches && (!best || score > best.score)) best = { track, score };
      }
      const observation = { frame, timeSeconds, face, extra };
      if (best) {
        best.track.observations.push(observation);
        best.track.centroid = meanEmbedding(best.track.observations.map((o) => o.face.embedding!));
        taken.add(best.track.id);
      } else {
        const track = { id: tracks.length, observations: [observation], centroid: face.embedding };
        tracks.push(track);
        taken.add(track.id);
      }
    }
  });
  // Most-seen first, then largest: the subject of the video leads.
  const meanArea = (track: FaceTrack<T>) =>
    track.observations.reduce((sum, o) => sum + o.face.box[2] * o.face.box[3], 0) / track.observations.length;
  return tracks
    .sort((a, b) => b.observations.length - a.observations.length || meanArea(b) - meanArea(a))
    .map((track, index) => ({ ...track, id: index }));
}
