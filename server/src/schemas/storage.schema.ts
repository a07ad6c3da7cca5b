/** Request and response shapes of the local object store's signed URLs (/uploads, /downloads). */
import { Type } from '@sinclair/typebox';

export const UploadParams = Type.Object({ jobId: Type.String({ maxLength: 128 }), slotName: Type.String({ maxLength: 64 }) });
export const UploadQuery = Type.Object({ expires: Type.Optional(Type.String({ maxLength: 20 })), sig: Type.Optional(Type.String({ maxLength: 128 })) });
export const UploadReceipt = Type.Object({ jobId: Type.String(), slotName: Type.String(), sizeBytes: Type.Number(), uploadedAt: Type.String() });
export const DownloadQuery = Type.Object({ expires: Type.String({ maxLength: 20 }), ct: Type.String({ maxLength: 255 }), sig: Type.String({ maxLength: 128 }) });
