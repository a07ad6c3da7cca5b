/**
 * One error vocabulary for both APIs (SPEC.md §7.1, DESIGN.md §2, the media API's codes). A route
 * or service throws AppError(code); each API renders it: the job API as `{code, statusCode,
 * message}`, the media-record API as `{code, type, message}` with the code the seed's clients
 * know where it has its own (IAM001, IAM002, AA001, U007).
 */

type MediaType = 'UNAUTHENTICATED' | 'UNAUTHORIZED' | 'CLIENT_ERROR' | 'SERVER_ERROR';
interface ErrorEntry {
  status: number;
  /** The media-record API's code and type, where they differ from the defaults (same code, CLIENT_ERROR / SERVER_ERROR). */
  media?: { code: string; type: MediaType };
}

export const ERRORS = {
  INVALID_API_KEY: { status: 401 },
  INVALID_CLIENT_CREDENTIALS: { status: 401, media: { code: 'IAM001', type: 'UNAUTHENTICATED' } },
  FORBIDDEN: { status: 403, media: { code: 'IAM002', type: 'UNAUTHORIZED' } },
  INVALID_CREDENTIALS: { status: 401 },
  NOT_SIGNED_IN: { status: 401 },
  TOO_MANY_REQUESTS: { status: 429 },
  QUOTA_EXCEEDED: { status: 429, media: { code: 'AA001', type: 'CLIENT_ERROR' } },
  INSUFFICIENT_BALANCE: { status: 402, media: { code: 'U007', type: 'CLIENT_ERROR' } },
  INVALID_TASK_TYPE: { status: 400 },
  TASK_TYPE_UNAVAILABLE: { status: 400 },
  UNSUPPORTED_MEDIA_TYPE: { status: 400 },
  JOB_NOT_FOUND: { status: 404 },
  UPLOAD_INCOMPLETE: { status: 400 },
  JOB_ALREADY_FINALIZED: { status: 400 },
  JOB_NOT_CANCELLABLE: { status: 409 },
  JOB_PROCESSING: { status: 409 },
  MEDIA_PROCESSING: { status: 409 },
  VALIDATION_ERROR: { status: 400 },
  UPLOAD_URL_INVALID: { status: 403 },
  FILE_TOO_LARGE: { status: 413 },
  ARTIFACT_NOT_FOUND: { status: 404 },
  NOT_FOUND: { status: 404 },
  PAYLOAD_TOO_LARGE: { status: 413 },
  SERVICE_UNAVAILABLE: { status: 503 },
  INTERNAL_ERROR: { status: 500 },
} as const satisfies Record<string, ErrorEntry>;

/** Each code's HTTP status. */
export const ErrorCode = Object.fromEntries(Object.entries(ERRORS).map(([code, entry]) => [code, entry.status])) as { [K in keyof typeof ERRORS]: (typeof ERRORS)[K]['status'] };

export type ErrorCodeName = keyof typeof ErrorCode;

export class AppError extends Error {
  override name = 'AppError';
  readonly statusCode: number;

  constructor(
    readonly code: ErrorCodeName,
    message: string,
    statusCode?: number,
    /** Sent as Retry-After (quotas, rate limits). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.statusCode = statusCode ?? ErrorCode[code];
  }
}

/** The job API's error body. */
export const jobApiErrorBody = (error: AppError) => ({ code: error.code, statusCode: error.statusCode, message: error.message });

/** The media-record API's error body. */
export function mediaApiErrorBody(error: AppError): { code: string; type: MediaType; message: string } {
  const media = (ERRORS[error.code] as ErrorEntry).media;
  return { code: media?.code ?? error.code, type: media?.type ?? (error.statusCode >= 500 ? 'SERVER_ERROR' : 'CLIENT_ERROR'), message: error.message };
}

export const insufficientBalance = () =>
  new AppError(
    'INSUFFICIENT_BALANCE',
    'Insufficient credits to process this job. Top up your balance or enable pay-as-you-go billing.',
  );

export const jobNotFound = (jobId: string, statusCode?: number) =>
  new AppError('JOB_NOT_FOUND', `No job with id ${jobId}`, statusCode);
