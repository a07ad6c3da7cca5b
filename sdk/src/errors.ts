/**
 * Errors of the mediaproof SDK: one class per error code of the job API (SPEC.md §7.1 and
 * DESIGN.md §2) and of the media-record API (SPEC.md §7.3), all under MediaproofError.
 * Every error carries `code`, `statusCode`, `message`, and where known `jobId` and the
 * request id, so callers can log what SPEC.md §7.4 asks for.
 */

export interface ErrorContext {
  code: string;
  statusCode?: number;
  jobId?: string;
  requestId?: string;
  /** The parsed response body, when there was one. */
  body?: unknown;
}

export class MediaproofError extends Error {
  override name = 'MediaproofError';
  readonly code: string;
  readonly statusCode: number | undefined;
  readonly jobId: string | undefined;
  readonly requestId: string | undefined;
  readonly body: unknown;

  constructor(message: string, context: ErrorContext, options?: { cause?: unknown }) {
    super(message, options);
    this.code = context.code;
    this.statusCode = context.statusCode;
    this.jobId = context.jobId;
    this.requestId = context.requestId;
    this.body = context.body;
  }
}

/** The service answered with an error status. */
export class APIError extends MediaproofError {
  override name = 'APIError';
  declare readonly statusCode: number;
}

// 400
export class BadRequestError extends APIError { override name = 'BadRequestError'; }
export class InvalidTaskTypeError extends BadRequestError { override name = 'InvalidTaskTypeError'; }
export class UnsupportedMediaTypeError extends BadRequestError { override name = 'UnsupportedMediaTypeError'; }
/** A task type this server lists but has no detector for: refused before any job or charge. */
export class TaskTypeUnavailableError extends BadRequestError { override name = 'TaskTypeUnavailableError'; }
/** Finalize before every declared file arrived, or a file that differs from its declaration. */
export class UploadIncompleteError extends BadRequestError { override name = 'UploadIncompleteError'; }
export class JobAlreadyFinalizedError extends BadRequestError { override name = 'JobAlreadyFinalizedError'; }
export class ValidationError extends BadRequestError { override name = 'ValidationError'; }
// 401
export class AuthenticationError extends APIError { override name = 'AuthenticationError'; }
export class InvalidApiKeyError extends AuthenticationError { override name = 'InvalidApiKeyError'; }
/** Media-record API IAM001: client id or secret missing or wrong. */
export class InvalidClientCredentialsError extends AuthenticationError { override name = 'InvalidClientCredentialsError'; }
// 402
/** INSUFFICIENT_BALANCE on the job API, U007 on the media-record API. Never retried. */
export class InsufficientBalanceError extends APIError { override name = 'InsufficientBalanceError'; }
// 403
/** FORBIDDEN on the job API, IAM002 on the media-record API. Never retried. */
export class ForbiddenError extends APIError { override name = 'ForbiddenError'; }
/** A pre-signed upload or download URL was rejected (bad, expired or already used). */
export class UploadUrlInvalidError extends APIError { override name = 'UploadUrlInvalidError'; }
// 404
export class NotFoundError extends APIError { override name = 'NotFoundError'; }
export class JobNotFoundError extends NotFoundError { override name = 'JobNotFoundError'; }
export class ArtifactNotFoundError extends NotFoundError { override name = 'ArtifactNotFoundError'; }
// 409 / 422
export class ConflictError extends APIError { override name = 'ConflictError'; }
/** Cancel of a job that is processing or completed (409), failed or cancelled (422). */
export class JobNotCancellableError extends ConflictError { override name = 'JobNotCancellableError'; }
/** Delete of a job that is processing (409). */
export class JobProcessingError extends ConflictError { override name = 'JobProcessingError'; }
// 413
export class FileTooLargeError extends APIError { override name = 'FileTooLargeError'; }
export class PayloadTooLargeError extends APIError { override name = 'PayloadTooLargeError'; }
// 429
/** Media-record API AA001: query or mutation quota exceeded for this period. */
export class QuotaExceededError extends APIError { override name = 'QuotaExceededError'; }
// 5xx
export class InternalServerError extends APIError { override name = 'InternalServerError'; }
export class ServiceUnavailableError extends InternalServerError { override name = 'ServiceUnavailableError'; }

/** The request never got an answer (DNS, refused, reset). Retried. */
export class APIConnectionError extends MediaproofError {
  override name = 'APIConnectionError';
  constructor(message: string, context: Omit<ErrorContext, 'code'> = {}, options?: { cause?: unknown }) {
    super(message, { code: 'CONNECTION_ERROR', ...context }, options);
  }
}
/** No answer within `timeout`. Retried. */
export class APIConnectionTimeoutError extends APIConnectionError {
  override name = 'APIConnectionTimeoutError';
  constructor(message = 'Request timed out', context: Omit<ErrorContext, 'code'> = {}) {
    super(message, context);
    (this as { code: string }).code = 'TIMEOUT';
  }
}
/** The caller aborted through its AbortSignal. Never retried. */
export class APIUserAbortError extends MediaproofError {
  override name = 'APIUserAbortError';
  constructor(message = 'Request was aborted', context: Omit<ErrorContext, 'code'> = {}) {
    super(message, { code: 'ABORTED', ...context });
  }
}

/** A job that `analyze` waited for ended `failed` or `cancelled`; `job` is its last state. */
export class JobFailedError extends MediaproofError {
  override name = 'JobFailedError';
  constructor(
    message: string,
    readonly job: { jobId: string; status: string; errorMessage?: string },
  ) {
    super(message, { code: job.status === 'cancelled' ? 'JOB_CANCELLED' : 'JOB_FAILED', jobId: job.jobId });
  }
}
/** `waitFor` gave up before the job reached a terminal status. */
export class WaitTimeoutError extends MediaproofError {
  override name = 'WaitTimeoutError';
  constructor(message: string, jobId: string, readonly lastStatus: string) {
    super(message, { code: 'WAIT_TIMEOUT', jobId });
  }
}

type APIErrorClass = new (message: string, context: ErrorContext) => APIError;

const BY_CODE: Record<string, APIErrorClass> = {
  INVALID_API_KEY: InvalidApiKeyError,
  FORBIDDEN: ForbiddenError,
  INSUFFICIENT_BALANCE: InsufficientBalanceError,
  INVALID_TASK_TYPE: InvalidTaskTypeError,
  TASK_TYPE_UNAVAILABLE: TaskTypeUnavailableError,
  UNSUPPORTED_MEDIA_TYPE: UnsupportedMediaTypeError,
  JOB_NOT_FOUND: JobNotFoundError,
  UPLOAD_INCOMPLETE: UploadIncompleteError,
  JOB_ALREADY_FINALIZED: JobAlreadyFinalizedError,
  JOB_NOT_CANCELLABLE: JobNotCancellableError,
  JOB_PROCESSING: JobProcessingError,
  VALIDATION_ERROR: ValidationError,
  UPLOAD_URL_INVALID: UploadUrlInvalidError,
  FILE_TOO_LARGE: FileTooLargeError,
  PAYLOAD_TOO_LARGE: PayloadTooLargeError,
  ARTIFACT_NOT_FOUND: ArtifactNotFoundError,
  NOT_FOUND: NotFoundError,
  SERVICE_UNAVAILABLE: ServiceUnavailableError,
  INTERNAL_ERROR: InternalServerError,
  // media-record API (SPEC.md §7.3)
  IAM001: InvalidClientCredentialsError,
  IAM002: ForbiddenError,
  AA001: QuotaExceededError,
  U007: InsufficientBalanceError,
};

const BY_STATUS: Record<number, APIErrorClass> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: InsufficientBalanceError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: ConflictError,
  429: QuotaExceededError,
  503: ServiceUnavailableError,
};

/** Builds the error for an HTTP error response, by its `code` first, then by its status. */
export function errorFromResponse(status: number, body: unknown, context: { jobId?: string; requestId?: string }): APIError {
  const object = (typeof body === 'object' && body !== null ? body : {}) as { code?: unknown; message?: unknown };
  const code = typeof object.code === 'string' ? object.code : `HTTP_${status}`;
  const message = typeof object.message === 'string' ? object.message : `HTTP ${status}`;
  const ErrorClass = BY_CODE[code] ?? BY_STATUS[status] ?? (status >= 500 ? InternalServerError : APIError);
  return new ErrorClass(message, { code, statusCode: status, body, ...context });
}
