/**
 * Provenance evidence for ai-image-detection: what the file says about its own origin
 * (C2PA manifest, IPTC source type, generator parameters, stealth PNG info, camera EXIF),
 * turned into signals. Declared AI origin decides on its own; camera EXIF only leans.
 */
import type { Signal } from '../types.js';
import { AI_SOURCE_TYPES, CAPTURE_SOURCE_TYPES, sourceTypeName, type C2paEvidence } from './c2pa.js';
import { isCameraOrigin, type MetadataEvidence } from './generator-metadata.js';
import type { StealthInfo } from './stealth-pnginfo.js';

export interface ProvenanceAssessment {
  signals: Signal[];
  /** Set when provenance alone decides the answer (declared AI origin, signed capture). */
  decisive: { score: number; confidence: number; reason: string } | null;
  generator: string | null;
  /** Camera EXIF present and no AI evidence: a lean towards authentic, not a decision. */
  cameraOrigin: boolean;
}

const isAiType = (uri: string) => AI_SOURCE_TYPES.has(sourceTypeName(uri));
const isCaptureType = (uri: string) => CAPTURE_SOURCE_TYPES.has(sourceTypeName(uri));

export function assessProvenance(c2pa: C2paEvidence, metadata: MetadataEvidence, stealth: StealthInfo | null): ProvenanceAssessment {
  const signals: Signal[] = [];
  const decisions: Array<{ score: number; confidence: number; reason: string; generator?: string }> = [];

  // C2PA: a signed claim. Valid = the bytes still match what was signed (the test and
  // vendor certificates are usually not on our trust list, which is reported, not fatal).
  if (c2pa.status === 'present') {
    const intact = c2pa.validationState === 'Valid' || c2pa.validationState === 'Trusted';
    const aiTypes = c2pa.sourceTypes.filter(isAiType);
    const aiIngredients = c2pa.ingredientSourceTypes.filter(isAiType);
    const captureTypes = c2pa.sourceTypes.filter(isCaptureType);
    const created = c2pa.actions.find((action) => action.action === 'c2pa.created' && action.digitalSourceType && isAiType(action.digitalSourceType));
    const generator = created?.softwareAgent ?? c2pa.claimGenerator;
    let score: number | null = null;
    if (aiTypes.length > 0) {
      score = intact ? 0.99 : 0.9;
      decisions.push({
        score,
        confidence: intact ? (c2pa.signerTrusted ? 0.99 : 0.95) : 0.75,
        reason: intact ? 'signed C2PA manifest declares AI-generated content' : 'C2PA manifest declares AI-generated content, but the file changed after signing',
        ...(generator && { generator }),
      });
    } else if (aiIngredients.length > 0) {
      score = intact ? 0.9 : 0.8;
      decisions.push({ score, confidence: intact ? 0.85 : 0.7, reason: 'a C2PA ingredient was AI-generated (composite)', ...(generator && { generator }) });
    } else if (captureTypes.length > 0 && intact) {
      // A capture claim decides only under a signer the operator trusts: anyone with openssl can
      // sign "digitalCapture" onto a generated file, whereas nobody forges an AI declaration.
      score = c2pa.signerTrusted ? 0.03 : 0.1;
      if (c2pa.signerTrusted) decisions.push({ score, confidence: 0.95, reason: 'C2PA manifest signed under a trusted anchor declares a digital capture' });
    }
    const untrustedCapture = score !== null && captureTypes.length > 0 && aiTypes.length === 0 && aiIngredients.length === 0 && !c2pa.signerTrusted;
    signals.push({
      id: 'c2pa',
      label: 'C2PA content credentials',
      score,
      weight: score === null || untrustedCapture ? 0 : 1,
      evidence: {
        validationState: c2pa.validationState,
        signerTrusted: c2pa.signerTrusted,
        failures: c2pa.failures,
        claimGenerator: c2pa.claimGenerator,
        signatureIssuer: c2pa.signatureIssuer,
        actions: c2pa.actions,
        digitalSourceTypes: c2pa.sourceTypes,
        ingredientSourceTypes: c2pa.ingredientSourceTypes,
        note:
          untrustedCapture
            ? 'the manifest declares a digital capture, but its signer is not under a trust anchor (C2PA_TRUST_ANCHORS): anyone can sign such a claim, so it is reported, not weighed'
            : score !== null
            ? undefined
            : c2pa.sourceTypes.length > 0
              ? 'the declared source type is synthetic but not from a trained model (e.g. a procedural render), so it is not counted as AI-generated'
              : 'manifest present but it declares no source type: it records edits, not origin',
      },
    });
  } else if (c2pa.status === 'remote' || metadata.provenanceUrl) {
    signals.push({
      id: 'c2pa',
      label: 'C2PA content credentials',
      score: null,
      weight: 0,
      evidence: { remoteManifestUrl: c2pa.remoteUrl ?? metadata.provenanceUrl, note: 'the manifest is stored remotely; it is not fetched (offline analysis), so it is unverified' },
    });
  } else if (c2pa.status === 'error') {
    signals.push({ id: 'c2pa', label: 'C2PA content credentials', score: null, weight: 0, evidence: { error: c2pa.error, note: 'a manifest store is present but could not be validated' } });
  } else {
    signals.push({ id: 'c2pa', label: 'C2PA content credentials', score: null, weight: 0, evidence: { note: 'no C2PA manifest in the file' } });
  }

  const aiSourceTypes = metadata.sourceTypes.filter(isAiType);
  if (aiSourceTypes.length > 0) {
    decisions.push({ score: 0.97, confidence: 0.9, reason: 'IPTC digital source type declares AI-generated content' });
  }
  signals.push({
    id: 'iptc-source-type',
    label: 'IPTC/XMP digital source type',
    score: aiSourceTypes.length > 0 ? 0.97 : null,
    weight: aiSourceTypes.length > 0 ? 1 : 0,
    evidence: metadata.sourceTypes.length > 0 ? { digitalSourceTypes: metadata.sourceTypes } : { note: 'no DigitalSourceType in XMP/IPTC' },
  });

  const generatorEntry = metadata.generators[0];
  if (generatorEntry) {
    decisions.push({ score: 0.98, confidence: 0.92, reason: `generation parameters of ${generatorEntry.generator}`, generator: generatorEntry.generator });
  }
  signals.push({
    id: 'generator-metadata',
    label: 'Generator metadata (parameters, workflow, software tags)',
    score: generatorEntry ? 0.98 : null,
    weight: generatorEntry ? 1 : 0,
    evidence: metadata.generators.length > 0 ? { found: metadata.generators } : { note: 'no generator parameters or generator software tag' },
  });

  if (stealth) {
    decisions.push({ score: 0.99, confidence: 0.95, reason: 'generation parameters hidden in pixel LSBs (stealth PNG info)', generator: 'Stable Diffusion web UI (AUTOMATIC1111/Forge)' });
    signals.push({
      id: 'stealth-pnginfo',
      label: 'Parameters hidden in pixel LSBs (stealth PNG info)',
      score: 0.99,
      weight: 1,
      evidence: { signature: stealth.signature, excerpt: stealth.text.slice(0, 200) },
    });
  }

  const hasAiEvidence = decisions.some((decision) => decision.score >= 0.5);
  const cameraOrigin = isCameraOrigin(metadata.camera) && !hasAiEvidence;
  signals.push({
    id: 'camera-exif',
    label: 'Camera-origin EXIF',
    score: isCameraOrigin(metadata.camera) ? 0.3 : null,
    weight: 0, // weighted by the fusion model, which sees it as a feature
    evidence: metadata.camera
      ? { ...metadata.camera, complete: isCameraOrigin(metadata.camera), note: 'cameras write these fields, generators do not; they can be copied, so this only leans' }
      : { note: 'no camera make, model or exposure settings' },
  });

  // The strongest AI claim wins over capture claims: AI markers are rarely forged onto photos.
  const ordered = [...decisions].sort((a, b) => Math.abs(b.score - 0.5) * b.confidence - Math.abs(a.score - 0.5) * a.confidence);
  const aiFirst = ordered.find((decision) => decision.score >= 0.5) ?? ordered[0] ?? null;
  const generator = decisions.find((decision) => decision.generator && decision.score >= 0.5)?.generator ?? null;
  return {
    signals,
    decisive: aiFirst ? { score: aiFirst.score, confidence: aiFirst.confidence, reason: aiFirst.reason } : null,
    generator,
    cameraOrigin,
  };
}
