/**
 * A completed job's result drawn for people: the verdict, then whatever evidence the result
 * carries (heatmaps over the image, face boxes, participants, audio, timelines, document
 * findings, provenance), each signal with its evidence. Sections appear by what the result
 * holds, not by task type, so a new detector's fields show without console changes.
 */
import type { Artifact, Job } from '@mediaproof/sdk';
import { ScoreBar, VerdictBadge } from '../components';
import { HeatmapOverlay } from './HeatmapOverlay';
import { FaceBoxes, type FaceRecord } from './FaceBoxes';
import { Participants, type Participant } from './Participants';
import { AudioWaveform } from './AudioWaveform';
import { SegmentTimeline, type Segment } from './SegmentTimeline';
import { DocumentFindings, type Finding } from './DocumentFindings';
import { KeyValues } from './KeyValues';
import { Signals, type SignalRecord } from './Signals';

type Result = Record<string, unknown> & { analysisDetails?: Record<string, unknown> };
const FLAGS: Record<string, string> = { isAiGenerated: 'AI-generated', isDeepFake: 'Deepfake', isForged: 'Forged', isSpoof: 'Spoof' };

const isImage = (artifact: Artifact) => artifact.contentType.startsWith('image/');
const asArray = <T,>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);
/** The EXIF orientation a result reports for its image (image forgery: `image`; documents: `imageForgery`), 1 when none. */
function storedOrientation(details: Record<string, unknown>): number {
  for (const key of ['image', 'imageForgery']) {
    const orientation = (details[key] as { orientation?: unknown } | null | undefined)?.orientation;
    if (typeof orientation === 'number') return orientation;
  }
  return 1;
}

export function ResultView({ job }: { job: Job }) {
  const result = job.result as Result;
  const details = result.analysisDetails ?? {};
  const artifacts = job.artifacts;
  const original = artifacts.find((a) => a.kind === 'input' && a.slotName === 'original');
  const reference = artifacts.find((a) => a.kind === 'input' && a.slotName === 'reference');
  const imageHeatmaps = artifacts.filter((a) => a.kind === 'heatmap' && isImage(a));
  const pageHeatmaps = imageHeatmaps.filter((a) => /^page-\d+-heatmap/.test(a.id));
  const overlayHeatmaps = imageHeatmaps.filter((a) => !pageHeatmaps.includes(a));
  const audio = artifacts.filter((a) => (a.kind === 'input' || a.kind === 'track') && a.contentType.startsWith('audio/'));
  const faces = asArray<FaceRecord>(result.faces);
  const participants = asArray<Participant>(details.participants ?? result.participants);
  const segments = asArray<Segment>(details.segments);
  const durationOf = (video: unknown) => (video && typeof (video as { durationSeconds?: unknown }).durationSeconds === 'number' ? (video as { durationSeconds: number }).durationSeconds : undefined);
  const findings = asArray<Finding>(result.findings);
  const verification = (result.verification ?? null) as Record<string, unknown> | null;
  const flag = Object.keys(FLAGS).find((key) => typeof result[key] === 'boolean');
  const provenance = Object.fromEntries(['provenance', 'generator', 'c2pa', 'signatures', 'metadata', 'revisions'].filter((key) => details[key] !== undefined && details[key] !== null).map((key) => [key, details[key]]));

  return (
    <div className="result">
      <section className="card verdict-card" aria-labelledby="verdict-title">
        <h2 id="verdict-title">Result</h2>
        {typeof result.verdict === 'string' ? (
          <div className="verdict-row">
            <VerdictBadge verdict={result.verdict} />
            {flag && <span>{FLAGS[flag]}: <strong>{result[flag] ? 'yes' : 'no'}</strong></span>}
            <span>Score <ScoreBar value={result.score as number} label="probability of the positive class" /></span>
            <span>Confidence <ScoreBar value={result.confidence as number} /></span>
          </div>
        ) : (
          <p>This task returns its own payload rather than a verdict.</p>
        )}
        {typeof result.summary === 'string' && <p>{result.summary}</p>}
        {(details.detector as { name?: string; version?: string } | undefined)?.name && (
          <p className="muted">
            Detector {(details.detector as { name: string }).name} {(details.detector as { version?: string }).version}
          </p>
        )}
      </section>

      {original && isImage(original) && overlayHeatmaps.map((heatmap) => (
        <HeatmapOverlay key={heatmap.id} image={original} heatmap={heatmap} orientation={storedOrientation(details)} />
      ))}

      {original && isImage(original) && faces.length > 0 && (
        <FaceBoxes image={original} faces={faces} title="Faces" />
      )}
      {verification && (
        <section className="card" aria-labelledby="verification-title">
          <h2 id="verification-title">Face verification</h2>
          <p>
            {verification.isSimilar === true ? 'Same person' : verification.isSimilar === false ? 'Not the same person' : 'Undecided'} · similarity{' '}
            <ScoreBar value={verification.similarity as number | null} /> (same person from {String(verification.threshold)}
            {typeof verification.notSimilarBelow === 'number' && <>, someone else under {String(verification.notSimilarBelow)}</>})
            {typeof verification.reason === 'string' && <> · {verification.reason}</>}
          </p>
          {reference && isImage(reference) && Array.isArray(verification.referenceBox) && (
            <FaceBoxes image={reference} faces={[{ box: verification.referenceBox as number[] }]} title="Reference image" />
          )}
        </section>
      )}

      {participants.length > 0 && <Participants participants={participants} artifacts={artifacts} />}

      {audio.length > 0 && (
        <section className="card" aria-labelledby="audio-title">
          <h2 id="audio-title">Audio</h2>
          {audio.map((file) => (
            <AudioWaveform key={file.id} jobId={job.jobId} file={file} segments={file.kind === 'input' ? segments : []} />
          ))}
        </section>
      )}
      {audio.length === 0 && segments.length > 0 && (
        <section className="card" aria-labelledby="timeline-title">
          <h2 id="timeline-title">Timeline</h2>
          <SegmentTimeline segments={segments} durationSeconds={durationOf(details.video)} what="sampled segments" />
        </section>
      )}

      {(findings.length > 0 || pageHeatmaps.length > 0) && (
        <DocumentFindings findings={findings} pageHeatmaps={pageHeatmaps} image={original && isImage(original) ? original : undefined} />
      )}

      {Object.keys(provenance).length > 0 && (
        <section className="card" aria-labelledby="provenance-title">
          <h2 id="provenance-title">Provenance</h2>
          <KeyValues value={provenance} />
        </section>
      )}

      {asArray<SignalRecord>(details.signals).length > 0 && <Signals signals={asArray<SignalRecord>(details.signals)} />}
    </div>
  );
}
