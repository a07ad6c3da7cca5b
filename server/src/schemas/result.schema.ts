/**
 * The result document of each task type (DESIGN.md §3), as schemas. The catalogue names one
 * per task type; the worker checks every result against it before the job completes; the
 * OpenAPI document publishes them under components.schemas; the SDK's result types are
 * generated from them (`npm run generate:sdk`). Objects stay open (additionalProperties):
 * detectors add task-specific detail, and clients must tolerate new fields.
 */
import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

const open = { additionalProperties: true } as const;
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Probability = Type.Number({ minimum: 0, maximum: 1 });

export const VerdictSchema = Type.Union([Type.Literal('authentic'), Type.Literal('manipulated'), Type.Literal('inconclusive')], { title: 'Verdict' });

export const SignalSchema = Type.Object(
  {
    id: Type.String(),
    label: Type.String(),
    /** null when the evidence is absent (no face, no metadata): the result says so. */
    score: Nullable(Type.Number()),
    weight: Type.Number(),
    evidence: Type.Unknown(),
  },
  { ...open, title: 'Signal' },
);

export const AnalysisDetailsSchema = Type.Object(
  {
    detector: Type.Object({ name: Type.String(), version: Type.String() }, open),
    signals: Type.Array(SignalSchema),
  },
  { ...open, title: 'AnalysisDetails' },
);

/** Fields every result carries for Authenta's SDKs (services/sdk-result-fields.ts). */
const sdkFields = {
  /** The task type's model code (AC-1 … ED-1). */
  resultType: Type.String(),
  /** 100 × (1 − score), when the verdict is decided. */
  RealConfidencePercent: Type.Optional(Type.Number()),
};

/** A verdict-style task type's result: the envelope plus its boolean flag. */
function verdictResult<F extends string>(title: string, flag: F, extra: TProperties = {}) {
  return Type.Object(
    {
      score: Probability,
      confidence: Probability,
      verdict: VerdictSchema,
      [flag]: Type.Boolean(),
      analysisDetails: AnalysisDetailsSchema,
      ...sdkFields,
      ...extra,
    },
    { ...open, title },
  );
}

/** Per tracked person, as Authenta's SDKs read face-swap results (DF-1, ED-1). */
const participantFields = {
  identityPredictions: Type.Array(Type.Object({ identityId: Type.Unknown(), isDeepFake: Type.Boolean() }, open)),
  /** Per participant id: its box [x1, y1, x2, y2] per analysed frame index, class and confidence. */
  boundingBoxes: Type.Record(
    Type.String(),
    Type.Object({ boundingBox: Type.Record(Type.String(), Type.Array(Type.Number())), class: Type.String(), confidence: Nullable(Type.Number()) }, open),
  ),
};

/** 8–10 return their own payload; the envelope's fields appear only where a verdict is reached. */
const payloadEnvelope = {
  score: Type.Optional(Probability),
  confidence: Type.Optional(Probability),
  verdict: Type.Optional(VerdictSchema),
  analysisDetails: Type.Optional(
    Type.Object({ detector: Type.Object({ name: Type.String(), version: Type.String() }, open), signals: Type.Optional(Type.Array(SignalSchema)) }, open),
  ),
  ...sdkFields,
};

const FaceBox = Type.Array(Type.Number(), { description: '[x, y, width, height] in pixels' });

export const RESULT_SCHEMAS = {
  AiGeneratedResult: verdictResult('AiGeneratedResult', 'isAiGenerated'),
  DeepFakeResult: verdictResult('DeepFakeResult', 'isDeepFake', participantFields),
  ForgeryResult: verdictResult('ForgeryResult', 'isForged'),
  SpoofResult: verdictResult('SpoofResult', 'isSpoof'),
  FaceIntelligenceResult: Type.Object(
    {
      ...payloadEnvelope,
      faces: Type.Array(
        Type.Object(
          {
            box: FaceBox,
            age: Type.Optional(Nullable(Type.Number())),
            gender: Type.Optional(Nullable(Type.String())),
            emotion: Type.Optional(Nullable(Type.Object({ emotion: Type.String() }, open))),
            /** 1 − the spoof score, when liveness was assessed. */
            liveness: Type.Optional(Nullable(Type.Number())),
            spoof: Type.Optional(Nullable(Type.Object({ verdict: VerdictSchema, score: Type.Number() }, open))),
          },
          open,
        ),
      ),
      /** With a `reference` slot: true at `threshold` and above, false under `notSimilarBelow`, null (undecided, `reason`) between them or without a face. */
      verification: Type.Optional(
        Type.Object({ isSimilar: Nullable(Type.Boolean()), similarity: Nullable(Type.Number()), threshold: Type.Number(), notSimilarBelow: Type.Number(), reason: Type.Optional(Type.String()) }, open),
      ),
      isDeepFake: Nullable(Type.Boolean()),
      isSpoof: Nullable(Type.Boolean()),
      isLiveness: Nullable(Type.Boolean()),
      isSimilar: Nullable(Type.Boolean()),
      similarityScore: Nullable(Type.Number()),
    },
    { ...open, title: 'FaceIntelligenceResult' },
  ),
  FaceEmbeddingResult: Type.Object(
    {
      ...payloadEnvelope,
      faces: Type.Array(Type.Object({ box: FaceBox, embedding: Type.Array(Type.Number()), dimensions: Type.Integer(), model: Type.String() }, open)),
      faceVector: Nullable(Type.Array(Type.Number())),
      embedding: Nullable(Type.Array(Type.Number())),
    },
    { ...open, title: 'FaceEmbeddingResult' },
  ),
  AudioSplitterResult: Type.Object(
    {
      ...payloadEnvelope,
      /** Names of the two `track` artifacts. */
      tracks: Type.Object({ foreground: Type.Unknown(), background: Type.Unknown() }, open),
    },
    { ...open, title: 'AudioSplitterResult' },
  ),
} satisfies Record<string, TObject>;

export type ResultSchemaName = keyof typeof RESULT_SCHEMAS;

const compiled = new Map<ResultSchemaName, ReturnType<typeof TypeCompiler.Compile>>();

/** Where a result departs from its schema (`/path: message`), or null when it conforms. */
export function resultProblem(name: ResultSchemaName, result: unknown): string | null {
  let check = compiled.get(name);
  if (!check) compiled.set(name, (check = TypeCompiler.Compile(RESULT_SCHEMAS[name])));
  const first = check.Errors(result).First();
  return first ? `${first.path || '/'}: ${first.message}` : null;
}
