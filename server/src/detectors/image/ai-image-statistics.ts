/**
 * Statistical pixel signals for ai-image-detection and their fusion (filled in by issue 5).
 */
import type { Signal } from '../types.js';
import type { LoadedImage, Raster } from './image-input.js';
import type { MetadataEvidence } from './generator-metadata.js';

export interface StatisticalSignals {
  signals: Signal[];
}

export async function computeStatisticalSignals(_image: LoadedImage, _raster: Raster, _metadata: MetadataEvidence, _signal: AbortSignal): Promise<StatisticalSignals> {
  return { signals: [] };
}

/** Without fitted statistical signals the score stays at 0.5 and always reads inconclusive. */
export function fuseStatistical(statistics: StatisticalSignals): { score: number; signals: Signal[]; inconclusiveMargin: number } {
  return { score: 0.5, signals: statistics.signals, inconclusiveMargin: 0.5 };
}
