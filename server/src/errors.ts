/**
 * One error vocabulary for the job API (SPEC.md §7.1 plus DESIGN.md §2). A route or service
 * throws AppError; the error handler turns it into `{code, statusCode, message}`.
 */

export const ErrorCode = {
  INVALID_API_KEY: 401,
  FORBIDDEN: 403,
  INVALID_CREDENTIALS: 401,
  NOT_SIGNED_IN: 401,
  TOO_MANY_REQUESTS: 429,
  INSUFFICIENT_BALANCE: 402,
  INVALID_TASK_TYPE: 400,
  TASK_TYPE_UNAVAILABLE: 400,
  UNSUPPORTED_MEDIA_TYPE: 400,
  JOB_NOT_FOUND: 404,
  UPLOAD_INCOMPLETE: 400,
  JOB_ALREADY_FINALIZED: 400,
  JOB_NOT_CANCELLABLE: 409,
  JOB_PROCESSING: 409,
  VALIDATION_ERROR: 400,
  UPLOAD_URL_INVALID: 403,
  FILE_TOO_LARGE: 413,
  ARTIFACT_NOT_FOUND: 404,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;

export class AppError extends Error {
  override name = 'AppError';
  readonly statusCode: number;

  constructor(
    readonly code: ErrorCodeName,
    message: string,
    statusCode?: number,
  ) {
    super(message);
    this.statusCode = statusCode ?? ErrorCode[code];
  }
}

export const insufficientBalance = () =>
  new AppError(
    'INSUFFICIENT_BALANCE',
    'Insufficient credits to process this job. Top up your balance or enable pay-as-you-go billing.',
  );

export const jobNotFound = (jobId: string, statusCode?: number) =>
  new AppError('JOB_NOT_FOUND', `No job with id ${jobId}`, statusCode);
