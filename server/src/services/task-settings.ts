import type { Config } from '../config.js';
import type { TaskType } from '../detectors/catalogue.js';

export interface TaskSettings {
  maxFileBytes: number;
  timeoutSeconds: number;
  basePrice: number;
  pricePerMiB: number;
}

/** The catalogue's defaults for a task type with the operator's TASK_OVERRIDES applied. */
export function taskSettings(config: Pick<Config, 'taskOverrides'>, taskType: TaskType): TaskSettings {
  const override = config.taskOverrides[taskType.slug] ?? {};
  return {
    maxFileBytes: override.maxFileBytes ?? taskType.maxFileBytes,
    timeoutSeconds: override.timeoutSeconds ?? taskType.timeoutSeconds,
    basePrice: override.basePrice ?? taskType.price.base,
    pricePerMiB: override.pricePerMiB ?? taskType.price.perMiB,
  };
}

const MiB = 1024 * 1024;

/** DESIGN.md §5: base price + price per started MiB of all inputs together. */
export function jobCost(settings: TaskSettings, totalBytes: number): number {
  return settings.basePrice + settings.pricePerMiB * Math.ceil(totalBytes / MiB);
}
