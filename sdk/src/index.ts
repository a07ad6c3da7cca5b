export { Mediaproof, Mediaproof as default, DEFAULT_BASE_URL, isRetryable, retryDelay, type ClientOptions, type RequestOptions } from './client.js';
export * from './errors.js';
export * from './types.js';
export { Page, PagePromise } from './pagination.js';
export { analyze, type AnalyzeInput, type AnalyzeOptions, type AnalyzeProgress } from './analyze.js';
export type { JobCreateParams, UploadOptions, WaitForOptions } from './resources/jobs.js';
export { contentTypeFromName, fitContentType, sniffContentType, type Uploadable } from './uploadable.js';
