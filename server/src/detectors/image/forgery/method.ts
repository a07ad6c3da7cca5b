/** What every forgery method returns: a suspicion map, summary features, and evidence. */
import type { BlockMap } from '../forensic-map.js';

export interface MethodResult {
  id: 'ela' | 'jpeg-ghost' | 'double-jpeg' | 'noise-level' | 'missing-noise' | 'copy-move' | 'grid-alignment' | 'learned';
  label: string;
  /** Null when the method does not apply to this image (with `skipped` saying why). */
  map: BlockMap | null;
  /** 99th percentile of the smoothed map (grid alignment: 99.5th) and fraction of cells >= 0.5: the fusion features. */
  peak: number;
  area: number;
  evidence: Record<string, unknown>;
  skipped?: string;
}

export function skippedMethod(id: MethodResult['id'], label: string, reason: string): MethodResult {
  return { id, label, map: null, peak: 0, area: 0, evidence: { note: reason }, skipped: reason };
}
