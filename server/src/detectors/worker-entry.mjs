// Piscina's entry for detector threads. On Node 20 a worker thread does not reliably inherit
// tsx's module hooks from `node --import tsx`, so they are registered here explicitly before
// the TypeScript worker module is imported.
import { register } from 'tsx/esm/api';

register();
const { default: runDetector } = await import('./worker.ts');

export default runDetector;
