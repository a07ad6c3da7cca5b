/** Operator model packs (DESIGN.md §4), filled in by issue 5. */
import type { Signal } from '../types.js';
import type { Raster } from './image-input.js';

export interface LoadedModelPack {
  name: string;
}

export async function loadModelPacks(_modelsDir: string, _taskType: string): Promise<LoadedModelPack[]> {
  return [];
}

export async function runModelPacks(_packs: LoadedModelPack[], _raster: Raster): Promise<Array<{ signal: Signal; probability: number; weight: number }>> {
  return [];
}
