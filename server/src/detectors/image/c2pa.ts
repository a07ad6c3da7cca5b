/**
 * C2PA content credentials (C2PA Technical Specification 2.1: §11 validation states, §18
 * actions and `digitalSourceType`) read with @contentauth/c2pa-wasm from the file's bytes.
 * Offline by design: remote manifests and OCSP are never fetched; a remote manifest reference
 * is reported as such, unverified.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { initSync, WasmReader } from '@contentauth/c2pa-wasm';

const require = createRequire(import.meta.url);
let initialised = false;
const settingsByAnchors = new Map<string, string>();

/**
 * The operator's trust anchors (`C2PA_TRUST_ANCHORS`, a PEM bundle of CA certificates): a manifest
 * signed under one of them is `Trusted` (C2PA 2.1 §14.4.1); any other signer is only `Valid`.
 * Throws a message naming the file when it cannot be read or holds no certificate.
 */
export function readTrustAnchors(path: string): string {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`C2PA_TRUST_ANCHORS: cannot read ${path}: ${(error as Error).message}`);
  }
  const certificates = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (certificates.length === 0) throw new Error(`C2PA_TRUST_ANCHORS: ${path} holds no PEM certificate`);
  for (const certificate of certificates) {
    try {
      new X509Certificate(certificate);
    } catch {
      throw new Error(`C2PA_TRUST_ANCHORS: ${path} holds a certificate that does not parse`);
    }
  }
  return certificates.join('\n');
}

/** Reader settings for a trust-anchor file (read once per thread), offline: no remote manifests, no OCSP. */
function readerSettings(trustAnchors: string | null): string {
  const key = trustAnchors ?? '';
  let settings = settingsByAnchors.get(key);
  if (settings === undefined) {
    const anchors = trustAnchors ? readTrustAnchors(trustAnchors) : null;
    settings = JSON.stringify({
      verify: { remote_manifest_fetch: false, ocsp_fetch: false, verify_trust: true },
      ...(anchors && { trust: { trust_anchors: anchors } }),
    });
    settingsByAnchors.set(key, settings);
  }
  return settings;
}

/** Compiles the wasm once per thread (called from the detector's load()). */
export function initC2pa(): void {
  if (initialised) return;
  initSync({ module: readFileSync(require.resolve('@contentauth/c2pa-wasm/c2pa.wasm')) });
  initialised = true;
}

/** IPTC digital source types (https://cv.iptc.org/newscodes/digitalsourcetype/) that mean generated content. */
export const AI_SOURCE_TYPES = new Set(['trainedAlgorithmicMedia', 'compositeWithTrainedAlgorithmicMedia']);
/** Synthetic but not from a trained model (procedural renders, gradients): reported, not counted as AI. */
export const ALGORITHMIC_SOURCE_TYPES = new Set(['algorithmicMedia', 'compositeSynthetic', 'virtualRecording']);
export const CAPTURE_SOURCE_TYPES = new Set(['digitalCapture', 'negativeFilm', 'positiveFilm', 'print']);

/** The last path segment of an IPTC source type URI (`…/trainedAlgorithmicMedia`). */
export function sourceTypeName(uri: string): string {
  return uri.trim().split('/').pop() ?? '';
}

export interface C2paAction {
  action: string;
  softwareAgent?: string;
  digitalSourceType?: string;
}

export interface C2paEvidence {
  /** present: a manifest store was read; absent: none in the file; remote: only a URL; error: unreadable. */
  status: 'present' | 'absent' | 'remote' | 'error';
  /** Validation state reported by the SDK: Invalid, Valid or Trusted. */
  validationState?: string;
  /** Failure codes (e.g. assertion.dataHash.mismatch); an untrusted test certificate is listed separately. */
  failures: string[];
  signerTrusted: boolean;
  claimGenerator?: string;
  signatureIssuer?: string;
  actions: C2paAction[];
  /** Source types found in the active manifest's actions and in its ingredients' manifests. */
  sourceTypes: string[];
  ingredientSourceTypes: string[];
  remoteUrl?: string;
  error?: string;
}

interface ManifestJson {
  claim_generator?: string;
  claim_generator_info?: Array<{ name?: string; version?: string }>;
  signature_info?: { issuer?: string };
  assertions?: Array<{ label: string; data?: { actions?: C2paAction[] } }>;
  ingredients?: Array<{ active_manifest?: string; title?: string }>;
}

interface StoreJson {
  active_manifest?: string;
  manifests?: Record<string, ManifestJson>;
  validation_state?: string;
  validation_status?: Array<{ code: string; explanation?: string }>;
}

/** C2PA 1.x names the agent in a string; 2.x actions give a generator-info object (name, version). */
function softwareAgentName(agent: unknown): string {
  if (typeof agent === 'string') return agent;
  const { name, version } = (agent ?? {}) as { name?: unknown; version?: unknown };
  if (typeof name === 'string') return typeof version === 'string' ? `${name} ${version}` : name;
  return JSON.stringify(agent);
}

function actionsOf(manifest: ManifestJson | undefined): C2paAction[] {
  const actions: C2paAction[] = [];
  for (const assertion of manifest?.assertions ?? []) {
    if (!assertion.label.startsWith('c2pa.actions')) continue;
    for (const action of assertion.data?.actions ?? []) {
      actions.push({
        action: String(action.action),
        ...(action.softwareAgent !== undefined && { softwareAgent: softwareAgentName(action.softwareAgent) }),
        ...(action.digitalSourceType && { digitalSourceType: action.digitalSourceType.trim() }),
      });
    }
  }
  return actions;
}

/** `trustAnchors`: the operator's PEM bundle (config `C2PA_TRUST_ANCHORS`); without it no signer is `Trusted`. */
export async function readC2pa(bytes: Uint8Array, mime: string, trustAnchors: string | null = null): Promise<C2paEvidence> {
  initC2pa();
  const empty: C2paEvidence = { status: 'absent', failures: [], signerTrusted: false, actions: [], sourceTypes: [], ingredientSourceTypes: [] };
  let reader: WasmReader;
  try {
    reader = await WasmReader.fromBytes(mime, bytes, readerSettings(trustAnchors));
  } catch (error) {
    const message = String(error);
    if (/JumbfNotFound|ProvenanceMissing/i.test(message)) return empty;
    const remote = /RemoteManifestUrl\("([^"]+)"\)/.exec(message);
    if (remote) return { ...empty, status: 'remote', remoteUrl: remote[1] };
    return { ...empty, status: 'error', error: message.slice(0, 300) };
  }
  try {
    const store = JSON.parse(reader.json()) as StoreJson;
    const manifests = store.manifests ?? {};
    const active = store.active_manifest ? manifests[store.active_manifest] : undefined;
    const actions = actionsOf(active);
    const ingredientSourceTypes = (active?.ingredients ?? [])
      .flatMap((ingredient) => actionsOf(ingredient.active_manifest ? manifests[ingredient.active_manifest] : undefined))
      .map((action) => action.digitalSourceType)
      .filter((type): type is string => Boolean(type));
    const statuses = store.validation_status ?? [];
    const generator =
      active?.claim_generator ??
      active?.claim_generator_info?.map((info) => [info.name, info.version].filter(Boolean).join(' ')).join(', ');
    return {
      status: 'present',
      ...(store.validation_state && { validationState: store.validation_state }),
      failures: statuses.map((s) => s.code).filter((code) => !/untrusted/i.test(code)),
      signerTrusted: store.validation_state === 'Trusted',
      ...(generator && { claimGenerator: generator }),
      ...(active?.signature_info?.issuer && { signatureIssuer: active.signature_info.issuer }),
      actions,
      sourceTypes: actions.map((action) => action.digitalSourceType).filter((type): type is string => Boolean(type)),
      ingredientSourceTypes,
    };
  } finally {
    reader.free();
  }
}
