import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assessProvenance } from '../../src/detectors/image/provenance.js';
import type { C2paEvidence } from '../../src/detectors/image/c2pa.js';
import type { MetadataEvidence } from '../../src/detectors/image/generator-metadata.js';

// The decision rules over what the C2PA SDK reports (a signed manifest cannot be built in a
// test without a certificate authority, so the SDK's parsed report is the input here).
const IPTC = 'http://cv.iptc.org/newscodes/digitalsourcetype/';
const noMetadata: MetadataEvidence = { sourceTypes: [], generators: [], camera: null, segments: [] };
const manifest = (overrides: Partial<C2paEvidence>): C2paEvidence => ({
  status: 'present', validationState: 'Valid', failures: [], signerTrusted: false, actions: [], sourceTypes: [], ingredientSourceTypes: [], ...overrides,
});

test('a valid C2PA manifest declaring trainedAlgorithmicMedia decides AI-generated and names the software agent', () => {
  const c2pa = manifest({ actions: [{ action: 'c2pa.created', softwareAgent: 'Adobe Firefly', digitalSourceType: `${IPTC}trainedAlgorithmicMedia` }], sourceTypes: [`${IPTC}trainedAlgorithmicMedia`] });
  const result = assessProvenance(c2pa, noMetadata, null);
  assert.equal(result.decisive?.score, 0.99);
  assert.equal(result.generator, 'Adobe Firefly');
});

test('an AI claim in a manifest whose hash no longer matches still counts, with less confidence', () => {
  const c2pa = manifest({ validationState: 'Invalid', failures: ['assertion.dataHash.mismatch'], sourceTypes: [`${IPTC}trainedAlgorithmicMedia`] });
  const valid = assessProvenance(manifest({ sourceTypes: [`${IPTC}trainedAlgorithmicMedia`] }), noMetadata, null);
  const invalid = assessProvenance(c2pa, noMetadata, null);
  assert.ok(invalid.decisive!.score >= 0.5 && invalid.decisive!.confidence < valid.decisive!.confidence);
});

test('a digital capture decides authentic only under a trusted signer; untrusted, a procedural (algorithmicMedia) source and an edit-only manifest decide nothing', () => {
  const trusted = assessProvenance(manifest({ validationState: 'Trusted', signerTrusted: true, sourceTypes: [`${IPTC}digitalCapture`] }), noMetadata, null);
  assert.equal(trusted.decisive!.score, 0.03);
  assert.equal(trusted.signals[0]!.weight, 1);
  // Anyone can sign "digitalCapture" onto a generated file with a certificate of their own.
  const untrusted = assessProvenance(manifest({ sourceTypes: [`${IPTC}digitalCapture`] }), noMetadata, null);
  assert.equal(untrusted.decisive, null);
  assert.equal(untrusted.signals[0]!.score, 0.1);
  assert.equal(untrusted.signals[0]!.weight, 0);
  assert.match(JSON.stringify(untrusted.signals[0]!.evidence), /not under a trust anchor/);
  // A declared AI origin needs no trust: nobody forges one onto their own camera photo.
  assert.equal(assessProvenance(manifest({ sourceTypes: [`${IPTC}trainedAlgorithmicMedia`] }), noMetadata, null).decisive!.score, 0.99);
  assert.equal(assessProvenance(manifest({ sourceTypes: [`${IPTC}algorithmicMedia`] }), noMetadata, null).decisive, null);
  assert.equal(assessProvenance(manifest({ actions: [{ action: 'c2pa.opened' }] }), noMetadata, null).decisive, null);
  const remote = assessProvenance({ ...manifest({}), status: 'remote', remoteUrl: 'https://example.org/m' }, noMetadata, null);
  assert.equal(remote.decisive, null);
  assert.match(JSON.stringify(remote.signals[0]!.evidence), /not fetched/);
});

test('AI metadata wins over camera EXIF, which alone only leans', () => {
  const camera = { make: 'Canon', model: 'EOS 80D', exposureFields: ['ExposureTime', 'FNumber', 'ISO'] };
  const both = assessProvenance(manifest({ status: 'absent' }), { ...noMetadata, camera, sourceTypes: [`${IPTC}trainedAlgorithmicMedia`] }, null);
  assert.ok(both.decisive!.score > 0.9);
  assert.equal(both.cameraOrigin, false);
  const cameraOnly = assessProvenance(manifest({ status: 'absent' }), { ...noMetadata, camera }, null);
  assert.equal(cameraOnly.decisive, null);
  assert.equal(cameraOnly.cameraOrigin, true);
});
